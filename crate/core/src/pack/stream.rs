//! The streaming packer: a tool result arriving as a byte stream (a `fetch` body in an edge
//! worker, a process's stdout) packed with memory bounded by the budget, not the stream.
//!
//! Each chunk goes through the bounded-memory [`RedactStream`] first, so nothing below ever
//! holds a secret. Of the redacted bytes the packer keeps:
//!
//! - the **head**: the first `limit` bytes;
//! - the **tail**: the last `limit` bytes, in a ring;
//! - **error lines** (the truncator's patterns: `error[E..]`, `FAILED`, `Traceback` ...)
//!   seen on the way, with their 1-based line numbers, up to a quarter of the budget, and
//!   the count of those that did not fit;
//! - the running SHA-256 of the observed (redacted) bytes, and the byte and line counts.
//!
//! At `finish` (when the exit code is known) the content is the terminal header, then the
//! head, a marker with exact counts, the error lines from the omitted middle, and the tail,
//! within the budget. A stream that fits is returned whole, exactly as [`super::pack`] would
//! return it. The full stream is not stored (that would defeat the bound), so a cut stream
//! has no `next_offset`; its hint says to narrow the command.
//!
//! `sha256_observed` covers the terminal header and the redacted output when the stream
//! fits (the packer then still holds it all). When the stream was cut, the header is known
//! only at the end, after the output was hashed, so the digest covers the redacted output
//! alone; such a record is declared clipped either way.

use std::collections::VecDeque;

use serde_json::Map;

use super::{
    builder_version, preview, Envelope, Omitted, PackError, PackOptions, Packed, Plan, Registry,
    ShapeReport, GET_MORE,
};
use crate::hash::{sha256, Sha256};
use crate::redact::{RedactStream, Redactor};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::{self, estimate_tokens, Budget, Unit};

/// Longest line examined for error patterns (a longer line is matched on its start).
const LINE_CAP: usize = 4096;

/// Packs a byte stream chunk by chunk.
#[derive(Debug)]
pub struct StreamPacker {
    tool: String,
    call_id: String,
    command: Option<String>,
    opts: PackOptions,
    limit: usize,
    redact: Option<RedactStream>,
    scratch: Vec<u8>,
    raw_bytes: u64,
    hasher: Sha256,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    /// (1-based line number, line text) of error lines, bounded by `error_cap` bytes.
    errors: Vec<(u64, String)>,
    error_bytes: usize,
    error_cap: usize,
    errors_dropped: u64,
    line: Vec<u8>,
    line_no: u64,
    total: u64,
    saw_nul: bool,
}

impl StreamPacker {
    /// A packer for the result of `tool` answering `call_id`. The budget is in bytes (the
    /// tool's `max_bytes`, or `opts.limit`).
    pub fn new(
        tool: &str,
        call_id: &str,
        command: Option<String>,
        opts: &PackOptions,
        registry: &Registry,
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
        Ok(StreamPacker {
            tool: tool.into(),
            call_id: call_id.into(),
            command,
            opts: opts.clone(),
            limit,
            redact: Some(RedactStream::new(redactor)),
            scratch: Vec::new(),
            raw_bytes: 0,
            hasher: Sha256::new(),
            head: Vec::new(),
            tail: VecDeque::new(),
            errors: Vec::new(),
            error_bytes: 0,
            error_cap: (limit / 4).max(1),
            errors_dropped: 0,
            line: Vec::new(),
            line_no: 1,
            total: 0,
            saw_nul: false,
        })
    }

    /// Bytes received so far (before redaction).
    pub fn bytes_read(&self) -> u64 {
        self.raw_bytes
    }

