//! Search results and lists: keep whole results from the top, never half a result, and say
//! how many were dropped (seed 001: "Head-only truncation is acceptable (keep top N
//! results, drop lower-ranked)").
//!
//! What one result is, is read from the text: blocks separated by blank lines (web search
//! results), numbered entries with their continuation lines (`1. Title` / `   url`), grep
//! context groups separated by `--`, or else one line each (`path:12:match`, `ls`).

use super::ends::{self, line_units, Shape};
use super::marker::{choose_level, Kept, Place, Spec};
use super::output::Out;
use super::{Built, Ctx};

/// Results as line-index ranges `[start, end)` that tile the lines.
pub(crate) struct Results {
    groups: Vec<[usize; 2]>,
}

pub(crate) fn plan(ctx: &Ctx) -> Results {
    Results {
        groups: segment(ctx),
    }
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// `1. `, `12) `, `[3] `, `#4 ` at the left margin.
fn is_numbered(s: &str) -> bool {
    let b = s.as_bytes();
    let (open, digits_at) = match b.first() {
        Some(b'[') => (true, 1),
        Some(b'#') => (false, 1),
        _ => (false, 0),
    };
    let digits = b[digits_at..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 3 {
        return false;
    }
    let rest = &b[digits_at + digits..];
    match (open, b.first()) {
        (true, _) => rest.starts_with(b"] ") || rest == b"]",
        (false, Some(b'#')) => matches!(rest.first(), None | Some(b' ')),
        _ => rest.starts_with(b". ") || rest.starts_with(b") "),
    }
}

fn segment(ctx: &Ctx) -> Vec<[usize; 2]> {
    let src = ctx.src;
    let lines = &ctx.lines;
    let n = lines.len();
    let content = |i: usize| lines[i].content(src);
    let split_where = |starts: &dyn Fn(usize) -> bool| -> Vec<[usize; 2]> {
        let mut groups: Vec<[usize; 2]> = Vec::new();
        let mut start = 0;
        for i in 1..n {
            if starts(i) {
                groups.push([start, i]);
                start = i;
            }
        }
        if n > 0 {
            groups.push([start, n]);
        }
        groups
    };
    // Blocks separated by blank lines: a block starts at a non-blank line after a blank one.
    if (0..n).any(|i| is_blank(content(i))) {
        let groups = split_where(&|i| !is_blank(content(i)) && is_blank(content(i - 1)));
        if groups.len() >= 2 {
            return groups;
        }
    }
    if (0..n).filter(|&i| is_numbered(content(i))).count() >= 2 {
        return split_where(&|i| is_numbered(content(i)));
    }
    if (0..n).any(|i| content(i) == "--") {
        return split_where(&|i| content(i - 1) == "--");
    }
    (0..n).map(|i| [i, i + 1]).collect()
}

pub(crate) fn build<'a>(
    ctx: &Ctx<'a>,
    results: &Results,
    limit: usize,
) -> Result<Built<'a>, usize> {
    let m = ctx.m;
    let src = ctx.src;
    let lines = &ctx.lines;
    let n = lines.len();
    let groups = &results.groups;
    let total = groups.len();
    let planned = Spec {
        bytes: src.len(),
        lines: n,
        place: Place::End,
        span: Some((1, n)),
        total_lines: n,
        results: Some((total, total)),
        kept: vec![Kept::Results(total)],
        exit_code: ctx.exit_reported(),
        fetch: ctx.fetch_at(src.len()),
    }
    .widened(src.len(), n);
    let level = choose_level(limit, |l| m.of(&planned.render(l)));
    let mut k = 0;
    if let Some(level) = level {
        let mut left = limit - m.of(&planned.render(level));
        while k < total {
            let [a, b] = groups[k];
            let text = &src[lines[a].start..lines[b - 1].end];
            let cost = m.of(text) + usize::from(!text.ends_with('\n'));
            if cost > left {
                break;
            }
            left -= cost;
            k += 1;
        }
        if k > 0 {
            let kept_end = lines[groups[k - 1][1] - 1].end;
            let kept_lines = groups[k - 1][1];
            let mut out = Out::new(src);
            out.keep(0, kept_end);
            out.newline_if_needed();
            let spec = Spec {
                bytes: src.len() - kept_end,
                lines: n - kept_lines,
                place: Place::End,
                span: Some((kept_lines + 1, n)),
                total_lines: n,
                results: Some((total - k, total)),
                kept: vec![Kept::Results(k)],
                exit_code: ctx.exit_reported(),
                fetch: ctx.fetch_at(kept_end),
            };
            let marker = spec.render(level);
            out.marker(&marker);
            return Ok(Built::new(out, Some(marker.trim_end().to_string())));
        }
    }
    // Not even the first result fits: keep the head of it, line by line.
    let shape = Shape {
        head_share: 1.0,
        tail_share: 0.0,
        spots: None,
    };
    ends::build(ctx, &line_units(ctx, None), &shape, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_entries() {
        assert!(is_numbered("1. Title"));
        assert!(is_numbered("12) x"));
        assert!(is_numbered("[3] x"));
        assert!(is_numbered("#4 x"));
        assert!(!is_numbered("2024. year"));
        assert!(!is_numbered("1.5 ms"));
        assert!(!is_numbered("  1. indented"));
    }
}
