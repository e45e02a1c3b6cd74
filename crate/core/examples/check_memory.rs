//! Where the checker's memory goes (issue 17): checks files natively, in 1 MiB chunks as the
//! CLI feeds them, and prints the bytes each structure holds before `finish()`, the peak
//! during it, and what the report keeps, per span and in total.
//!
//!     cargo run --release --example check_memory -- [--flagged-only] FILE...
//!
//! The heap is counted by a wrapping global allocator (live bytes and their high-water
//! mark), so the figures are what the allocator gave out, doublings included. Native
//! layouts are those of a 64-bit target: a `usize` field is 8 bytes here and 4 in wasm32.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use toolslice::check::{CheckOptions, Checker};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `System` with this layout (every block here does).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A moving realloc holds both blocks for a moment: count the new one before the old
        // one goes, as an allocator without in-place growth (wasm's) must.
        grew(new_size);
        // SAFETY: as for `dealloc`; the caller's contract for `realloc` otherwise.
        let out = unsafe { System.realloc(ptr, layout, new_size) };
        LIVE.fetch_sub(layout.size(), Relaxed);
        out
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mb(bytes: usize) -> String {
    format!("{:7.1} MB", bytes as f64 / 1e6)
}

fn main() {
    let mut flagged_only = false;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--flagged-only" => flagged_only = true,
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!("usage: check_memory [--flagged-only] FILE...");
        std::process::exit(2);
    }
    for file in files {
        let mut input = match std::fs::File::open(&file) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("check_memory: cannot read {file}: {e}");
                std::process::exit(2);
            }
        };
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let mut checker = Checker::new(CheckOptions {
            flagged_only,
            ..CheckOptions::default()
        });
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => checker.push(&chunk[..n]),
                Err(e) => {
                    eprintln!("check_memory: {file}: {e}");
                    std::process::exit(2);
                }
            }
        }
        let spans = checker.spans_read().max(1);
        let fed = LIVE.load(Relaxed) - base;
        let fed_peak = PEAK.load(Relaxed) - base;
        println!(
            "{file}{}:",
            if flagged_only { " --flagged-only" } else { "" }
        );
        println!(
            "  before finish: {} live, {} peak, {spans} spans",
            mb(fed),
            mb(fed_peak)
        );
        let held = checker.held_bytes();
        for (name, bytes) in &held {
            println!(
                "    {name:<26} {} {:6.1} B/span",
                mb(*bytes),
                *bytes as f64 / spans as f64
            );
        }
        let listed: usize = held.iter().map(|h| h.1).sum();
        println!(
            "    {:<26} {}",
            "(not listed above)",
            mb(fed.saturating_sub(listed))
        );
        let report = checker.finish();
        let kept = LIVE.load(Relaxed) - base;
        let peak = PEAK.load(Relaxed) - base;
        println!(
            "  finish: peak {} ({:.1} B/span), report keeps {} for {} rows",
            mb(peak),
            peak as f64 / spans as f64,
            mb(kept),
            report.rows.len()
        );
        let mut rows = Vec::new();
        report.rows.held_bytes(&mut rows);
        for (name, bytes) in &rows {
            println!("    {name:<26} {}", mb(*bytes));
        }
        let before = LIVE.load(Relaxed);
        let mut report = report;
        let entries = report.rollup.len();
        drop(std::mem::take(&mut report.rollup));
        println!(
            "    {:<26} {} for {entries} entries",
            "rollup",
            mb(before - LIVE.load(Relaxed))
        );
        drop(report);
        drop(chunk);
    }
}