    /// Bytes of memory the packer holds for the content (head, tail, error lines): at most
    /// about 2.25 times the budget, whatever the stream's length.
    pub fn held_bytes(&self) -> usize {
        self.head.len() + self.tail.len() + self.error_bytes + self.line.len()
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
        if self.head.len() < self.limit {
            let take = (self.limit - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
        }
        self.saw_nul |= data.contains(&0);
        // Tail ring: the last `limit` bytes.
        if data.len() >= self.limit {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.limit..]);
        } else {
            let over = (self.tail.len() + data.len()).saturating_sub(self.limit);
            self.tail.drain(..over);
            self.tail.extend(data);
        }
        // Lines, for error capture.
        let mut rest = data;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            self.take_line_part(&rest[..nl]);
            self.end_line();
            rest = &rest[nl + 1..];
        }
        self.take_line_part(rest);
    }

    fn take_line_part(&mut self, part: &[u8]) {
        let room = LINE_CAP.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..room.min(part.len())]);
    }

    fn end_line(&mut self) {
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_end_matches('\r');
        if truncate::is_error_line(text) {
            if self.error_bytes + text.len() <= self.error_cap {
                self.error_bytes += text.len();
                self.errors.push((self.line_no, text.to_string()));
            } else {
                self.errors_dropped += 1;
            }
        }
        self.line.clear();
        self.line_no += 1;
    }

    /// Ends the stream with the command's outcome and packs it.
    pub fn finish(mut self, exit_code: Option<i64>, timed_out: bool) -> Result<Packed, PackError> {
        let mut out = Vec::new();
        let receipts = self
            .redact
            .take()
            .map(|r| r.finish(&mut out))
            .unwrap_or_default();
        self.absorb(&out);
        if !self.line.is_empty() {
            self.end_line();
        }
        let total_lines = if self.total == 0 { 0 } else { self.line_no - 1 };
        let plan = Plan {
            kind: None,
            budget: Budget::new(Unit::Bytes, self.limit),
            pageable: false,
            store_limit: Some(0),
        };
        let mut topts = truncate::Options::new(truncate::Pattern::Terminal, plan.budget);
        topts.tool = Some(self.tool.clone());
        topts.exit_code = exit_code;
        topts.timed_out = timed_out;
        topts.command = self.command.clone();
        topts.header = exit_code.is_some() || timed_out || self.command.is_some();
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
        let binary = self.saw_nul;
        let fits = !binary && header.len() as u64 + self.total <= self.limit as u64;
        let (content, observed_hash, omitted, reason, error) = if binary {
            let c = format!("{header}[binary output omitted: {} bytes]", self.raw_bytes);
            let h = self.hasher.finish();
            (c, h, self.total, ClipReason::BinaryOmitted, None)
        } else if fits {
            let body = String::from_utf8_lossy(&self.head).into_owned();
            let c = format!("{header}{body}");
            let h = sha256(c.as_bytes());
            let reason = if receipts.is_empty() {
                ClipReason::None
            } else {
                ClipReason::Redaction
            };
            (c, h, 0, reason, None)
        } else {
            let h = self.hasher.clone().finish();
            match self.assemble(&header, total_lines) {
                Some((c, omitted)) => (c, h, omitted, ClipReason::ToolResultCharLimit, None),
                None => {
                    let c = format!("{header}{}", super::TOO_LARGE);
                    if c.len() > self.limit {
                        return Err(PackError::BudgetTooSmall {
                            limit: self.limit,
                            needed: c.len(),
                        });
                    }
                    (
                        c,
                        h,
                        self.total,
                        ClipReason::ToolResultCharLimit,
                        Some("result_too_large".to_string()),
                    )
                }
            }
        };
        let truncated = !fits;
        let observed_bytes = header.len() as u64 + self.raw_bytes;
        let short = self.opts.short_hashes;
        let hex = |d: crate::hash::Digest| if short { d.short_hex() } else { d.hex() };
        let failed = exit_code.is_some_and(|c| c != 0) || timed_out;
        let span = SpanRecord {
            span_id: Some(
                self.opts
                    .span_id
                    .clone()
                    .unwrap_or_else(|| self.call_id.clone()),
            ),
            parent_id: self.opts.parent_id.clone(),
            name: Some(self.tool.clone()),
            status: Some(if failed { "error" } else { "ok" }.into()),
            observed_bytes: Some(observed_bytes),
            injected_bytes: Some(content.len() as u64),
            injected_tokens: Some(estimate_tokens(&content) as u64),
            clip_reason: Some(reason.as_str().into()),
            sha256_observed: Some(hex(observed_hash)),
            sha256_injected: Some(hex(sha256(content.as_bytes()))),
            injected_preview: Some(preview(&content)),
            prompt_builder_version: Some(builder_version(&self.opts, &plan)),
            model_context_limit_tokens: self.opts.model_context_limit_tokens,
        };
        let hint = truncated.then(|| {
            format!(
                "Output truncated: {omitted} bytes omitted and not stored (streamed). Narrow the command (filter or page it) to see more; {GET_MORE} cannot fetch a stream."
            )
        });
        Ok(Packed {
            envelope: Envelope {
                role: "tool".into(),
                tool_call_id: self.call_id.clone(),
                name: self.tool.clone(),
                content,
                truncated,
                redacted: !receipts.is_empty(),
                omitted: Omitted {
                    bytes: omitted,
                    lines: if truncated { total_lines } else { 0 },
                    ..Omitted::default()
                },
                next_offset: None,
                hint,
                outcome,
                error,
            },
            span,
            receipts,
            shape: ShapeReport::default(),
            pattern: if truncated {
                "stream_head_tail"
            } else {
                "none"
            }
            .into(),
            stored: None,
            cut: None,
        })
    }

    /// Head, marker, error lines from the middle, tail, within the budget. Returns the
    /// content and the exact count of omitted bytes (the middle, between head and tail).
    fn assemble(&self, header: &str, total_lines: u64) -> Option<(String, u64)> {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let total = self.total;
        let avail = self.limit.checked_sub(header.len())?;
        // Reserve for the marker at its widest: every number at 20 digits.
        let marker_max = marker(u64::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX).len();
        let body = avail.checked_sub(marker_max)?;
        let head_room = body * 3 / 10;
        let err_room = body / 5;
        let head = cut_head(&self.head, head_room);
        let head_lines = head.iter().filter(|&&b| b == b'\n').count() as u64;
        // Error lines strictly inside the omitted middle, in order, within their share.
        let mut errs = String::new();
        let mut shown = 0u64;
        let mut not_shown = self.errors_dropped;
        // The tail gets at least this much room, so an error line after its start is
        // shown there (never lost between the error list and the tail).
        let tail_guess = cut_tail(&tail, body - head.len() - err_room);
        let first_tail_line =
            total_lines.saturating_sub(tail_guess.iter().filter(|&&b| b == b'\n').count() as u64);
        for (n, line) in &self.errors {
            if *n <= head_lines || *n > first_tail_line {
                continue;
            }
            let entry = format!("{n}: {line}\n");
            if errs.len() + entry.len() <= err_room {
                errs.push_str(&entry);
                shown += 1;
            } else {
                not_shown += 1;
            }
        }
        let tail_room = body - head.len() - errs.len();
        let tail_part = cut_tail(&tail, tail_room);
        let kept = (head.len() + tail_part.len()) as u64;
        let omitted = total.saturating_sub(kept);
        if kept >= total {
            return None;
        }
        let tail_lines = tail_part.iter().filter(|&&b| b == b'\n').count() as u64
            + u64::from(!tail_part.is_empty() && tail_part.last() != Some(&b'\n'));
        let omitted_lines = total_lines.saturating_sub(head_lines + tail_lines);
        let mut content = String::with_capacity(self.limit);
        content.push_str(header);
        content.push_str(&String::from_utf8_lossy(head));
        content.push_str(&marker(
            omitted,
            omitted_lines,
            head_lines,
            tail_lines,
            shown,
            not_shown,
        ));
        content.push_str(&errs);
        content.push_str(&String::from_utf8_lossy(tail_part));
        (content.len() <= self.limit).then_some((content, omitted))
    }
}

