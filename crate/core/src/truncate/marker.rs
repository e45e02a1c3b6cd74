//! The marker: what the model reads where content was removed.
//!
//! Seed 001: "The marker is part of the evidence. Write it like the model will read it."
//! A marker states exactly how many bytes and lines were omitted and from where, what was
//! kept, that the exit code is reported separately (when it is), and how to fetch the rest
//! (when the caller gave an id). Its counts are computed from the output actually written.
//!
//! Markers come in three [`Level`]s so small budgets still get an honest one: `Full` (a
//! sentence per fact), `Compact` (one line of numbers) and `Minimal` (the byte count and the
//! fetch call). A cutter reserves room for its marker *before* choosing what to keep, by
//! rendering a widened [`Spec`] whose every number is at its upper bound; the real marker,
//! rendered afterwards, can only be shorter (numbers have no more digits, optional clauses
//! only disappear), so the budget holds without a second pass.

use std::fmt::Write;

/// How much the marker says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Minimal,
    Compact,
    Full,
}

/// Picks the most informative level that leaves room for content: `Full` when it takes at
/// most a quarter of the budget, `Compact` at most half, else `Minimal` if it fits at all.
pub(crate) fn choose_level(limit: usize, reserve: impl Fn(Level) -> usize) -> Option<Level> {
    if reserve(Level::Full) * 4 <= limit {
        Some(Level::Full)
    } else if reserve(Level::Compact) * 2 <= limit {
        Some(Level::Compact)
    } else if reserve(Level::Minimal) <= limit {
        Some(Level::Minimal)
    } else {
        None
    }
}

/// Where the omitted region lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Start,
    End,
    Middle,
    /// Outside a requested line range (`file` with a range).
    Outside,
    /// The whole text (nothing fit but the marker).
    Whole,
}

/// What was kept, as the full marker describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    /// Lines `1..=n`.
    Head(usize),
    /// Lines `n..=total`.
    Tail(usize),
    /// `count` highlighted lines shown below the marker, described by `what`
    /// (singular, plural).
    Spots {
        count: usize,
        what: [&'static str; 2],
    },
    /// The first `count` results, whole.
    Results(usize),
    /// Lines `from..=to` of a requested range `req_from..=req_to`.
    Range {
        from: usize,
        to: usize,
        req_from: usize,
        req_to: usize,
    },
}

/// Where to fetch the omitted bytes: `tool(id="...", offset=N)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FetchAt {
    pub tool: String,
    /// Already a JSON string literal (quoted and escaped).
    pub id: String,
    pub offset: u64,
}

impl FetchAt {
    pub fn call(&self) -> String {
        format!("{}(id={}, offset={})", self.tool, self.id, self.offset)
    }
}

/// Everything a marker can say about one omitted region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    pub bytes: usize,
    pub lines: usize,
    pub place: Place,
    /// 1-based first and last line of the region.
    pub span: Option<(usize, usize)>,
    pub total_lines: usize,
    /// `(omitted, total)` results, for lists.
    pub results: Option<(usize, usize)>,
    pub kept: Vec<Kept>,
    pub exit_code: bool,
    pub fetch: Option<FetchAt>,
}

impl Spec {
    /// The same spec with every number at its upper bound (at least 10, so that "0 lines"
    /// and "1 line" are never longer than the reserve): bytes up to `bytes_bound`, line
    /// numbers and counts up to `lines_bound`. The fetch offset is kept as given: a planning
    /// spec must carry the largest offset the cutter could report.
    pub fn widened(&self, bytes_bound: usize, lines_bound: usize) -> Spec {
        let b = bytes_bound.max(10);
        let l = lines_bound.max(10);
        Spec {
            bytes: b,
            lines: l,
            place: self.place,
            span: self.span.map(|_| (l, l + 1)),
            // One above the bound, so `Tail(l)` renders as a range ("lines l-(l+1)"), never
            // as the shorter single line.
            total_lines: l + 1,
            results: self.results.map(|_| (l, l)),
            kept: self
                .kept
                .iter()
                .map(|k| match k {
                    Kept::Head(_) => Kept::Head(l),
                    Kept::Tail(_) => Kept::Tail(l),
                    Kept::Spots { what, .. } => Kept::Spots {
                        count: l,
                        what: *what,
                    },
                    Kept::Results(_) => Kept::Results(l),
                    Kept::Range { .. } => Kept::Range {
                        from: l,
                        to: l + 1,
                        req_from: l,
                        req_to: l + 1,
                    },
                })
                .collect(),
            exit_code: self.exit_code,
            fetch: self.fetch.as_ref().map(|f| FetchAt {
                tool: f.tool.clone(),
                id: f.id.clone(),
                offset: f.offset.max(10),
            }),
        }
    }

