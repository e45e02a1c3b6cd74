//! The streaming packer: a tool result arriving as a byte stream (a `fetch` body in an edge
//! worker, a process's stdout) packed with memory bounded by a stated cap, not the stream.
//!
//! Each chunk goes through the bounded-memory [`RedactStream`] first, so nothing below ever
//! holds a secret. The packer keeps the redacted bytes up to its cap
//! ([`PackOptions::stream_cap`], by default [`DEFAULT_STREAM_CAP`] and never more than the
//! page store holds), and the running SHA-256 and byte count of all of them.
//!
//! At `finish` (when the exit code is known):
//!
//! - a stream within the cap is packed exactly as [`super::pack`] packs the same text: whole
//!   when it fits, else cut with `next_offset` and the rest kept for `get_more` (seed 004:
//!   "Truncation without a follow-up tool trains hallucination");
//! - a stream beyond the cap cannot be paged, so its content is the short error
//!   `result too large, narrow the query` with the outcome (exit code, timeout) and the
//!   cap in the hint (seed 004: "if you cannot page, return a short error"), never a silent
//!   prefix;
//! - a stream with NUL bytes is binary and only its size is shown.
//!
//! The tool name, call id and command are redacted like the output (see [`super::Shown`]).
//! Beyond the cap, `sha256_observed` covers the redacted output alone (the header is known
//! only at the end, after the output was hashed); such a record is declared clipped.

use serde_json::Map;

use super::{
    builder_version, pack_with, preview, span_ids, too_large, Body, Envelope, Omitted, PackError,
    PackOptions, Packed, Plan, Redacted, Registry, ShapeReport, Shown, ToolResult,
    DEFAULT_STORE_BYTES,
};
use crate::hash::{sha256, Sha256};
use crate::redact::{Receipt, RedactStream, Redactor};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::{self, estimate_tokens, Budget, EstimateTokens, Unit};

/// The most redacted output a stream keeps for paging when the options do not say: the
/// module's page store holds no more than this either.
pub const DEFAULT_STREAM_CAP: usize = DEFAULT_STORE_BYTES;

/// Packs a byte stream chunk by chunk.
#[derive(Debug)]
pub struct StreamPacker {
    tool: String,
    shown: Shown,
    meta_receipts: Vec<Receipt>,
    opts: PackOptions,
    registry: Registry,
    store_limit: Option<usize>,
    cap: usize,
    redact: Option<RedactStream>,
    scratch: Vec<u8>,
    raw_bytes: u64,
    hasher: Sha256,
    /// The redacted output, while it is within the cap.
    body: Vec<u8>,
    over_cap: bool,
    total: u64,
    lines: u64,
    saw_nul: bool,
}

impl StreamPacker {
    /// A packer for the result of `tool` answering `call_id`. The budget is in bytes (the
    /// tool's `max_bytes`, or `opts.limit`). `store_limit` is the largest text the page
    /// store accepts (`None`: the caller keeps the stored text); the cap is the smaller of
    /// it and [`PackOptions::stream_cap`].
    pub fn new(
        tool: &str,
        call_id: &str,
        command: Option<String>,
        opts: &PackOptions,
        registry: &Registry,
        store_limit: Option<usize>,
    ) -> Result<StreamPacker, PackError> {
        let limit = opts.limit.unwrap_or_else(|| registry.spec(tool).max_bytes);
        if limit == 0 {
            return Err(PackError::InvalidOptions("limit must be at least 1".into()));
        }
        if opts.unit != Unit::Bytes {
            return Err(PackError::InvalidOptions(
                "a streamed result is packed to a byte budget".into(),
            ));
        }
        let redactor = Redactor::new(&opts.redact)?;
        let mut meta_receipts = Vec::new();
        let shown = Shown::new(
            tool,
            call_id,
            command.as_deref(),
            &redactor,
            &mut meta_receipts,
        );
        let cap = opts
            .stream_cap
            .unwrap_or(DEFAULT_STREAM_CAP)
            .min(store_limit.unwrap_or(usize::MAX));
        Ok(StreamPacker {
            tool: tool.into(),
            shown,
            meta_receipts,
            opts: opts.clone(),
            registry: registry.clone(),
            store_limit,
            cap,
            redact: Some(RedactStream::new(redactor)),
            scratch: Vec::new(),
            raw_bytes: 0,
            hasher: Sha256::new(),
            body: Vec::new(),
            over_cap: false,
            total: 0,
            lines: 0,
            saw_nul: false,
        })
    }

    /// Bytes received so far (before redaction).
    pub fn bytes_read(&self) -> u64 {
        self.raw_bytes
    }

    /// Bytes of memory the packer holds for the output: at most the cap, whatever the
    /// stream's length.
    pub fn held_bytes(&self) -> usize {
        self.body.len()
    }

    /// The most redacted output kept for paging; a longer stream gets the short error.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Feeds the next chunk (split anywhere, even inside a UTF-8 sequence or a secret).
    pub fn push(&mut self, chunk: &[u8]) {
        self.raw_bytes += chunk.len() as u64;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        if let Some(r) = self.redact.as_mut() {
            r.push(chunk, &mut out);
        }
        self.absorb(&out);
        self.scratch = out;
    }

    fn absorb(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.hasher.update(data);
        self.total += data.len() as u64;
        self.lines += data.iter().filter(|&&b| b == b'\n').count() as u64;
        self.saw_nul |= data.contains(&0);
        if !self.over_cap && self.body.len() + data.len() <= self.cap {
            self.body.extend_from_slice(data);
        } else if !self.over_cap {
            self.over_cap = true;
            self.body = Vec::new();
        }
    }

