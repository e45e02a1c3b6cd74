//! Newline search, ours against memchr, in wasm (no wasm-bindgen: two plain exports that
//! Node times). Build and run:
//!   CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128" \
//!     cargo build --release --target wasm32-unknown-unknown -p toolslice --example newline_scan_wasm
//!   node scripts/newline_scan_wasm.mjs
#[path = "newline_scan/kernels.rs"]
mod kernels;

use std::cell::RefCell;

thread_local! {
    static HAY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Builds the input (outside the timed call).
#[no_mangle]
pub extern "C" fn prepare(line_len: u32, total: u32) {
    HAY.with(|h| *h.borrow_mut() = kernels::haystack(line_len as usize, total as usize));
}

/// Lines found with search `which` (0 ours, 1 memchr).
#[no_mangle]
pub extern "C" fn count(which: u32) -> u32 {
    HAY.with(|h| kernels::count_lines(which, &h.borrow()) as u32)
}
