//! SHA-256 inside the module, so a digest never depends on what the host offers (WebCrypto
//! is async and missing in some workers; Node's `crypto` is absent from browsers).
//!
//! The compression function is RustCrypto's `sha2`, 0.11 or later: from 0.11 it has a wasm32
//! backend that runs the message schedule on simd128 vectors, which our builds enable (0.10
//! compressed with scalar code: 0.94x hash-wasm's speed on 1 MiB inputs, 1.10x with 0.11, and
//! `pack` of a 4 MiB log 21.0 -> 19.0 ms; 2026-12-03, both in one process). Natively it still
//! picks the SHA extensions at run time. Three things around it matter for speed in
//! WebAssembly, and are why this module is more than a re-export:
//!
//! - **No allocation on the hashing path.** [`Sha256`] lives on the stack, hex is written
//!   through a table into a fixed buffer, and [`sha256_batch`] writes raw digests into a
//!   caller slice.
//! - **Long inputs are fed in 64 KiB slices through a function that is never inlined.**
//!   V8 first runs wasm code on its baseline compiler and swaps in optimised code only at the
//!   next *call*; a single call hashing 64 MB would stay on the slow tier to the end (about
//!   10x slower). Re-entering a small function per slice lets the optimised code take over
//!   after the first few slices.
//! - **Many small inputs cross the JS boundary once.** [`sha256_batch`] takes one buffer and
//!   a list of lengths, so hashing 100,000 short strings costs one call, not 100,000.
//!
//! Hex is lowercase. The short form is the first 16 hex characters (8 bytes), as seed 000
//! writes them (`hashlib.sha256(...).hexdigest()[:16]`).

use std::fmt;

use sha2::Digest as _;

use crate::error::Coded;

/// Bytes in a SHA-256 digest.
pub const DIGEST_LEN: usize = 32;
/// Hex characters in the short form seed 000 writes.
pub const SHORT_HEX_LEN: usize = 16;
/// Slice size for long inputs (see the module docs on tiering).
const SLICE: usize = 64 * 1024;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Each byte value's two hex digits, made at compile time: a digest's hex is 32 two-byte
/// copies, where a nibble at a time was 64 table reads each checked against the output.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        pairs[b] = [HEX[b >> 4], HEX[b & 15]];
        b += 1;
    }
    pairs
};

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; DIGEST_LEN]);

impl Digest {
    pub fn as_bytes(&self) -> &[u8; DIGEST_LEN] {
        &self.0
    }

    /// Writes the 64 lowercase hex characters into `out` (no allocation).
    pub fn write_hex(&self, out: &mut [u8; 2 * DIGEST_LEN]) {
        for (pair, &b) in out.chunks_exact_mut(2).zip(&self.0) {
            pair.copy_from_slice(&HEX_PAIRS[usize::from(b)]);
        }
    }

    /// The 64 lowercase hex characters written into `out`, as text (no allocation): for
    /// a digest lent where an owned `String` would be copied once and freed.
    pub fn hex_in<'b>(&self, out: &'b mut [u8; 2 * DIGEST_LEN]) -> &'b str {
        self.write_hex(out);
        debug_assert!(out.iter().all(u8::is_ascii_hexdigit));
        // SAFETY: `write_hex` wrote hex digits only, which are ASCII.
        unsafe { std::str::from_utf8_unchecked(out) }
    }

    /// The full lowercase hex digest (64 characters): one allocation and a copy of
    /// [`hex_in`](Self::hex_in)'s text (collected char by char, a digest's text was some
    /// 1,500 instructions: every tool result and tool message makes one; checked again as
    /// UTF-8, a byte loop over the 64 digits in wasm32).
    pub fn hex(&self) -> String {
        self.hex_in(&mut [0u8; 2 * DIGEST_LEN]).to_owned()
    }

    /// The first 16 hex characters, seed 000's short form.
    pub fn short_hex(&self) -> String {
        self.hex_in(&mut [0u8; 2 * DIGEST_LEN])[..SHORT_HEX_LEN].to_owned()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 2 * DIGEST_LEN];
        self.write_hex(&mut buf);
        // Only ASCII hex digits were written.
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}

/// Serialised as its 64 lowercase hex characters: the form every record carries, so state
/// kept between requests (the OTLP endpoint's) reads the same whichever form a field holds.
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Digest, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Digest::from_hex(&text).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Str(&text),
                &"a SHA-256 digest as 64 hex characters",
            )
        })
    }
}

