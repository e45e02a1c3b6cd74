//! The error convention shared by every module.
//!
//! Each module has its own error enum with a `Display` that reads well on its own (it is what
//! a CLI user or a page user sees). Every such enum also implements [`Coded`], which gives a
//! short, stable, machine-readable code. At the JS boundary the binding turns any `Coded`
//! error into a real `Error` object whose `message` is the `Display` text and whose `code`
//! property is the code, so callers can branch on `err.code` without parsing messages.

/// A stable machine-readable code for an error (`"budget_too_small"`, `"invalid_json"` ...).
///
/// Codes are part of the public API: never rename one, only add new ones.
pub trait Coded: std::fmt::Display {
    fn code(&self) -> &'static str;
}
