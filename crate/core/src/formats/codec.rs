//! The compact encoding of tool and model calls (and their measures) as bytes: a part read
//! by another thread ([`super::part`]), and the measures an OTLP endpoint's split sends to
//! the trace that joins them (`pipeline::export`).
//!
//! Not JSON: a model call's input re-lists every earlier tool result of its run, each with
//! its measures (two digests, a preview), which JSON spells out as text with every string
//! escaped and parses again, where here a digest is its 32 bytes and a string its length
//! and bytes. Numbers are LEB128. Every read is checked: bytes that are not a whole encoding
//! give an error ([`Damaged`]), never a panic.

use std::fmt;

use super::content::{Content, Measures, Syntax};
use super::model::{Captured, ModelCall, SpanRef, Times, ToolCall, ToolMessage};
use crate::hash::Digest;

/// The `&'static str`s an encoding names (conventions, a tool call's source), by their text.
const STATIC_NAMES: [&str; 6] = [
    "",
    "gen_ai",
    "openinference",
    "ai_sdk",
    "langfuse",
    "openai_agents",
];

/// Where bytes stop being a whole encoding: what was expected, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damaged {
    pub what: &'static str,
    pub at: usize,
}

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "its {} at byte {}", self.what, self.at)
    }
}

/// Writes an encoding; the bytes so far are its `.0`.
#[derive(Default)]
pub(crate) struct Encoder(pub Vec<u8>);

impl Encoder {
    /// LEB128.
    pub fn u64(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push(n as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }
    pub fn bool(&mut self, b: bool) {
        self.0.push(u8::from(b));
    }
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
        }
    }
    pub fn static_name(&mut self, s: &str) {
        self.u64(
            STATIC_NAMES
                .iter()
                .position(|n| *n == s)
                .unwrap_or(usize::MAX) as u64,
        );
    }
    pub fn time(&mut self, t: Option<i128>) {
        match t {
            None => self.0.push(0),
            Some(t) => {
                self.0.push(1);
                self.0.extend_from_slice(&t.to_le_bytes());
            }
        }
    }
    pub fn span_ref(&mut self, at: &SpanRef) {
        self.u64(at.entry);
        self.u64(at.seq);
        self.opt_str(at.trace_id.as_deref());
        self.opt_str(at.span_id.as_deref());
        self.opt_str(at.parent_id.as_deref());
        self.time(at.times.start);
        self.time(at.times.end);
    }
    pub fn digest(&mut self, d: &Digest) {
        self.0.extend_from_slice(d.as_bytes());
    }
    pub fn tool_call(&mut self, t: &ToolCall) {
        self.span_ref(&t.at);
        self.opt_str(t.name.as_deref());
        self.opt_str(t.call_id.as_deref());
        self.opt_str(t.status.as_deref());
        self.captured(&t.result);
        self.static_name(t.source);
    }
    pub fn model_call(&mut self, m: &ModelCall) {
        self.span_ref(&m.at);
        match &m.input {
            Ok(messages) => {
                self.u64(0);
                self.u64(messages.len() as u64);
                for x in messages {
                    self.opt_str(x.call_id.as_deref());
                    self.opt_str(x.name.as_deref());
                    self.captured(&x.content);
                    self.bool(x.trailing);
                }
            }
            Err(why) => {
                self.u64(1);
                self.str(why);
            }
        }
    }
    pub fn captured(&mut self, c: &Captured) {
        match c {
            Captured::Missing(why) => {
                self.0.push(0);
                self.str(why);
            }
            Captured::Text(c) => {
                self.0.push(1);
                self.u64(c.bytes);
                self.u64(c.chars);
                self.digest(&c.sha256);
                match &c.value_sha256 {
                    None => self.0.push(0),
                    Some(d) => {
                        self.0.push(1);
                        self.digest(d);
                    }
                }
                self.0.push(match c.syntax {
                    None => 0,
                    Some(Syntax::Json) => 1,
                    Some(Syntax::PythonRepr) => 2,
                });
                self.str(&c.preview);
                self.u64(u64::from(c.cut_markers));
                self.opt_str(c.first_cut_marker.as_deref());
                self.u64(u64::from(c.redactions));
                self.opt_str(c.first_redaction.as_deref());
            }
        }
    }
}

