//! Newline search, ours against memchr, natively: `cargo run --release --example
//! newline_scan`. The wasm figures come from `newline_scan_wasm` (see its header).
//! Speed figures belong in benchmarks, not tests; this prints MB/s per line length.

#[path = "newline_scan/kernels.rs"]
mod kernels;

use std::time::Instant;

fn main() {
    let total = 4 << 20;
    for line_len in [16usize, 80, 512, 4096, 65536] {
        let hay = kernels::haystack(line_len, total);
        let mut best = [f64::MAX; 3];
        for _ in 0..41 {
            for (which, slot) in best.iter_mut().enumerate() {
                let t = Instant::now();
                let n = kernels::count_lines(which as u32, std::hint::black_box(&hay));
                let s = t.elapsed().as_secs_f64();
                assert_eq!(n, total / line_len);
                *slot = slot.min(s);
            }
        }
        let mbs = |s: f64| total as f64 / s / 1e6;
        println!(
            "native line {line_len:>6} B: word {:>6.0}  memchr {:>6.0}  find_newline {:>6.0} MB/s; find_newline vs word {:.2}x",
            mbs(best[0]),
            mbs(best[1]),
            mbs(best[2]),
            best[0] / best[2]
        );
    }
}