impl Digest {
    /// Parses 64 hex characters (either case).
    pub fn from_hex(text: &str) -> Option<Digest> {
        let b = text.as_bytes();
        if b.len() != 2 * DIGEST_LEN {
            return None;
        }
        let nibble = |c: u8| -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                b'A'..=b'F' => Some(c - b'A' + 10),
                _ => None,
            }
        };
        let mut out = [0u8; DIGEST_LEN];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (nibble(b[2 * i])? << 4) | nibble(b[2 * i + 1])?;
        }
        Some(Digest(out))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// An incremental SHA-256: `update` any number of times, then `finish`. Also counts the
/// bytes it saw, since every record that carries a digest carries the length beside it.
#[derive(Clone, Default)]
pub struct Sha256 {
    inner: sha2::Sha256,
    len: u64,
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sha256")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[inline(never)]
fn absorb(inner: &mut sha2::Sha256, slice: &[u8]) {
    inner.update(slice);
}

impl Sha256 {
    pub fn new() -> Sha256 {
        Sha256::default()
    }

    /// Feeds more bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.len += data.len() as u64;
        if data.len() <= SLICE {
            absorb(&mut self.inner, data);
        } else {
            for slice in data.chunks(SLICE) {
                absorb(&mut self.inner, slice);
            }
        }
    }

    /// Bytes fed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was fed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The digest of everything fed.
    pub fn finish(self) -> Digest {
        Digest(self.inner.finalize().into())
    }

    /// The digest of everything fed; the hasher starts over, empty.
    pub fn finish_reset(&mut self) -> Digest {
        self.len = 0;
        Digest(self.inner.finalize_reset().into())
    }
}

/// The SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> Digest {
    let mut h = Sha256::new();
    h.update(data);
    h.finish()
}

/// The lowercase hex SHA-256 of `data` (64 characters).
pub fn sha256_hex(data: &[u8]) -> String {
    sha256(data).hex()
}

/// The first 16 hex characters of the SHA-256 of `data` (seed 000's short form).
pub fn sha256_short(data: &[u8]) -> String {
    sha256(data).short_hex()
}

/// Whether `s` is a full lowercase hex SHA-256 digest (64 characters of `0-9a-f`). Digests
/// read from files are checked with this before they name anything on disk.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 2 * DIGEST_LEN && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A batch whose parts do not add up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The lengths add up to `expected` bytes but the data has `actual`.
    LengthsMismatch { expected: u64, actual: u64 },
    /// The output has room for `capacity` bytes but `needed` are needed.
    OutputSize { needed: usize, capacity: usize },
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::LengthsMismatch { expected, actual } => write!(
                f,
                "batch lengths add up to {expected} bytes but the data holds {actual}"
            ),
            BatchError::OutputSize { needed, capacity } => write!(
                f,
                "batch output needs {needed} bytes but has room for {capacity}"
            ),
        }
    }
}

impl std::error::Error for BatchError {}

impl Coded for BatchError {
    fn code(&self) -> &'static str {
        "invalid_batch"
    }
}

/// Hashes many inputs laid end to end in `data`, the i-th being `lengths[i]` bytes long, and
/// writes the raw 32-byte digests one after another into `out` (which must hold exactly
/// `32 * lengths.len()` bytes). Nothing is allocated.
pub fn sha256_batch(data: &[u8], lengths: &[u32], out: &mut [u8]) -> Result<(), BatchError> {
    let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    if total != data.len() as u64 {
        return Err(BatchError::LengthsMismatch {
            expected: total,
            actual: data.len() as u64,
        });
    }
    let needed = DIGEST_LEN * lengths.len();
    if out.len() != needed {
        return Err(BatchError::OutputSize {
            needed,
            capacity: out.len(),
        });
    }
    let mut at = 0usize;
    for (&len, slot) in lengths.iter().zip(out.chunks_exact_mut(DIGEST_LEN)) {
        let end = at + len as usize;
        slot.copy_from_slice(&sha2::Sha256::digest(&data[at..end]));
        at = end;
    }
    Ok(())
}

