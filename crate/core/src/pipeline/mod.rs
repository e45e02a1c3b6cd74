//! **Pipeline**: check traces as they are exported, between an OpenTelemetry SDK and the
//! backend that stores them.
//!
//! An OTLP/HTTP endpoint (the worker in `pkg-tests/otlp-endpoint/`, the CLI's
//! `otlp-endpoint`) receives each export request and:
//!
//! 1. [`split_export`]s it: every span is read (JSON or protobuf, [`Encoding`]) with the same
//!    readers and conventions as `toolslice check`; tool spans are held back, each as a
//!    one-span export request of its own in the encoding it came in, and everything else is
//!    forwarded at once ([`Split::passthrough`]). Model calls are measured for the join.
//! 2. Hands each trace's part ([`TraceBatch`]) to that trace's state ([`TraceState`], a
//!    Durable Object keyed by trace id in the worker, a map in Node). A tool span waits there
//!    for the next model call of its trace; when one has arrived, the trace's tool and model
//!    calls are joined and classified exactly as `toolslice check` joins and classifies a file
//!    holding them, and the tool span gets its verdict ([`Annotation`]). A tool span whose
//!    deadline passes first is annotated `incomplete`, saying why.
//! 3. [`annotate`]s the held span (five `toolslice.*` attributes appended; every other byte
//!    of the span as the exporter wrote it) and forwards it.
//!
//! The verdict is the one `toolslice check` gives on the spans of the trace received by the
//! time the tool span is decided. It can differ from a check of the complete trace only when
//! spans arrive out of order: a model call that ran between the tool span and the model call
//! that released it, exported after it.

mod export;
mod messages;
mod pieces;
mod trace;
mod transcode;
mod tree;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use export::{
    annotate, error_body, merge, split_export, split_export_for, HeldSpan, Split, TraceBatch,
};
pub use pieces::MAX_PIECE_BYTES;
pub use trace::{
    Decision, Ingested, TraceState, TraceSummary, MAX_CALLS_PER_TRACE,
    MAX_DISTINCT_MESSAGES_PER_TRACE, MAX_MESSAGES_PER_TRACE,
};
pub use transcode::json_to_protobuf;

use crate::error::Coded;

/// The two encodings of OTLP/HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// `application/json`: the protobuf JSON mapping with OTLP's rules (hex ids).
    Json,
    /// `application/x-protobuf`: `ExportTraceServiceRequest`.
    Protobuf,
}

impl Encoding {
    /// From a `Content-Type` header (parameters ignored); `None` for any other type.
    pub fn of_content_type(value: &str) -> Option<Encoding> {
        let essence = value.split(';').next().unwrap_or("").trim();
        match essence.to_ascii_lowercase().as_str() {
            "application/json" => Some(Encoding::Json),
            "application/x-protobuf" | "application/protobuf" => Some(Encoding::Protobuf),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Protobuf => "application/x-protobuf",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Json => "json",
            Encoding::Protobuf => "protobuf",
        }
    }
}

/// The attribute names written on each tool span (documented in the README).
pub const ATTR_STATUS: &str = "toolslice.status";
pub const ATTR_DETAIL: &str = "toolslice.detail";
pub const ATTR_OBSERVED: &str = "toolslice.observed_bytes";
pub const ATTR_INJECTED: &str = "toolslice.injected_bytes";
pub const ATTR_JOIN: &str = "toolslice.join";

/// The verdict on one tool span, as written on it. A field it does not know is an error
/// (the binding's strict decoder reads it from JS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotation {
    /// `silent_clip`, `incomplete`, `hash_mismatch`, `clipped`, `ok` (the check's statuses),
    /// or `skipped` for a tool span the check skips (one without a name).
    pub status: String,
    /// The check's detail items, then its notes, joined by `; `.
    pub detail: String,
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    /// `tool_call_id`, `order` or `unmatched`.
    pub join: String,
}

/// An export request that is not a well-formed OTLP request in its declared encoding: the
/// endpoint answers 400 with this message (the OTLP spec's permanent failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedExport(pub String);

impl fmt::Display for MalformedExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Coded for MalformedExport {
    fn code(&self) -> &'static str {
        "malformed_export"
    }
}
