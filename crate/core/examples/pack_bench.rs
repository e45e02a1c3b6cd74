//! Native pack throughput for 1 KB, 64 KB and 4 MB observations, against the naive head cut
//! of the same text (what most agent frameworks do). Prints one JSON object per size:
//!
//!   cargo run --release --example pack_bench [-- ITERATIONS_SCALE]
//!
//! The observations are build logs with an error line in the middle and a few secrets, the
//! shape `toolslice pack` is for; the budget is 8 KiB.
use std::hint::black_box;
use std::time::Instant;

use toolslice::pack::{pack, PackOptions, Registry, ToolResult};

/// A build log of about `bytes` bytes: progress lines, one error in the middle, secrets.
pub fn observation(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 128);
    let mut i = 0;
    while s.len() < bytes {
        if i == 400 || s.len() + 200 > bytes / 2 && !s.contains("error[") {
            s.push_str("error[E0425]: cannot find value `port` in this scope\n");
        } else if i % 97 == 13 {
            s.push_str("export GITHUB_TOKEN=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\n");
        } else {
            s.push_str(&format!(
                "   Compiling crate-{i} v0.{i}.1 (/work/src/crate-{i})\n"
            ));
        }
        i += 1;
    }
    s.truncate(bytes);
    while !s.is_char_boundary(s.len()) {
        s.pop();
    }
    s
}

fn naive_head(text: &str, limit: usize) -> &str {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn main() {
    let scale: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1.0);
    let registry = Registry::new();
    let opts = PackOptions {
        limit: Some(8192),
        ..PackOptions::default()
    };
    for (label, size, iters) in [
        ("1KB", 1 << 10, 20_000),
        ("64KB", 64 << 10, 1_000),
        ("4MB", 4 << 20, 12),
    ] {
        let iters = ((iters as f64) * scale).max(1.0) as u32;
        let text = observation(size);
        let mut result = ToolResult::text("bash", "call_1", text.clone());
        result.exit_code = Some(101);
        let t = Instant::now();
        for _ in 0..iters {
            black_box(pack(black_box(&result), &opts, &registry, None, None).unwrap());
        }
        let pack_s = t.elapsed().as_secs_f64() / f64::from(iters);
        let t = Instant::now();
        for _ in 0..iters {
            black_box(naive_head(black_box(&text), 8192).to_string());
        }
        let naive_s = t.elapsed().as_secs_f64() / f64::from(iters);
        println!(
            "{{\"size\":\"{label}\",\"bytes\":{size},\"iterations\":{iters},\"pack_us\":{:.2},\"pack_mb_per_s\":{:.1},\"naive_head_us\":{:.3},\"ratio_to_naive\":{:.1}}}",
            pack_s * 1e6,
            size as f64 / pack_s / 1e6,
            naive_s * 1e6,
            pack_s / naive_s.max(1e-12)
        );
    }
}
