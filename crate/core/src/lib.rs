//! # toolslice
//!
//! LLM agents call tools, and the tool results are cut, rewritten or redacted before they
//! reach the model. Traces record that the tool succeeded and store its full output, so a run
//! looks green while the model never saw the exit code, the error line or the config key it
//! needed. toolslice proves what the model actually saw of each tool result (**check**), and
//! packs tool results so that what it sees is the evidence it needs (**pack**).
//!
//! This crate is the pure Rust core: plain Rust, no wasm-bindgen, js-sys or allocator, usable
//! and testable from Rust on its own. The package `toolslice-wasm` (`crate/wasm`) is the thin
//! binding that exposes it to JavaScript; every front end (the CLI, the static page, Node,
//! Deno and edge workers) calls the same functions through it.

mod bytes;
pub mod check;
pub mod error;
pub mod formats;
mod intern;
/// Names crafted to share the name tables' hash: for the stress example (`scripts/stress`).
#[doc(hidden)]
pub use intern::names_of_one_hash;
pub mod lines;
pub mod pack;
pub mod pipeline;
#[cfg(test)]
mod real_texts;
pub mod record;
pub mod redact;
pub mod runs;
mod sort;
pub mod span;
pub mod truncate;

pub mod canonical;
pub mod gate;
pub mod hash;
pub mod hop;
