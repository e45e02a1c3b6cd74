//! The local hash gate (seed 002): prove the tool boundary before spans leave the machine.
//!
//! The loop has four beats, and each has a function here:
//!
//! 1. **Record** each call at the tool boundary, in the seed's order: redact, canonicalise,
//!    hash, store. [`Gate`] redacts secrets (receipts in the span) and strips volatile
//!    values (timestamps, request ids, temp paths: [`volatile`]) before [`Body`]
//!    canonicalises and hashes; [`tool_span`] makes the record that leaves the machine
//!    (name, status, two hashes, two lengths), and [`write_bodies`] puts the canonical
//!    bodies in a content-addressed [`BodyStore`] (in memory, a directory in the Node CLI,
//!    or a store passed in from JS).
//! 2. **Refuse export** while any span is open or any hash lacks its body: [`export_ready`]
//!    lists every problem, not just the first.
//! 3. **Diff runs** by the multiset of (name, status, args hash, result hash):
//!    [`manifest`] and [`diff_manifests`], sorted as the seed's Python sorts tuples.
//! 5. **Generation text** that never passed through a tool gets its own fingerprint, in a
//!    file beside the manifest ([`generation_fingerprint`], [`diff_generations`]).
//! 4. **Read back** what the collector kept: [`read_back`] compares the spans sent with the
//!    spans fetched and reports every hash that went missing or changed. A missing hash is
//!    a failure, never a partial success.
//!
//! Spans read from files are [`serde_json::Value`]s rather than [`ToolSpan`]s, because the
//! gate's job is to report what is wrong with them (a missing status, a digest that is not
//! a digest) rather than to fail on the first record that does not parse.

mod export;
mod generation;
mod manifest;
mod readback;
mod record;
mod span;
mod store;
pub mod volatile;

pub use export::{export_ready, Problem, ProblemKind};
pub use generation::{
    diff_generations, generation_fingerprint, GenerationChange, GenerationDiff,
    GenerationFingerprint,
};
pub use manifest::{diff_manifests, manifest, ManifestDiff, ManifestEntry, ManifestError};
pub use readback::{read_back, ReadBack, ReadBackIssue, ReadBackIssueKind};
pub use record::{error_result, Gate, GateError, GatePolicy, Prepared, Recorded};
pub use span::{tool_span, tool_span_of_values, Body, ToolSpan};
pub use store::{body_action, write_bodies, BodyAction, BodyStore, MemoryStore, StoreError};
pub use volatile::{Stripped, VolatilePolicy};

/// Status values that close a span; anything else (or none) is an open span.
pub const TERMINAL_STATUSES: [&str; 2] = ["ok", "error"];