    /// The marker line (ending with `\n`).
    pub fn render(&self, level: Level) -> String {
        let mut s = String::new();
        match level {
            Level::Minimal => {
                let _ = write!(s, "[... {} bytes omitted", self.bytes);
                if let Some(f) = &self.fetch {
                    let _ = write!(s, "; {}", f.call());
                }
                s.push_str(" ...]\n");
            }
            Level::Compact => {
                s.push_str("[... ");
                self.what(&mut s);
                self.place(&mut s);
                if self.exit_code {
                    s.push_str("; exit code reported separately");
                }
                if let Some(f) = &self.fetch {
                    let _ = write!(s, "; more: {}", f.call());
                }
                s.push_str(" ...]\n");
            }
            Level::Full => {
                s.push_str("[... truncated: ");
                self.what(&mut s);
                self.place(&mut s);
                s.push('.');
                if !self.kept.is_empty() {
                    s.push_str(" Kept: ");
                    for (i, k) in self.kept.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        self.kept_item(&mut s, k);
                    }
                    s.push('.');
                }
                if self.exit_code {
                    s.push_str(" Exit code reported separately.");
                }
                if let Some(f) = &self.fetch {
                    let _ = write!(s, " Fetch the omitted part with {}.", f.call());
                }
                s.push_str(" ...]\n");
            }
        }
        s
    }

    fn what(&self, s: &mut String) {
        match self.results {
            Some((omitted, total)) => {
                let _ = write!(
                    s,
                    "{omitted} of {total} results ({} bytes, {}) omitted",
                    self.bytes,
                    plural(self.lines, "line")
                );
            }
            None => {
                let _ = write!(
                    s,
                    "{} bytes ({}) omitted",
                    self.bytes,
                    plural(self.lines, "line")
                );
            }
        }
    }

    fn place(&self, s: &mut String) {
        s.push_str(match self.place {
            Place::Start => " from the start",
            Place::End => " from the end",
            Place::Middle => " from the middle",
            Place::Outside => " outside the requested range",
            Place::Whole => "",
        });
        if let Some((a, b)) = self.span {
            if a == b {
                let _ = write!(s, ", line {a} of {}", self.total_lines);
            } else {
                let _ = write!(s, ", lines {a}-{b} of {}", self.total_lines);
            }
        }
    }

    fn kept_item(&self, s: &mut String, k: &Kept) {
        match k {
            Kept::Head(n) => {
                let _ = write!(s, "head ({})", lines_span(1, *n));
            }
            Kept::Tail(n) => {
                let _ = write!(s, "tail ({})", lines_span(*n, self.total_lines));
            }
            Kept::Spots { count, what } => {
                let noun = if *count == 1 { what[0] } else { what[1] };
                let _ = write!(s, "{count} {noun} shown below with line numbers");
            }
            Kept::Results(n) => {
                let _ = write!(s, "the first {} whole", plural(*n, "result"));
            }
            Kept::Range {
                from,
                to,
                req_from,
                req_to,
            } => {
                let _ = write!(
                    s,
                    "{} of the requested {}",
                    lines_span(*from, *to),
                    lines_span(*req_from, *req_to)
                );
            }
        }
    }
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn lines_span(a: usize, b: usize) -> String {
    if a == b {
        format!("line {a}")
    } else {
        format!("lines {a}-{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            bytes: 6842,
            lines: 143,
            place: Place::Middle,
            span: Some((41, 183)),
            total_lines: 12000,
            results: None,
            kept: vec![
                Kept::Head(40),
                Kept::Tail(184),
                Kept::Spots {
                    count: 3,
                    what: ["error line with context", "error lines with context"],
                },
            ],
            exit_code: true,
            fetch: Some(FetchAt {
                tool: "get_more".into(),
                id: "\"call_7\"".into(),
                offset: 2048,
            }),
        }
    }

    #[test]
    fn full_marker_reads_like_the_seed_asks() {
        assert_eq!(
            spec().render(Level::Full),
            "[... truncated: 6842 bytes (143 lines) omitted from the middle, lines 41-183 of \
             12000. Kept: head (lines 1-40), tail (lines 184-12000), 3 error lines with context \
             shown below with line numbers. Exit code reported separately. Fetch the \
             omitted part with get_more(id=\"call_7\", offset=2048). ...]\n"
        );
        assert_eq!(
            spec().render(Level::Compact),
            "[... 6842 bytes (143 lines) omitted from the middle, lines 41-183 of 12000; exit \
             code reported separately; more: get_more(id=\"call_7\", offset=2048) ...]\n"
        );
        assert_eq!(
            spec().render(Level::Minimal),
            "[... 6842 bytes omitted; get_more(id=\"call_7\", offset=2048) ...]\n"
        );
    }

    #[test]
    fn widened_is_never_shorter() {
        let s = spec();
        for bytes in [0, 1, 9, 10, 6842] {
            for lines in [0, 1, 2, 143] {
                let mut actual = s.clone();
                actual.bytes = bytes;
                actual.lines = lines;
                actual.span = Some((lines.max(1), lines.max(1)));
                actual.kept = vec![
                    Kept::Head(1),
                    Kept::Spots {
                        count: 1,
                        what: ["error line with context", "error lines with context"],
                    },
                ];
                let wide = s.widened(6842, 12000);
                for level in [Level::Minimal, Level::Compact, Level::Full] {
                    assert!(actual.render(level).len() <= wide.render(level).len());
                }
            }
        }
    }
}