    /// Ends the stream with the command's outcome and packs it.
    pub fn finish(mut self, exit_code: Option<i64>, timed_out: bool) -> Result<Packed, PackError> {
        let mut out = Vec::new();
        let mut receipts = self
            .redact
            .take()
            .map(|r| r.finish(&mut out))
            .unwrap_or_default();
        self.absorb(&out);
        if !self.saw_nul && !self.over_cap {
            // Within the cap: exactly what `pack` does with the same text.
            let text = match String::from_utf8(std::mem::take(&mut self.body)) {
                Ok(t) => t,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            let result = ToolResult {
                tool: self.tool.clone(),
                call_id: self.shown.call_id.clone(),
                body: Body::Text(String::new()),
                exit_code,
                timed_out,
                command: self.shown.command.clone(),
            };
            let pre = Redacted {
                text,
                raw_len: self.raw_bytes as usize,
                receipts,
            };
            let mut packed = pack_with(
                &result,
                Some(pre),
                &self.opts,
                &self.registry,
                None,
                self.store_limit,
            )?;
            // `pack_with` redacted the tool name again (the id and command it was given
            // are already redacted, and redaction is idempotent): keep one receipt for it.
            self.meta_receipts.retain(|r| r.field_path != "tool");
            packed.receipts.extend(self.meta_receipts);
            packed.envelope.redacted = !packed.receipts.is_empty();
            return Ok(packed);
        }
        receipts.extend(std::mem::take(&mut self.meta_receipts));
        self.beyond(exit_code, timed_out, receipts)
    }

    /// A binary stream, or one beyond the cap: the size, or the short error.
    fn beyond(
        self,
        exit_code: Option<i64>,
        timed_out: bool,
        receipts: Vec<Receipt>,
    ) -> Result<Packed, PackError> {
        let limit = self
            .opts
            .limit
            .unwrap_or_else(|| self.registry.spec(&self.tool).max_bytes);
        let plan = Plan {
            kind: None,
            budget: Budget::new(Unit::Bytes, limit),
            pageable: false,
            store_limit: Some(0),
        };
        let mut topts = truncate::Options::new(truncate::Pattern::Terminal, plan.budget);
        topts.tool = Some(self.shown.tool.clone());
        topts.exit_code = exit_code;
        topts.timed_out = timed_out;
        topts.command = self.shown.command.clone();
        topts.header = exit_code.is_some() || timed_out || self.shown.command.is_some();
        let header = if topts.header {
            super::header_text(&topts)?
        } else {
            String::new()
        };
        let mut outcome = Map::new();
        if let Some(c) = exit_code {
            outcome.insert("exit_code".into(), c.into());
        }
        if timed_out {
            outcome.insert("timed_out".into(), true.into());
        }
        let mut envelope = Envelope {
            role: "tool".into(),
            tool_call_id: self.shown.call_id.clone(),
            name: self.shown.tool.clone(),
            content: String::new(),
            truncated: true,
            redacted: !receipts.is_empty(),
            omitted: Omitted {
                bytes: self.total,
                ..Omitted::default()
            },
            next_offset: None,
            hint: None,
            outcome,
            error: None,
        };
        let (reason, pattern) = if self.saw_nul {
            // The size when it fits; the header (outcomes) is never dropped to make room.
            let full = format!("{header}[binary output omitted: {} bytes]", self.raw_bytes);
            let short = format!("{header}[binary output omitted]");
            envelope.content = match [full, short].into_iter().find(|c| c.len() <= limit) {
                Some(c) => c,
                None => {
                    return Err(PackError::BudgetTooSmall {
                        limit,
                        needed: header.len() + "[binary output omitted]".len(),
                    })
                }
            };
            envelope.truncated = false;
            (ClipReason::BinaryOmitted, "binary")
        } else {
            too_large(
                &mut envelope,
                (self.total, self.lines),
                &plan,
                &EstimateTokens,
            )?;
            envelope.hint = Some(format!(
                "The streamed output ({} bytes) is larger than the {} bytes kept for {}, so it cannot be paged: narrow the command (filter it, or page it yourself).",
                self.total,
                self.cap,
                super::GET_MORE
            ));
            (ClipReason::ToolResultCharLimit, "too_large")
        };
        let content = &envelope.content;
        let short = self.opts.short_hashes;
        let hex = |d: crate::hash::Digest| if short { d.short_hex() } else { d.hex() };
        let failed = exit_code.is_some_and(|c| c != 0) || timed_out;
        let (span_id, parent_id) = span_ids(&self.opts, &self.shown);
        let span = SpanRecord {
            span_id: Some(span_id),
            parent_id,
            name: Some(self.shown.tool.clone()),
            status: Some(if failed { "error" } else { "ok" }.into()),
            observed_bytes: Some(header.len() as u64 + self.raw_bytes),
            injected_bytes: Some(content.len() as u64),
            injected_tokens: Some(estimate_tokens(content) as u64),
            clip_reason: Some(reason.as_str().into()),
            sha256_observed: Some(hex(self.hasher.finish())),
            sha256_injected: Some(hex(sha256(content.as_bytes()))),
            injected_preview: Some(preview(content)),
            prompt_builder_version: Some(builder_version(&self.opts, &plan)),
            model_context_limit_tokens: self.opts.model_context_limit_tokens,
        };
        Ok(Packed {
            envelope,
            span,
            receipts,
            shape: ShapeReport::default(),
            pattern: pattern.into(),
            stored: None,
            cut: None,
        })
    }
}
