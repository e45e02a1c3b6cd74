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
//! The tool name, call id and command are redacted like the output (see `stages::Shown`).
//! Beyond the cap, `sha256_observed` covers the redacted output alone (the header is known
//! only at the end, after the output was hashed); such a record is declared clipped.

use super::stages::{
    blank_envelope, failed, header_options, header_text, outcome_flags, pack_with, plan,
    span_record, too_large, Observed, Shown,
};
use super::{
    Body, Envelope, Omitted, PackError, PackOptions, Packed, Redacted, Registry, ShapeReport,
    ToolResult, DEFAULT_STORE_BYTES,
};
use crate::hash::Sha256;
use crate::redact::{Receipt, RedactStream, Redactor};
use crate::span::ClipReason;
use crate::truncate::{Budget, EstimateTokens, Unit};

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
    /// The byte budget of the content (the options' limit, else the tool's).
    budget: Budget,
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
        let budget = plan(tool, opts, registry, store_limit)?.budget;
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
            budget,
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
        let budget = self.budget;
        let limit = budget.limit();
        let topts = header_options(budget, &self.shown, None, exit_code, timed_out);
        let header = header_text(&topts)?;
        let mut envelope = Envelope {
            truncated: true,
            redacted: !receipts.is_empty(),
            omitted: Omitted {
                bytes: self.total,
                ..Omitted::default()
            },
            ..blank_envelope(&self.shown, &self.shown.tool)
        };
        outcome_flags(&mut envelope.outcome, exit_code, timed_out);
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
                budget,
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
        // The header is known only now, after the output was hashed: the observed hash
        // covers the redacted output alone, and the record is declared clipped.
        let observed = Observed {
            bytes: header.len() as u64 + self.raw_bytes,
            sha256: self.hasher.finish(),
            failed: failed(exit_code, timed_out),
        };
        let span = span_record(
            &self.shown,
            &self.opts,
            budget,
            observed,
            &envelope.content,
            reason,
            &EstimateTokens,
        )?;
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
