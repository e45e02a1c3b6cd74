//! Redaction of a byte stream in bounded memory.
//!
//! A secret can straddle two chunks, so chunks cannot be redacted one by one. The stream
//! keeps the last [`HOLD`] bytes back (every bounded rule's token is far shorter) plus a
//! little already-emitted context for look-back (a key name before its `=`), scans each
//! window once, and emits everything before the split point. A finding that reaches the
//! end of the window may still grow (a JWT, a PEM block, a quoted value), so it is held
//! back whole until it ends; if one grows past [`MAX_OPEN`] bytes it is redacted as it
//! stands and the rest of it is swallowed: the rest of its line, or for a private key
//! block (many lines) everything through its `-----END ...-----` line, found wherever the
//! chunks split it. So memory stays bounded and nothing of it leaks, and the output is what
//! whole-text redaction writes. Memory is bounded by `WINDOW + HOLD + 2 * MAX_OPEN`, never
//! by the stream.

use super::scan::find;
use super::{apply_bytes, Receipt, Redactor, Rule};

/// Bytes scanned per round (beyond the hold).
pub const WINDOW: usize = 64 * 1024;
/// Bytes kept back at the end of each round for the next one.
pub const HOLD: usize = 16 * 1024;
/// Already-emitted bytes kept for look-back.
const CONTEXT: usize = 256;
/// The longest secret held back whole; a longer one is redacted to the end of its line.
pub const MAX_OPEN: usize = 1 << 20;

/// The `-----END ` marker that ends a private key block (see `scan::pem`).
const END: &[u8] = b"-----END ";
/// Longest label between `-----END ` and its closing `-----` (as `scan::pem` reads it).
const LABEL_MAX: usize = 80;

/// What the stream is dropping after a secret too long to hold was redacted as it stood.
#[derive(Debug, Clone)]
enum Swallow {
    No,
    /// The rest of the line.
    Line,
    /// The rest of a private key block, up to `-----END `; holds the last bytes seen.
    KeyBlock(Vec<u8>),
    /// The END line's label, held until its closing `-----` is seen or ruled out; the
    /// first `counted` bytes were already redacted with the block.
    KeyLabel {
        held: Vec<u8>,
        counted: usize,
    },
}

/// The last occurrence of `needle` in `hay` (its start).
fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Where the END line's label closes: after the first `-----` that starts within
/// [`LABEL_MAX`] bytes.
fn label_end(held: &[u8]) -> Option<usize> {
    find(held, b"-----")
        .filter(|&f| f <= LABEL_MAX)
        .map(|f| f + 5)
}

/// A streaming redactor: `push` chunks (split anywhere), `finish`; redacted bytes are
/// appended to the caller's buffer as soon as they are safe to emit.
#[derive(Debug, Clone)]
pub struct RedactStream {
    redactor: Redactor,
    pending: Vec<u8>,
    context: Vec<u8>,
    swallow: Swallow,
    receipts: Vec<Receipt>,
    emitted: u64,
    /// Run the next round when `pending` reaches this length (it doubles when an open
    /// finding is held back, so a held secret is rescanned a bounded number of times).
    next_round: usize,
}

impl RedactStream {
    pub fn new(redactor: Redactor) -> RedactStream {
        RedactStream {
            redactor,
            pending: Vec::new(),
            context: Vec::new(),
            swallow: Swallow::No,
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
            match &mut self.swallow {
                Swallow::No => {}
                Swallow::Line => {
                    match chunk.iter().position(|&b| b == b'\n') {
                        Some(nl) => {
                            self.grow_last(nl);
                            self.swallow = Swallow::No;
                            chunk = &chunk[nl..];
                        }
                        None => {
                            self.grow_last(chunk.len());
                            return;
                        }
                    }
                    continue;
                }
                Swallow::KeyBlock(seen) => {
                    // Looking for `-----END `; `seen` holds the last bytes swallowed, so a
                    // marker split between chunks is found.
                    let keep = seen.len();
                    seen.extend_from_slice(&chunk[..chunk.len().min(END.len())]);
                    let at = match find(seen, END) {
                        Some(e) => Some(e + END.len() - keep),
                        None => find(chunk, END).map(|e| e + END.len()),
                    };
                    seen.truncate(keep);
                    match at {
                        Some(n) => {
                            self.swallow = Swallow::KeyLabel {
                                held: Vec::new(),
                                counted: 0,
                            };
                            self.grow_last(n);
                            chunk = &chunk[n..];
                        }
                        None => {
                            seen.extend_from_slice(chunk);
                            let over = seen.len().saturating_sub(END.len() - 1);
                            seen.drain(..over);
                            self.grow_last(chunk.len());
                            return;
                        }
                    }
                    continue;
                }
                Swallow::KeyLabel { held, counted } => {
                    // After `-----END `: the label and its closing `-----` (within
                    // LABEL_MAX bytes, as the whole-text rule reads it) are part of the key.
                    let counted = *counted;
                    let room = (LABEL_MAX + 5).saturating_sub(held.len());
                    let take = room.min(chunk.len());
                    held.extend_from_slice(&chunk[..take]);
                    chunk = &chunk[take..];
                    let done = match label_end(held) {
                        Some(n) => Some(n),
                        None if held.len() >= LABEL_MAX + 5 => Some(counted),
                        None => None,
                    };
                    let Some(n) = done else {
                        return;
                    };
                    let n = n.max(counted);
                    let rest = held.split_off(n);
                    self.swallow = Swallow::No;
                    self.grow_last(n - counted);
                    self.push(&rest, out);
                    continue;
                }
            }
            let room = self.next_round.saturating_sub(self.pending.len()).max(1);
            let take = room.min(chunk.len());
            self.pending.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.pending.len() >= self.next_round {
                self.round(false, out);
                // Held-back bytes are rescanned next round: doubling the round keeps the
                // total rescanning within a constant factor of the stream (a fixed step
                // would rescan a long open secret once per window, quadratically).
                self.next_round = (self.pending.len() + WINDOW)
                    .max(self.pending.len() * 2)
                    .max(WINDOW + HOLD);
            }
        }
    }

    /// Ends the stream: emits the rest and returns every receipt (`field_path` `$`,
    /// offsets into the redacted output).
    pub fn finish(mut self, out: &mut Vec<u8>) -> Vec<Receipt> {
        match std::mem::replace(&mut self.swallow, Swallow::No) {
            Swallow::No => self.round(true, out),
            Swallow::KeyLabel { held, counted } => {
                // The stream ended inside the END line: swallow its label when it closes
                // within the bound, else emit what followed `-----END `.
                let n = label_end(&held).unwrap_or(0).max(counted);
                self.grow_last(n - counted);
                self.pending.extend_from_slice(&held[n..]);
                self.round(true, out);
            }
            Swallow::Line | Swallow::KeyBlock(_) => {}
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
        let mut open_rule = None;
        for f in &found {
            if !last && f.end >= len {
                let from = f.start.max(ctx);
                split = split.min(from);
                open_from = Some(from);
                open_rule = Some(f.rule);
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
            self.swallow = match (open_rule, open_from) {
                (Some(Rule::PrivateKey), Some(from)) => match find_last(&buf[from..], END) {
                    // The END marker was read, its label not yet closed.
                    Some(e) => {
                        let held = buf[from + e + END.len()..].to_vec();
                        Swallow::KeyLabel {
                            counted: held.len(),
                            held,
                        }
                    }
                    None => Swallow::KeyBlock(buf[len.saturating_sub(END.len() - 1)..].to_vec()),
                },
                _ => Swallow::Line,
            };
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
