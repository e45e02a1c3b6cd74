//! The two line classifiers the semantic cutters rely on: "is this an error line?" for
//! terminal output and "is this a definition?" for source files.
//!
//! No regex engine: the error matcher is one pass over the line that stops only at word
//! starts (and at a capital `E` inside a word, for `TypeError`-style names), dispatches on
//! the first letter and compares a handful of keywords case-insensitively. It matches
//! everything the seed's `ERROR_PATTERNS` match on ASCII text (a differential test checks
//! this against the reference script), plus the markers of real toolchains the seed misses:
//! `panicked at`, `npm ERR!`, `AssertionError`, `Segmentation fault`, `exit status 1`,
//! `core dumped`, `Uncaught`, `cannot`, `could not`, `unable to`, `undefined reference` ...
//!
//! Word boundaries follow the seed's `\b` with one deliberate difference: only ASCII letters,
//! digits and `_` are word characters, so a keyword next to a non-ASCII character still
//! matches (the matcher errs towards keeping a line).

/// A keyword checked at a word start.
struct Keyword {
    text: &'static [u8],
    /// Require a word boundary after the keyword (`\bdenied\b`); otherwise it is a prefix
    /// (`\bfail` matches `failed`, `failure`).
    bounded: bool,
}

const fn kw(text: &'static str, bounded: bool) -> Keyword {
    Keyword {
        text: text.as_bytes(),
        bounded,
    }
}

/// Keywords by their first (lower-case) letter.
fn keywords(first: u8) -> &'static [Keyword] {
    const A: &[Keyword] = &[kw("abort", false), kw("assertion", false)];
    const C: &[Keyword] = &[
        kw("cannot", true),
        kw("could not", true),
        kw("couldn't", true),
        kw("core dumped", true),
        kw("critical", true),
    ];
    const D: &[Keyword] = &[kw("denied", true)];
    const E: &[Keyword] = &[
        kw("error", true),
        kw("errors", true),
        kw("err", true),
        kw("errno", true),
        kw("exception", false),
        kw("exit code", true),
        kw("exit status", true),
        kw("exited with", true),
    ];
    const F: &[Keyword] = &[kw("fail", false), kw("fatal", false)];
    const K: &[Keyword] = &[kw("killed", true)];
    const N: &[Keyword] = &[
        kw("not found", true),
        kw("no such file", true),
        kw("non-zero", true),
        kw("nonzero", true),
    ];
    const O: &[Keyword] = &[kw("out of memory", true)];
    const P: &[Keyword] = &[
        kw("permission", false),
        kw("panic", true),
        kw("panicked", false),
    ];
    const R: &[Keyword] = &[kw("refused", true)];
    const S: &[Keyword] = &[kw("segfault", false), kw("segmentation fault", false)];
    const T: &[Keyword] = &[kw("traceback", false), kw("timed out", true)];
    const U: &[Keyword] = &[
        kw("unable to", true),
        kw("undefined reference", true),
        kw("unresolved", false),
        kw("uncaught", false),
        kw("unhandled", false),
    ];
    match first {
        b'a' => A,
        b'c' => C,
        b'd' => D,
        b'e' => E,
        b'f' => F,
        b'k' => K,
        b'n' => N,
        b'o' => O,
        b'p' => P,
        b'r' => R,
        b's' => S,
        b't' => T,
        b'u' => U,
        _ => &[],
    }
}

/// ASCII letters, digits and `_`.
static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || b == b'_';
        i += 1;
    }
    t
};

#[inline]
fn is_word(b: u8) -> bool {
    WORD[b as usize]
}

#[inline]
fn starts_ci(hay: &[u8], at: usize, needle: &[u8]) -> bool {
    hay.len() - at >= needle.len()
        && hay[at..at + needle.len()]
            .iter()
            .zip(needle)
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
}

#[inline]
fn bounded_at(hay: &[u8], end: usize) -> bool {
    end == hay.len() || !is_word(hay[end])
}

fn matches_at_word_start(line: &[u8], i: usize) -> bool {
    let first = line[i].to_ascii_lowercase();
    for k in keywords(first) {
        if starts_ci(line, i, k.text) && (!k.bounded || bounded_at(line, i + k.text.len())) {
            return true;
        }
    }
    // `\breturned \d+`
    first == b'r'
        && starts_ci(line, i, b"returned ")
        && line.get(i + 9).is_some_and(|b| b.is_ascii_digit())
}

/// `TypeError`, `AssertionError`, `NullPointerException`: a capital `E` inside a word, after
/// a lower-case letter or digit.
fn matches_camel(line: &[u8], j: usize) -> bool {
    let prev = line[j - 1];
    if !(prev.is_ascii_lowercase() || prev.is_ascii_digit()) {
        return false;
    }
    (line[j..].starts_with(b"Error") && bounded_at(line, j + 5))
        || line[j..].starts_with(b"Exception")
}

/// Whether a line (without its terminator) reports an error or failure.
pub(crate) fn is_error_line(line: &[u8]) -> bool {
    let n = line.len();
    let mut i = 0;
    while i < n {
        if !is_word(line[i]) {
            i += 1;
            continue;
        }
        if matches_at_word_start(line, i) {
            return true;
        }
        let mut j = i + 1;
        while j < n && is_word(line[j]) {
            if line[j] == b'E' && matches_camel(line, j) {
                return true;
            }
            j += 1;
        }
        i = j;
    }
    false
}

