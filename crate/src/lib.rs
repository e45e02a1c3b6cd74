//! # toolslice
//!
//! LLM agents call tools, and the tool results are cut, rewritten or redacted before they
//! reach the model. Traces record that the tool succeeded and store its full output, so a run
//! looks green while the model never saw the exit code, the error line or the config key it
//! needed. toolslice proves what the model actually saw of each tool result (**check**), and
//! packs tool results so that what it sees is the evidence it needs (**pack**).
//!
//! The crate is a pure Rust core; `wasm` (compiled for `wasm32` only) is the one thin module
//! that exposes it to JavaScript. Every front end (the CLI, the static page, Node, Deno and
//! edge workers) calls the same functions.

mod bytes;
pub mod check;
pub mod error;
pub mod formats;
mod intern;
pub mod lines;
pub mod pack;
pub mod redact;
pub mod runs;
mod sort;
pub mod span;
pub mod truncate;

pub mod canonical;
pub mod gate;
pub mod hash;
pub mod hop;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// Talc instead of Rust's default wasm allocator (dlmalloc): the checker keeps a row of a
/// dozen strings for every flagged span, and dlmalloc's malloc/free were a tenth of its
/// profile in wasm.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
