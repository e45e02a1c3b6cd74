//! The content-addressed body store: one entry per digest, holding the canonical text.
//!
//! The trait is synchronous and small on purpose: an in-memory map implements it here, the
//! JS binding adapts a `Map`-like object, and the Node CLI adapts a directory (one file per
//! digest, the seed's layout). A store whose reads are asynchronous (an edge KV) is driven
//! from JavaScript with [`body_action`], which decides what to do with what was read.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::Coded;
use crate::hash::{is_sha256_hex, sha256_hex};

use super::span::{Body, ToolSpan};

/// Why a body could not be stored or looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The store already holds a different text under this digest (the seed's error: the
    /// canonical form was not stable, or the store was tampered with).
    Unstable { digest: String },
    /// The text does not hash to the digest it is to be stored under.
    DigestMismatch { digest: String, actual: String },
    /// Not a 64-character lowercase hex digest; refused before it names a file or key.
    InvalidDigest { digest: String },
    /// The backend failed (I/O, a JS exception).
    Backend { message: String },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Unstable { digest } => write!(f, "unstable canonical form: {digest}"),
            StoreError::DigestMismatch { digest, actual } => {
                write!(f, "body does not match its digest: expected {digest}, the text hashes to {actual}")
            }
            StoreError::InvalidDigest { digest } => {
                write!(f, "not a SHA-256 hex digest: {:?}", truncate(digest, 80))
            }
            StoreError::Backend { message } => write!(f, "body store failed: {message}"),
        }
    }
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl std::error::Error for StoreError {}

impl Coded for StoreError {
    fn code(&self) -> &'static str {
        match self {
            StoreError::Unstable { .. } => "unstable_canonical_form",
            StoreError::DigestMismatch { .. } => "digest_mismatch",
            StoreError::InvalidDigest { .. } => "invalid_digest",
            StoreError::Backend { .. } => "store_error",
        }
    }
}

/// A content-addressed store of canonical bodies, keyed by lowercase hex SHA-256.
pub trait BodyStore {
    /// The text stored under `digest`, if any.
    fn get(&self, digest: &str) -> Result<Option<String>, StoreError>;
    /// Stores `text` under `digest` (only called when nothing is stored there yet).
    fn put(&mut self, digest: &str, text: &str) -> Result<(), StoreError>;
    /// Whether something is stored under `digest`. Override when reading is expensive.
    fn contains(&self, digest: &str) -> Result<bool, StoreError> {
        Ok(self.get(digest)?.is_some())
    }
}

/// A body store in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryStore {
    bodies: BTreeMap<String, String>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
    pub fn len(&self) -> usize {
        self.bodies.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }
    /// Every (digest, text) pair, by digest.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.bodies.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
    /// Removes a body (to test what the gate says about a missing one).
    pub fn remove(&mut self, digest: &str) -> Option<String> {
        self.bodies.remove(digest)
    }
}

impl BodyStore for MemoryStore {
    fn get(&self, digest: &str) -> Result<Option<String>, StoreError> {
        Ok(self.bodies.get(digest).cloned())
    }
    fn put(&mut self, digest: &str, text: &str) -> Result<(), StoreError> {
        self.bodies.insert(digest.to_string(), text.to_string());
        Ok(())
    }
    fn contains(&self, digest: &str) -> Result<bool, StoreError> {
        Ok(self.bodies.contains_key(digest))
    }
}

/// What to do with a body, given what the store already holds under its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyAction {
    /// Nothing is stored yet: write it.
    Write,
    /// The same text is already stored: nothing to do.
    Keep,
}

/// The decision every store makes before writing: the digest must be a digest, the text must
/// hash to it, and a different text already stored under it is the "unstable canonical
/// form" error.
pub fn body_action(
    digest: &str,
    text: &str,
    existing: Option<&str>,
) -> Result<BodyAction, StoreError> {
    if !is_sha256_hex(digest) {
        return Err(StoreError::InvalidDigest {
            digest: digest.to_string(),
        });
    }
    let actual = sha256_hex(text.as_bytes());
    if actual != digest {
        return Err(StoreError::DigestMismatch {
            digest: digest.to_string(),
            actual,
        });
    }
    match existing {
        None => Ok(BodyAction::Write),
        Some(stored) if stored == text => Ok(BodyAction::Keep),
        Some(_) => Err(StoreError::Unstable {
            digest: digest.to_string(),
        }),
    }
}

/// Writes the span's argument and result bodies, as the seed's `write_bodies` does, and also
/// checks that each body hashes to the digest in the span.
pub fn write_bodies(
    store: &mut dyn BodyStore,
    span: &ToolSpan,
    args: &Body,
    result: &Body,
) -> Result<(), StoreError> {
    for (digest, body) in [(&span.args_sha256, args), (&span.result_sha256, result)] {
        let existing = if is_sha256_hex(digest) {
            store.get(digest)?
        } else {
            None
        };
        if body_action(digest, &body.text, existing.as_deref())? == BodyAction::Write {
            store.put(digest, &body.text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::Form;
    use crate::gate::tool_span;

    #[test]
    fn writes_once_keeps_same_and_refuses_different_text() {
        let args = Body::from_json(br#"{"b":1,"a":2}"#, Form::Python).unwrap();
        let result = Body::from_json(b"[1, 2]", Form::Python).unwrap();
        let span = tool_span("t", &args, &result, "ok");
        let mut store = MemoryStore::new();
        write_bodies(&mut store, &span, &args, &result).unwrap();
        assert_eq!(
            store.get(&span.args_sha256).unwrap().as_deref(),
            Some(r#"{"a":2,"b":1}"#)
        );
        write_bodies(&mut store, &span, &args, &result).unwrap();
        assert_eq!(store.len(), 2);

        store.put(&span.result_sha256, "[1,2] ").unwrap();
        let err = write_bodies(&mut store, &span, &args, &result).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unstable canonical form: {}", span.result_sha256)
        );
        assert_eq!(err.code(), "unstable_canonical_form");
    }

    #[test]
    fn refuses_bad_digests_before_touching_the_store() {
        let body = Body::from_canonical("1".into());
        let err = body_action("../../etc/passwd", &body.text, None).unwrap_err();
        assert_eq!(err.code(), "invalid_digest");
        let other = sha256_hex(b"2");
        assert_eq!(
            body_action(&other, &body.text, None).unwrap_err().code(),
            "digest_mismatch"
        );
        assert_eq!(
            body_action(&body.sha256, "1", Some("1")),
            Ok(BodyAction::Keep)
        );
    }
}
