//! A trace state's JSON cut into pieces where its content says, for storage that keeps each
//! piece under a key of its own and writes only the pieces it has not stored before.
//!
//! A trace's state grows with its calls, and each request changes little of it (a tool or
//! model call appended, a span decided, a counter), but the JSON was stored whole after every
//! request: a run of 1,400 tool calls sent span by span wrote up to 1.9 MB after each of its
//! 2,801 requests, 2.7 GB in all. Cut every N bytes, an insertion would shift every later
//! piece; cut where a rolling hash of the last [`WINDOW`] bytes says, text that is the same
//! as before and far enough from a change is cut the same way, so its pieces are the ones
//! stored before (content-defined chunking, as rsync and backup tools cut files).

/// The longest piece, in bytes (so at most as many UTF-16 units in JavaScript, two bytes
/// each in V8's strings): a Durable Object's value is at most 128 KiB.
pub const MAX_PIECE_BYTES: usize = 60_000;
/// The shortest piece but the last; past it a cut comes about every 4,096 bytes.
const MIN_PIECE_BYTES: usize = 2048;
/// The bytes the rolling hash covers: each step shifts it left one bit and adds a value per
/// byte, so its top bit depends on the last 64 bytes and nothing before.
const WINDOW: usize = 64;
/// A cut where the top 12 bits of the hash are zero: about one place in 4,096.
const MASK: u64 = 0xfff0_0000_0000_0000;
/// A pseudo-random value per byte (splitmix64 from a constant): the same cuts in every
/// build and process, so a keeper started afresh on a stored state (a Durable Object
/// evicted) finds the stored pieces in its next save.
const GEAR: [u64; 256] = {
    let mut gear = [0u64; 256];
    let mut x: u64 = 0;
    let mut i = 0;
    while i < 256 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        gear[i] = z ^ (z >> 31);
        i += 1;
    }
    gear
};

/// `text` cut into pieces between characters: each at most [`MAX_PIECE_BYTES`], each but the
/// last at least [`MIN_PIECE_BYTES`], each ending where the hash of its last [`WINDOW`]
/// bytes has the [`MASK`] bits zero, or at the longest. Work linear in `text`: a shift, an
/// add and a table read per byte (a gear hash, as FastCDC cuts).
pub fn cut(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    while bytes.len() - start > MIN_PIECE_BYTES {
        let end = bytes.len().min(start + MAX_PIECE_BYTES);
        // The window is full at the first place a cut may be, the shortest piece's end: the
        // bytes before it go in first, then a cut is looked for after each byte.
        let from = start + MIN_PIECE_BYTES - WINDOW;
        let mut h = 0u64;
        for &b in &bytes[from..from + WINDOW - 1] {
            h = (h << 1).wrapping_add(GEAR[usize::from(b)]);
        }
        let mut at = end;
        for (after, &b) in (from + WINDOW..end + 1).zip(&bytes[from + WINDOW - 1..end]) {
            h = (h << 1).wrapping_add(GEAR[usize::from(b)]);
            // A piece is text: never cut inside a character.
            if h & MASK == 0 && text.is_char_boundary(after) {
                at = after;
                break;
            }
        }
        // At the longest, back to the character's start (a piece stays within the limit).
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        pieces.push(&text[start..at]);
        start = at;
    }
    if start < bytes.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text like a state's: records that end alike, each with its own id and digest.
    fn records(n: usize, from: usize) -> String {
        let mut s = String::from("{\"tools\":[");
        for i in from..from + n {
            s.push_str(&format!(
                "{{\"key\":\"{i:016x}\",\"sha256\":\"{}\",\"preview\":\"line {i}\\nline {i}\\n\",\"due_ms\":null}},",
                crate::hash::sha256_hex(i.to_string().as_bytes())
            ));
        }
        s.push_str("]}");
        s
    }

    #[test]
    fn pieces_join_to_the_text_within_their_bounds() {
        for text in [
            String::new(),
            "x".repeat(MIN_PIECE_BYTES),
            "x".repeat(MIN_PIECE_BYTES + 1),
            "x".repeat(5 * MAX_PIECE_BYTES + 7),
            "é😀".repeat(40_000),
            // The limit falls inside a four-byte character.
            format!("x{}", "😀".repeat(40_000)),
            records(3000, 0),
        ] {
            let pieces = cut(&text);
            assert_eq!(pieces.concat(), text);
            for (i, p) in pieces.iter().enumerate() {
                assert!(p.len() <= MAX_PIECE_BYTES, "piece {i}: {}", p.len());
                if i + 1 < pieces.len() {
                    assert!(p.len() >= MIN_PIECE_BYTES, "piece {i}: {}", p.len());
                }
            }
        }
    }

    #[test]
    fn a_state_is_cut_by_its_content_not_every_max_bytes() {
        let text = records(3000, 0);
        let pieces = cut(&text);
        let longest = pieces.iter().filter(|p| p.len() == MAX_PIECE_BYTES).count();
        // About 6 KB on average (4,096 past the 2,048 shortest).
        let mean = text.len() / pieces.len();
        assert!((3_000..12_000).contains(&mean), "mean piece {mean} bytes");
        assert!(
            longest * 10 < pieces.len(),
            "{longest} of {} at the longest",
            pieces.len()
        );
    }

    #[test]
    fn a_change_leaves_the_pieces_far_from_it_as_they_were() {
        // Records appended at the end, and one inserted near the start: the pieces between
        // are the ones cut before.
        let before = records(3000, 0);
        let mut after = records(3100, 0);
        after.insert_str(5000, "{\"key\":\"inserted\"},");
        let old: std::collections::HashSet<&str> = cut(&before).into_iter().collect();
        let new = cut(&after);
        let fresh: usize = new
            .iter()
            .filter(|p| !old.contains(*p))
            .map(|p| p.len())
            .sum();
        // What was added (100 records, about 15 KB) and a piece or two around each change.
        assert!(
            fresh < 80_000,
            "{fresh} of {} bytes in pieces not stored before",
            after.len()
        );
    }
}