/// Whether a line (without its terminator) starts a definition: a function, method, class,
/// struct, enum, trait, impl, module, interface, type or exported binding, in Rust, Python,
/// JavaScript/TypeScript, Go, Java/C#/Kotlin, Ruby, and C-style `type name(args) {` lines.
pub(crate) fn is_definition_line(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let mut rest = &line[indent..];
    let mut modifiers = false;
    let mut exported = false;
    loop {
        let before = rest.len();
        for m in MODIFIERS {
            if let Some(r) = rest.strip_prefix(m) {
                if *m == "export " {
                    exported = true;
                }
                if matches!(*m, "public " | "private " | "protected " | "internal ") {
                    modifiers = true;
                }
                rest = r.trim_start_matches(' ');
                break;
            }
        }
        if rest.len() == before {
            break;
        }
    }
    if exported || modifiers {
        return !rest.is_empty();
    }
    for k in KEYWORDS {
        if let Some(r) = rest.strip_prefix(k) {
            if r.starts_with([' ', '<', '(', '!', '*', '\t']) || r.is_empty() && *k == "impl" {
                return true;
            }
        }
    }
    // C-style `int main(int argc, char **argv) {` at the left margin.
    indent == 0
        && rest.ends_with('{')
        && rest.contains('(')
        && rest
            .as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && !CONTROL.iter().any(|c| {
            rest.strip_prefix(c)
                .is_some_and(|r| r.starts_with([' ', '(', '{']))
        })
        && !rest.contains(" = ")
}

const MODIFIERS: &[&str] = &[
    "pub(crate) ",
    "pub(super) ",
    "pub ",
    "export ",
    "default ",
    "async ",
    "static ",
    "public ",
    "private ",
    "protected ",
    "internal ",
    "abstract ",
    "final ",
    "unsafe ",
    "extern \"C\" ",
    "override ",
    "sealed ",
    "open ",
    "data ",
    "inline ",
    "virtual ",
];

const KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "impl",
    "mod",
    "macro_rules",
    "union",
    "type",
    "const fn",
    "class",
    "def",
    "func",
    "function",
    "interface",
    "module",
    "namespace",
    "object",
    "record",
];

const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "return", "else", "do", "match", "catch", "try",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> bool {
        is_error_line(s.as_bytes())
    }

    #[test]
    fn seed_patterns_match() {
        for line in [
            "error: something",
            "Error: x",
            "ERROR x",
            "x error",
            "build failed",
            "FAILED tests/a.py::t",
            "Failure",
            "java.lang.Exception: boom",
            "Traceback (most recent call last):",
            "aborting",
            "fatal: not a git repository",
            "Permission denied",
            "bash: foo: command not found",
            "ls: cannot access: No such file or directory",
            "Process finished with exit code 1",
            "process returned 3",
            "Segfault at 0x0",
        ] {
            assert!(err(line), "{line}");
        }
    }

    #[test]
    fn toolchain_markers_match() {
        for line in [
            "thread 'main' panicked at src/main.rs:2:5:",
            "error[E0308]: mismatched types",
            "npm ERR! code ELIFECYCLE",
            "E       AssertionError: assert 1 == 2",
            "TypeError: undefined is not a function",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "Segmentation fault (core dumped)",
            "exit status 2",
            "Uncaught ReferenceError: x is not defined",
            "/usr/bin/ld: undefined reference to `foo'",
            "error Command failed with exit code 1.",
            "Found 3 errors.",
            "curl: (7) Failed to connect: Connection refused",
            "make: *** [all] Killed",
        ] {
            assert!(err(line), "{line}");
        }
    }

    #[test]
    fn ordinary_lines_do_not_match() {
        for line in [
            "Compiling serde v1.0.200",
            "   Compiling toolslice v0.1.0",
            "test result: ok. 12 passed; 0 ignored",
            "mirror terror errand",
            "error_code = 0",
            "profiles.release.panic_strategy",
            "",
            "    Finished dev [unoptimized] target(s) in 1.2s",
            "returned none",
            "Errors are values",
        ] {
            // "Errors are values" is an honest false positive of `\berrors\b`; keep the rest.
            if line == "Errors are values" {
                assert!(err(line));
                continue;
            }
            assert!(!err(line), "{line}");
        }
    }

    #[test]
    fn definitions() {
        for line in [
            "fn main() {",
            "pub(crate) fn split(x: u8) -> u8 {",
            "    pub async fn run(&self) {",
            "impl<T> Foo for Bar<T> {",
            "impl Foo {",
            "struct Point {",
            "pub enum Kind {",
            "macro_rules! m {",
            "class Foo(Base):",
            "    def method(self):",
            "async def main():",
            "func (s *Server) Serve() error {",
            "function foo(a, b) {",
            "export const handler = async () => {",
            "export default function App() {",
            "interface Props {",
            "public static void main(String[] args) {",
            "int main(int argc, char **argv) {",
            "module Foo",
            "type Alias = u32;",
        ] {
            assert!(is_definition_line(line), "{line}");
        }
        for line in [
            "    let x = 1;",
            "if (x) {",
            "    return foo(x);",
            "// fn commented() {}",
            "# def commented():",
            "}",
            "functional programming",
            "x = foo(1) {",
        ] {
            assert!(!is_definition_line(line), "{line}");
        }
    }
}