/// Reads an encoding; every read is checked, so bytes that are not a whole encoding give an
/// error, never a panic.
pub(crate) struct Decoder<'a> {
    bytes: &'a [u8],
    pub at: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, at: 0 }
    }
    pub fn bad(&self, what: &'static str) -> Damaged {
        Damaged { what, at: self.at }
    }
    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }
    pub fn byte(&mut self) -> Result<u8, Damaged> {
        let b = *self.bytes.get(self.at).ok_or_else(|| self.bad("end"))?;
        self.at += 1;
        Ok(b)
    }
    pub fn u64(&mut self) -> Result<u64, Damaged> {
        // Most numbers of a part (lengths, flags, line numbers within a chunk) take one byte.
        if let Some(&b) = self.bytes.get(self.at) {
            if b < 0x80 {
                self.at += 1;
                return Ok(u64::from(b));
            }
        }
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(self.bad("number"))
    }
    pub fn u32(&mut self) -> Result<u32, Damaged> {
        u32::try_from(self.u64()?).map_err(|_| self.bad("count"))
    }
    pub fn len(&mut self) -> Result<usize, Damaged> {
        usize::try_from(self.u64()?).map_err(|_| self.bad("length"))
    }
    pub fn bool(&mut self) -> Result<bool, Damaged> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.bad("flag")),
        }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Damaged> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.bad("text"))?;
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }
    pub fn text(&mut self) -> Result<&'a str, Damaged> {
        let n = self.len()?;
        let bytes = self.take(n)?;
        // Ids, names and previews are mostly ASCII: checked 16 bytes a step.
        crate::bytes::utf8(bytes).ok_or_else(|| self.bad("text (not UTF-8)"))
    }
    pub fn opt_text(&mut self) -> Result<Option<&'a str>, Damaged> {
        Ok(if self.bool()? {
            Some(self.text()?)
        } else {
            None
        })
    }
    pub fn str(&mut self) -> Result<String, Damaged> {
        self.text().map(str::to_string)
    }
    pub fn opt_str(&mut self) -> Result<Option<String>, Damaged> {
        Ok(self.opt_text()?.map(str::to_string))
    }
    pub fn static_name(&mut self) -> Result<&'static str, Damaged> {
        let i = self.len()?;
        STATIC_NAMES.get(i).copied().ok_or_else(|| self.bad("name"))
    }
    pub fn time(&mut self) -> Result<Option<i128>, Damaged> {
        Ok(if self.bool()? {
            let b = self.take(16)?;
            Some(i128::from_le_bytes(b.try_into().expect("16 bytes")))
        } else {
            None
        })
    }
    pub fn span_ref(&mut self) -> Result<SpanRef, Damaged> {
        Ok(SpanRef {
            entry: self.u64()?,
            seq: self.u64()?,
            trace_id: self.opt_str()?,
            span_id: self.opt_str()?,
            parent_id: self.opt_str()?,
            times: Times {
                start: self.time()?,
                end: self.time()?,
            },
        })
    }
    pub fn tool_call(&mut self) -> Result<ToolCall, Damaged> {
        Ok(ToolCall {
            at: self.span_ref()?,
            name: self.opt_str()?,
            call_id: self.opt_str()?,
            status: self.opt_str()?,
            result: self.captured()?,
            source: self.static_name()?,
        })
    }
    pub fn model_call(&mut self) -> Result<ModelCall, Damaged> {
        let at = self.span_ref()?;
        let input = match self.u64()? {
            0 => {
                let k = self.len()?;
                let mut messages = Vec::with_capacity(k.min(self.left() / 5));
                for _ in 0..k {
                    messages.push(ToolMessage {
                        call_id: self.opt_str()?,
                        name: self.opt_str()?,
                        content: self.captured()?,
                        trailing: self.bool()?,
                    });
                }
                Ok(messages)
            }
            1 => Err(self.str()?),
            _ => return Err(self.bad("model input")),
        };
        Ok(ModelCall { at, input })
    }
    pub fn digest(&mut self) -> Result<Digest, Damaged> {
        let b = self.take(32)?;
        Ok(Digest(b.try_into().expect("32 bytes")))
    }
    pub fn captured(&mut self) -> Result<Captured, Damaged> {
        Ok(match self.byte()? {
            0 => Captured::Missing(self.str()?),
            1 => Captured::Text(Content::new(Measures {
                bytes: self.u64()?,
                chars: self.u64()?,
                sha256: self.digest()?,
                value_sha256: if self.bool()? {
                    Some(self.digest()?)
                } else {
                    None
                },
                syntax: match self.byte()? {
                    0 => None,
                    1 => Some(Syntax::Json),
                    2 => Some(Syntax::PythonRepr),
                    _ => return Err(self.bad("syntax")),
                },
                // Straight from the part's bytes: a `String` first was a second copy.
                preview: Box::from(self.text()?),
                cut_markers: self.u32()?,
                first_cut_marker: self.opt_str()?,
                redactions: self.u32()?,
                first_redaction: self.opt_str()?,
            })),
            _ => return Err(self.bad("captured")),
        })
    }
}
