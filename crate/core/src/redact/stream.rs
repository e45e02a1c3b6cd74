//! Redaction of a byte stream in bounded memory.
//!
//! A secret can straddle two chunks, so chunks cannot be redacted one by one. The stream
//! keeps the last [`HOLD`] bytes back (every bounded rule's token is far shorter) plus a
//! little already-emitted context for look-back (a key name before its `=`), scans each
//! window once, and emits everything before the split point. A finding that reaches the
//! end of the window may still grow (a JWT, a PEM block, a quoted value), so it is held
//! back whole until it ends; if one grows past [`MAX_OPEN`] bytes it is redacted as it
//! stands and the rest of its line is swallowed, so memory stays bounded and nothing of it
//! leaks. Memory is therefore bounded by `WINDOW + HOLD + MAX_OPEN`, never by the stream.

use super::{apply_bytes, Receipt, Redactor, Rule};

/// Bytes scanned per round (beyond the hold).
pub const WINDOW: usize = 64 * 1024;
/// Bytes kept back at the end of each round for the next one.
pub const HOLD: usize = 16 * 1024;
/// Already-emitted bytes kept for look-back.
const CONTEXT: usize = 256;
/// The longest secret held back whole; a longer one is redacted to the end of its line.
pub const MAX_OPEN: usize = 1 << 20;

/// A streaming redactor: `push` chunks (split anywhere), `finish`; redacted bytes are
/// appended to the caller's buffer as soon as they are safe to emit.
#[derive(Debug, Clone)]
pub struct RedactStream {
    redactor: Redactor,
    pending: Vec<u8>,
    context: Vec<u8>,
    swallowing: bool,
    receipts: Vec<Receipt>,
    emitted: u64,
    /// Run the next round when `pending` reaches this length (it grows by a window when
    /// an open finding is held back, so a held secret is not rescanned byte by byte).
    next_round: usize,
}

impl RedactStream {
    pub fn new(redactor: Redactor) -> RedactStream {
        RedactStream {
            redactor,
            pending: Vec::new(),
            context: Vec::new(),
            swallowing: false,
            receipts: Vec::new(),
            emitted: 0,
            next_round: WINDOW + HOLD,
        }
    }

    /// Bytes written to the output so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// Feeds a chunk; appends whatever is now safe to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<u8>) {
        while !chunk.is_empty() {
            if self.swallowing {
                match chunk.iter().position(|&b| b == b'\n') {
                    Some(nl) => {
                        self.grow_last(nl);
                        self.swallowing = false;
                        chunk = &chunk[nl..];
                    }
                    None => {
                        self.grow_last(chunk.len());
                        return;
                    }
                }
                continue;
            }
            let room = self.next_round.saturating_sub(self.pending.len()).max(1);
            let take = room.min(chunk.len());
            self.pending.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.pending.len() >= self.next_round {
                self.round(false, out);
                self.next_round = (self.pending.len() + WINDOW).max(WINDOW + HOLD);
            }
        }
    }

    /// Ends the stream: emits the rest and returns every receipt (`field_path` `$`,
    /// offsets into the redacted output).
    pub fn finish(mut self, out: &mut Vec<u8>) -> Vec<Receipt> {
        if !self.swallowing {
            self.round(true, out);
        }
        self.receipts
    }

    fn grow_last(&mut self, n: usize) {
        if let Some(r) = self.receipts.last_mut() {
            r.original_len += n as u64;
        }
    }

    fn round(&mut self, last: bool, out: &mut Vec<u8>) {
        let ctx = self.context.len();
        let mut buf = std::mem::take(&mut self.context);
        buf.append(&mut self.pending);
        let found = self.redactor.findings(&buf);
        let len = buf.len();
        let mut split = if last {
            len
        } else {
            len.saturating_sub(HOLD).max(ctx)
        };
        let mut open_from = None;
        for f in &found {
            if !last && f.end >= len {
                let from = f.start.max(ctx);
                split = split.min(from);
                open_from = Some(from);
            } else if f.start < split && f.end > split {
                split = f.end;
            }
        }
        let mut swallow = false;
        if let Some(from) = open_from {
            if len - from > MAX_OPEN {
                split = len;
                swallow = true;
            }
        }
        // Findings inside the emitted part (the context was emitted in an earlier round).
        let here: Vec<_> = found
            .iter()
            .filter(|f| f.end > ctx && f.start < split)
            .map(|f| {
                let mut f = *f;
                f.start = f.start.max(ctx) - ctx;
                f.end = f.end.min(split) - ctx;
                f
            })
            .collect();
        let before = out.len();
        apply_bytes(
            &buf[ctx..split],
            &here,
            "$",
            self.emitted,
            &mut self.receipts,
            out,
        );
        self.emitted += (out.len() - before) as u64;
        if swallow {
            self.swallowing = true;
            if here.is_empty() {
                // Cannot happen (an open finding was found), but never swallow unreceipted.
                self.receipts
                    .push(super::receipt("$", Rule::SecretField, 0, None));
            }
        }
        let keep_from = split.saturating_sub(CONTEXT);
        self.pending = buf[split..].to_vec();
        buf.truncate(split);
        self.context = buf.split_off(keep_from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

    fn stream_all(text: &[u8], chunk: usize) -> (Vec<u8>, Vec<Receipt>) {
        let mut s = RedactStream::new(Redactor::default());
        let mut out = Vec::new();
        for c in text.chunks(chunk.max(1)) {
            s.push(c, &mut out);
        }
        let r = s.finish(&mut out);
        (out, r)
    }

    #[test]
    fn matches_whole_text_redaction_at_any_chunking() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!("line {i} ok\n"));
            if i % 97 == 0 {
                text.push_str(&format!(
                    "export GITHUB_TOKEN={GH}\npassword=\"hunter{i}x\"\n"
                ));
            }
        }
        let whole = Redactor::default().text(&text);
        for chunk in [1, 7, 4096, 100_000] {
            let (out, receipts) = stream_all(text.as_bytes(), chunk);
            assert_eq!(String::from_utf8(out).unwrap(), whole.text, "chunk {chunk}");
            assert_eq!(receipts, whole.receipts, "chunk {chunk}");
        }
    }

    #[test]
    fn an_endless_secret_is_swallowed_not_leaked() {
        let mut text = b"Authorization: Bearer ".to_vec();
        text.extend(std::iter::repeat_n(b'a', 3 * MAX_OPEN));
        text.extend_from_slice(b"9\nnext line\n");
        let (out, receipts) = stream_all(&text, 65536);
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains("aaaa"), "{}", &out[..80]);
        assert!(out.ends_with("\nnext line\n"));
        assert_eq!(receipts.len(), 1);
        assert_eq!(receipts[0].original_len, 3 * MAX_OPEN as u64 + 1);
    }
}
