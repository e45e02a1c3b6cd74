// Shared by the native and the wasm newline benchmarks: the same inputs and loops, so the
// two figures compare like with like. `which`: 0 = the word-at-a-time search
// lines::find_newline used before (copied here), 1 = memchr::memchr alone (SSE2/AVX2
// natively, simd128 in wasm), 2 = toolslice::lines::find_newline as it is now.

/// Text of `total` bytes in lines of `line_len` bytes (ASCII, JSON-ish, the last byte `\n`).
pub fn haystack(line_len: usize, total: usize) -> Vec<u8> {
    let line_len = line_len.max(2);
    let mut line: Vec<u8> = br#"{"span_id":"a1","name":"get_weather","status":"ok","x":""#
        .iter()
        .copied()
        .cycle()
        .take(line_len - 1)
        .collect();
    line.push(b'\n');
    line.iter().copied().cycle().take(total).collect()
}

/// Lines found by scanning `hay` with the chosen search, newline to newline.
pub fn count_lines(which: u32, hay: &[u8]) -> usize {
    let mut n = 0;
    let mut rest = hay;
    loop {
        let at = match which {
            0 => word_at_a_time(rest),
            1 => memchr::memchr(b'\n', rest),
            _ => toolslice::lines::find_newline(rest),
        };
        match at {
            Some(i) => {
                n += 1;
                rest = &rest[i + 1..];
            }
            None => return n,
        }
    }
}

/// lines::find_newline before memchr: eight bytes per step with the has-zero-byte trick.
pub fn word_at_a_time(haystack: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut i = 0;
    while i + 8 <= haystack.len() {
        let word = u64::from_le_bytes(haystack[i..i + 8].try_into().unwrap());
        let x = word ^ NL;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    haystack[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| i + p)
}