/// Like [`sha256_batch`] but writes 64 hex characters per input into `out` (which must hold
/// exactly `64 * lengths.len()` bytes).
pub fn sha256_batch_hex(data: &[u8], lengths: &[u32], out: &mut [u8]) -> Result<(), BatchError> {
    let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    if total != data.len() as u64 {
        return Err(BatchError::LengthsMismatch {
            expected: total,
            actual: data.len() as u64,
        });
    }
    let needed = 2 * DIGEST_LEN * lengths.len();
    if out.len() != needed {
        return Err(BatchError::OutputSize {
            needed,
            capacity: out.len(),
        });
    }
    let mut at = 0usize;
    for (&len, slot) in lengths.iter().zip(out.chunks_exact_mut(2 * DIGEST_LEN)) {
        let end = at + len as usize;
        let digest = Digest(sha2::Sha256::digest(&data[at..end]).into());
        let mut hex = [0u8; 2 * DIGEST_LEN];
        digest.write_hex(&mut hex);
        slot.copy_from_slice(&hex);
        at = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_serialise_as_their_hex() {
        // The OTLP endpoint's kept state holds digests: they must read back as written, in
        // the hex form records always carried.
        let d = sha256(b"abc");
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\""
        );
        assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), d);
        assert_eq!(Digest::from_hex(&d.hex().to_uppercase()), Some(d));
        for bad in ["", "abc", &"g".repeat(64), &"a".repeat(63), &"a".repeat(65)] {
            assert_eq!(Digest::from_hex(bad), None, "{bad}");
            let err = serde_json::from_str::<Digest>(&format!("{bad:?}")).unwrap_err();
            assert!(err.to_string().contains("64 hex characters"), "{err}");
        }
        assert!(serde_json::from_str::<Digest>("12").is_err());
    }

    // Also in wasm, where sha2 compresses with simd128 (its wasm32 backend), not as natively.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn known_vectors() {
        // FIPS 180-2 examples.
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            sha256_hex(b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        );
        let million_a = vec![b'a'; 1_000_000];
        assert_eq!(
            sha256_hex(&million_a),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        assert_eq!(sha256_short(b"abc"), "ba7816bf8f01cfea");
    }

    // Also in wasm, where sha2 compresses with simd128 (its wasm32 backend), not as natively.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn incremental_equals_one_shot_across_slice_boundaries() {
        let data: Vec<u8> = (0..3 * SLICE + 17).map(|i| (i * 31 % 251) as u8).collect();
        for split in [0, 1, 63, 64, 65, SLICE - 1, SLICE, SLICE + 1, 2 * SLICE + 5] {
            let mut h = Sha256::new();
            h.update(&data[..split]);
            h.update(&data[split..]);
            assert_eq!(h.len(), data.len() as u64);
            assert_eq!(h.finish(), sha256(&data), "split {split}");
        }
        let mut h = Sha256::new();
        h.update(b"abc");
        let first = h.finish_reset();
        assert!(h.is_empty());
        h.update(b"abc");
        assert_eq!(first, h.finish());
    }

    #[test]
    fn batch_matches_one_shot_and_checks_sizes() {
        let parts: [&[u8]; 4] = [b"", b"a", b"abc", &[7u8; 200]];
        let data: Vec<u8> = parts.concat();
        let lengths: Vec<u32> = parts.iter().map(|p| p.len() as u32).collect();
        let mut raw = vec![0u8; 32 * parts.len()];
        sha256_batch(&data, &lengths, &mut raw).unwrap();
        let mut hex = vec![0u8; 64 * parts.len()];
        sha256_batch_hex(&data, &lengths, &mut hex).unwrap();
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(&raw[32 * i..32 * i + 32], sha256(p).as_bytes());
            assert_eq!(
                std::str::from_utf8(&hex[64 * i..64 * i + 64]).unwrap(),
                sha256_hex(p)
            );
        }
        assert_eq!(
            sha256_batch(&data[1..], &lengths, &mut raw),
            Err(BatchError::LengthsMismatch {
                expected: data.len() as u64,
                actual: data.len() as u64 - 1
            })
        );
        assert!(matches!(
            sha256_batch(&data, &lengths, &mut raw[1..]),
            Err(BatchError::OutputSize { .. })
        ));
    }

    #[test]
    fn digest_shape_check() {
        assert!(is_sha256_hex(&sha256_hex(b"x")));
        assert!(!is_sha256_hex("../etc/passwd"));
        assert!(!is_sha256_hex(&sha256_hex(b"x").to_uppercase()));
        assert!(!is_sha256_hex(&sha256_hex(b"x")[..63]));
    }
}
