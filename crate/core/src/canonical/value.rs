//! Canonical text of a [`serde_json::Value`]: for values that arrive already parsed (from
//! JavaScript through serde-wasm-bindgen, or from serde). The rules are those of the text
//! canonicaliser; numbers are whatever serde_json kept (`u64`, `i64` exactly, else `f64`), so
//! prefer [`super::canonicalize`] on the original text when big integers matter. The same
//! writer serves [`super::Tree`], the hash-free value of text read from untrusted input.

use serde_json::{Number, Value};

use super::number::{es_number, python_float_repr};
use super::write::{jcs_integer_ok, key_order, write_string};
use super::{push_key_segment, CanonicalError, Form, Location};

/// Values nested deeper than this are refused (the writer recurses, and a wasm stack is
/// small). Text input is read iteratively and has no such limit.
pub const MAX_VALUE_DEPTH: usize = 1000;

/// The canonical text of a parsed JSON value.
pub fn canonicalize_value(value: &Value, form: Form) -> Result<String, CanonicalError> {
    write_root(value, form)
}

/// What the writer needs of a parsed value: [`Value`] and [`super::Tree`] give the same.
pub(super) enum Shape<'a, T> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
    Array(&'a [T]),
    /// The members in input order; a repeated key (only a [`super::Tree`] has them) keeps
    /// its last value, as a `Value`'s map and Python's `json.loads` keep it.
    Object(Vec<(&'a str, &'a T)>),
}

pub(super) trait Parsed: Sized {
    fn shape(&self) -> Shape<'_, Self>;
}

impl Parsed for Value {
    fn shape(&self) -> Shape<'_, Value> {
        match self {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(n),
            Value::String(s) => Shape::String(s),
            Value::Array(items) => Shape::Array(items),
            Value::Object(map) => Shape::Object(map.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        }
    }
}

pub(super) fn write_root<T: Parsed>(value: &T, form: Form) -> Result<String, CanonicalError> {
    let mut out = String::new();
    let mut path = String::from("$");
    write_value(value, form, &mut out, &mut path, 0)?;
    Ok(out)
}

fn write_value<T: Parsed>(
    value: &T,
    form: Form,
    out: &mut String,
    path: &mut String,
    depth: usize,
) -> Result<(), CanonicalError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(CanonicalError::TooDeep { path: path.clone() });
    }
    match value.shape() {
        Shape::Null => out.push_str("null"),
        Shape::Bool(true) => out.push_str("true"),
        Shape::Bool(false) => out.push_str("false"),
        Shape::String(s) => write_string(out, s),
        Shape::Number(n) => {
            if n.is_u64() || n.is_i64() {
                let mut buf = [0u8; 20];
                let start = out.len();
                match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => out.push_str(crate::bytes::itoa_u64(u, &mut buf)),
                    (None, Some(i)) => {
                        out.push('-');
                        out.push_str(crate::bytes::itoa_u64(i.unsigned_abs(), &mut buf));
                    }
                    (None, None) => out.push('0'),
                }
                if form == Form::Jcs && !jcs_integer_ok(&out[start..]) {
                    let lexeme = out[start..].to_string();
                    return Err(CanonicalError::UnsafeInteger {
                        lexeme,
                        at: Location::path(path.clone()),
                    });
                }
            } else {
                // serde_json never stores a non-finite f64.
                let x = n.as_f64().unwrap_or(f64::NAN);
                match form {
                    Form::Python => python_float_repr(x, out),
                    Form::Jcs => {
                        if !es_number(x, out) {
                            return Err(CanonicalError::NonFinite {
                                lexeme: n.to_string(),
                                at: Location::path(path.clone()),
                            });
                        }
                    }
                }
            }
        }
        Shape::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let len = path.len();
                path.push('[');
                path.push_str(crate::bytes::itoa_u64(i as u64, &mut [0; 20]));
                path.push(']');
                write_value(item, form, out, path, depth + 1)?;
                path.truncate(len);
            }
            out.push(']');
        }
        Shape::Object(mut entries) => {
            // A stable sort: a repeated key's members stay in input order, the last kept.
            crate::sort::sort_by(&mut entries, |a, b| key_order(form, a.0, b.0));
            out.push('{');
            let mut written = 0;
            for (i, &(key, item)) in entries.iter().enumerate() {
                if entries.get(i + 1).is_some_and(|next| next.0 == key) {
                    if form == Form::Jcs {
                        let mut at = path.clone();
                        push_key_segment(&mut at, key);
                        return Err(CanonicalError::DuplicateKey {
                            key: key.to_string(),
                            at: Location::path(at),
                        });
                    }
                    continue;
                }
                if written > 0 {
                    out.push(',');
                }
                written += 1;
                write_string(out, key);
                out.push(':');
                let len = path.len();
                push_key_segment(path, key);
                write_value(item, form, out, path, depth + 1)?;
                path.truncate(len);
            }
            out.push('}');
        }
    }
    Ok(())
}
