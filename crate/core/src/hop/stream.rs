//! Streaming process output: hash as the chunks arrive, classify only after the close.

use crate::hash::Sha256;

use super::classify::{canonical_sha256, row, HopRow};
use crate::hash::sha256_hex;

/// Process output up to this many bytes is also kept, so its canonical hash can be taken at
/// the close; longer output is hashed raw only (its canonical hash is then `None`).
pub const DEFAULT_CANONICAL_LIMIT: usize = 16 * 1024 * 1024;

/// Hashes a tool process's output incrementally. [`HopStream::close`] consumes the stream,
/// so a row can only be made from the whole output: there is no way to classify a partial
/// buffer.
#[derive(Debug, Clone)]
pub struct HopStream {
    hasher: Sha256,
    kept: Option<Vec<u8>>,
    limit: usize,
}

impl Default for HopStream {
    fn default() -> Self {
        HopStream::new()
    }
}

impl HopStream {
    pub fn new() -> HopStream {
        HopStream::with_canonical_limit(DEFAULT_CANONICAL_LIMIT)
    }

    /// A stream that keeps at most `limit` bytes for the canonical hash (0: never keep).
    pub fn with_canonical_limit(limit: usize) -> HopStream {
        HopStream {
            hasher: Sha256::new(),
            kept: (limit > 0).then(Vec::new),
            limit,
        }
    }

    /// Feeds the next chunk of process output.
    pub fn push(&mut self, chunk: &[u8]) {
        self.hasher.update(chunk);
        if let Some(kept) = &mut self.kept {
            if kept.len() + chunk.len() <= self.limit {
                kept.extend_from_slice(chunk);
            } else {
                self.kept = None;
            }
        }
    }

    /// Bytes of process output seen so far.
    pub fn len(&self) -> u64 {
        self.hasher.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hasher.is_empty()
    }

    /// Closes the stream and classifies it against the adapter output and model slice.
    pub fn close(self, adapter: &[u8], model_part: &[u8]) -> HopRow {
        let len = self.hasher.len();
        let process_canonical = self.kept.as_deref().and_then(canonical_sha256);
        row(
            (self.hasher.finish().hex(), len),
            (sha256_hex(adapter), adapter.len() as u64),
            (sha256_hex(model_part), model_part.len() as u64),
            process_canonical,
            canonical_sha256(adapter),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::classify_hop;

    #[test]
    fn streamed_equals_one_shot() {
        let process = br#"{"ok":true,"rows":2,"note":"abcdef"}"#;
        let adapter = br#"{"ok":true,"rows":2}"#;
        for limit in [0, 10, DEFAULT_CANONICAL_LIMIT] {
            let mut s = HopStream::with_canonical_limit(limit);
            for chunk in process.chunks(7) {
                s.push(chunk);
            }
            assert_eq!(s.len(), process.len() as u64);
            let streamed = s.close(adapter, adapter);
            let mut whole = classify_hop(process, adapter, adapter);
            if limit < process.len() {
                whole.process_canonical_sha256 = None;
                whole.adapter_change = crate::hop::AdapterChange::Unknown;
            }
            assert_eq!(streamed, whole, "limit {limit}");
        }
    }
}