fn marker(bytes: u64, lines: u64, head: u64, tail: u64, errors: u64, dropped: u64) -> String {
    let mut m = format!(
        "\n[... {bytes} bytes ({lines} lines) omitted from the middle of a streamed output; kept the first {head} and the last {tail} lines"
    );
    if errors > 0 {
        m.push_str(&format!(
            "; {errors} error lines from the omitted part follow, with their line numbers"
        ));
    }
    if dropped > 0 {
        m.push_str(&format!("; {dropped} more error lines did not fit"));
    }
    m.push_str(" ...]\n");
    m
}

/// The longest prefix of at most `room` bytes ending after a newline (else at a UTF-8
/// boundary).
fn cut_head(b: &[u8], room: usize) -> &[u8] {
    if b.len() <= room {
        return b;
    }
    let w = &b[..room];
    match w.iter().rposition(|&c| c == b'\n') {
        Some(p) => &b[..=p],
        None => {
            let mut e = room;
            while e > 0 && b[e] & 0xC0 == 0x80 {
                e -= 1;
            }
            &b[..e]
        }
    }
}

/// The longest suffix of at most `room` bytes starting after a newline (else at a UTF-8
/// boundary).
fn cut_tail(b: &[u8], room: usize) -> &[u8] {
    if b.len() <= room {
        return b;
    }
    let start = b.len() - room;
    match b[start..].iter().position(|&c| c == b'\n') {
        Some(p) if start + p + 1 < b.len() => &b[start + p + 1..],
        _ => {
            let mut s = start;
            while s < b.len() && b[s] & 0xC0 == 0x80 {
                s += 1;
            }
            &b[s..]
        }
    }
}
