//! Writes a parsed [`Doc`] in canonical form: objects sorted (by code point for Python, by
//! UTF-16 code units for JCS), numbers re-laid out, strings minimally escaped. Iterative,
//! like the reader.

use std::cmp::Ordering;

use super::number::{es_number, python_float_repr};
use super::parse::{text_of, Doc, Member, Node, Text};
use super::{push_key_segment, CanonicalError, Form, Location, Report};

/// Key order for a form. Python compares code points, which is the same as comparing the
/// UTF-8 bytes; JCS compares UTF-16 code units, which differs only between U+E000..U+FFFF
/// and the supplementary planes.
pub(super) fn key_order(form: Form, a: &str, b: &str) -> Ordering {
    match form {
        Form::Python => a.as_bytes().cmp(b.as_bytes()),
        Form::Jcs => {
            if a.is_ascii() && b.is_ascii() {
                a.as_bytes().cmp(b.as_bytes())
            } else {
                a.encode_utf16().cmp(b.encode_utf16())
            }
        }
    }
}

/// Appends a JSON string literal: `"` `\` and C0 controls escaped the way both Python
/// (`ensure_ascii=False`) and RFC 8785 do; everything else verbatim.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0C => "\\f",
            0x00..=0x1F => "",
            _ => continue,
        };
        // `i` is an ASCII byte, so both slices end on char boundaries.
        out.push_str(&s[run..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        } else {
            out.push_str(esc);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

struct Frame {
    node: usize,
    /// Next child to visit.
    next: usize,
    /// Whether a child was written (a comma is due before the next one).
    wrote: bool,
    /// The child being written (for error paths).
    current: Option<usize>,
}

pub(super) fn write(
    doc: &mut Doc<'_>,
    form: Form,
    out: &mut String,
    report: &mut Report,
) -> Result<(), CanonicalError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending = Some(doc.root);
    loop {
        if let Some(id) = pending.take() {
            match doc.nodes[id] {
                Node::Array { len: 0, .. } => out.push_str("[]"),
                Node::Object { len: 0, .. } => out.push_str("{}"),
                Node::Array { .. } => {
                    out.push('[');
                    stack.push(Frame {
                        node: id,
                        next: 0,
                        wrote: false,
                        current: None,
                    });
                }
                Node::Object { start, len } => {
                    sort_members(doc, form, start, len);
                    out.push('{');
                    stack.push(Frame {
                        node: id,
                        next: 0,
                        wrote: false,
                        current: None,
                    });
                }
                node => {
                    if let Err((kind, offset)) = write_scalar(doc, form, node, out) {
                        let at = Location::at(doc.text.as_bytes(), offset, path_of(doc, &stack));
                        return Err(kind.with(at));
                    }
                }
            }
        }
        let Some(top) = stack.len().checked_sub(1) else {
            return Ok(());
        };
        match doc.nodes[stack[top].node] {
            Node::Array { start, len } => {
                let next = stack[top].next;
                if next == len {
                    out.push(']');
                    stack.pop();
                    continue;
                }
                if stack[top].wrote {
                    out.push(',');
                }
                let frame = &mut stack[top];
                frame.wrote = true;
                frame.current = Some(next);
                frame.next += 1;
                pending = Some(doc.elems[start + next]);
            }
            Node::Object { start, len } => {
                let mut next = stack[top].next;
                // Members are sorted (stably), so equal keys are adjacent and the last of a
                // run is the last in the input: the one Python's dict keeps.
                while next + 1 < len
                    && same_key(
                        doc,
                        doc.members[start + next],
                        doc.members[start + next + 1],
                    )
                {
                    stack[top].current = Some(next + 1);
                    let path = path_of(doc, &stack);
                    match form {
                        Form::Python => report.duplicate_keys.push(path),
                        Form::Jcs => {
                            let m = doc.members[start + next + 1];
                            let key = text_of(doc.text, &doc.decoded, m.key).to_string();
                            let at = Location::at(doc.text.as_bytes(), m.key_offset, path);
                            return Err(CanonicalError::DuplicateKey { key, at });
                        }
                    }
                    next += 1;
                }
                if next == len {
                    out.push('}');
                    stack.pop();
                    continue;
                }
                if stack[top].wrote {
                    out.push(',');
                }
                let m: Member = doc.members[start + next];
                write_text(out, doc, m.key);
                out.push(':');
                let frame = &mut stack[top];
                frame.wrote = true;
                frame.current = Some(next);
                frame.next = next + 1;
                pending = Some(m.value);
            }
            // Only containers are pushed on the stack.
            _ => {
                stack.pop();
            }
        }
    }
}

fn same_key(doc: &Doc<'_>, a: Member, b: Member) -> bool {
    text_of(doc.text, &doc.decoded, a.key) == text_of(doc.text, &doc.decoded, b.key)
}

fn sort_members(doc: &mut Doc<'_>, form: Form, start: usize, len: usize) {
    let (text, decoded) = (doc.text, doc.decoded.as_str());
    let members = &mut doc.members[start..start + len];
    let order = |a: &Member, b: &Member| {
        key_order(
            form,
            text_of(text, decoded, a.key),
            text_of(text, decoded, b.key),
        )
    };
    // Already-canonical input is common (re-hashing stored bodies): skip the sort then.
    if members
        .windows(2)
        .all(|w| order(&w[0], &w[1]) != Ordering::Greater)
    {
        return;
    }
    crate::sort::sort_by(members, order);
}

fn write_text(out: &mut String, doc: &Doc<'_>, t: Text) {
    match t {
        // A raw string had no escapes, hence no '"', '\' or control characters: copy it.
        Text::Raw { .. } => {
            out.push('"');
            out.push_str(text_of(doc.text, &doc.decoded, t));
            out.push('"');
        }
        Text::Decoded { .. } => write_string(out, text_of(doc.text, &doc.decoded, t)),
    }
}

/// A scalar that cannot be written in the requested form; located by the caller.
enum ScalarError {
    NonFinite(String),
    Unsafe(String),
    Syntax,
}

impl ScalarError {
    fn with(self, at: Location) -> CanonicalError {
        match self {
            ScalarError::NonFinite(lexeme) => CanonicalError::NonFinite { lexeme, at },
            ScalarError::Unsafe(lexeme) => CanonicalError::UnsafeInteger { lexeme, at },
            ScalarError::Syntax => CanonicalError::Syntax {
                expected: "a number",
                at,
            },
        }
    }
}

/// The largest integer a double holds exactly together with all smaller ones: 2^53 − 1.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Whether an integer lexeme can be written in the JCS form without changing its value.
///
/// JCS numbers are doubles. Integers within ±(2^53−1) are exact. Beyond that, a lexeme is
/// accepted only when it already *is* the ECMAScript form of its double (like RFC 8785's own
/// `295147905179352830000`), so canonical output reads back as itself; any other big integer
/// would be rounded, and two different ids would then share one hash, so it is refused.
pub(super) fn jcs_integer_ok(lexeme: &str) -> bool {
    let digits = lexeme.strip_prefix('-').unwrap_or(lexeme);
    if digits.len() <= 16 && digits.parse::<u64>().is_ok_and(|v| v <= MAX_SAFE_INTEGER) {
        return true;
    }
    let Ok(x) = lexeme.parse::<f64>() else {
        return false;
    };
    let mut es = String::with_capacity(24);
    es_number(x, &mut es) && es == lexeme
}

fn write_scalar(
    doc: &Doc<'_>,
    form: Form,
    node: Node,
    out: &mut String,
) -> Result<(), (ScalarError, usize)> {
    match node {
        Node::Null => out.push_str("null"),
        Node::True => out.push_str("true"),
        Node::False => out.push_str("false"),
        Node::Str(t) => write_text(out, doc, t),
        Node::NaN => out.push_str("NaN"),
        Node::Infinity => out.push_str("Infinity"),
        Node::NegInfinity => out.push_str("-Infinity"),
        Node::Int { start, end } => {
            let lexeme = &doc.text[start..end];
            if form == Form::Jcs && !jcs_integer_ok(lexeme) {
                return Err((ScalarError::Unsafe(lexeme.to_string()), start));
            }
            // JSON integers have no leading zeros, so the lexeme is canonical except `-0`.
            out.push_str(if lexeme == "-0" { "0" } else { lexeme });
        }
        Node::Float { start, end } => {
            let lexeme = &doc.text[start..end];
            let Ok(x) = lexeme.parse::<f64>() else {
                return Err((ScalarError::Syntax, start));
            };
            match form {
                Form::Python => python_float_repr(x, out),
                Form::Jcs => {
                    if !es_number(x, out) {
                        return Err((ScalarError::NonFinite(lexeme.to_string()), start));
                    }
                }
            }
        }
        Node::Array { .. } | Node::Object { .. } => {}
    }
    Ok(())
}

/// The JSON path of the value being written: `$`, `$.a[2]["odd key"]`.
fn path_of(doc: &Doc<'_>, stack: &[Frame]) -> String {
    let mut path = String::from("$");
    for frame in stack {
        let Some(i) = frame.current else { continue };
        match doc.nodes[frame.node] {
            Node::Array { .. } => {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
            }
            Node::Object { start, .. } => {
                push_key_segment(
                    &mut path,
                    text_of(doc.text, &doc.decoded, doc.members[start + i].key),
                );
            }
            _ => {}
        }
    }
    path
}
