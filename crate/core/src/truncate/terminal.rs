//! Terminal output: command echo and head, every error line of the dropped middle (with its
//! 1-based line number and a line of context), and a larger tail (seed 001 §4).
//!
//! Before cutting, noise that carries no information collapses: a run of identical lines
//! becomes the line once and `[... previous line repeated N more times ...]`, and a line of
//! carriage-return progress redraws (`45%\r46%\r...100%`) becomes its last frame and
//! `[... N progress redraws collapsed ...]`. A collapse happens only when it saves room, and
//! never hides an error: a redraw whose earlier frames match the error patterns is kept whole.
//!
//! The exit code is not looked for in the text: it travels beside it ([`super::Truncation`]
//! `exit_code`, and the header), and the marker says so.

use super::ends::{line_units, Shape, SpotStyle, Unit};
use super::lines::{same_bytes, Line};
use super::marker::plural;
use super::matcher::is_error_line;
use super::Ctx;

pub(crate) fn plan(ctx: &Ctx) -> (Vec<Unit>, Shape) {
    let t = &ctx.opts.terminal;
    let flags = ctx.error_flags();
    let units = if t.collapse {
        collapse(ctx, flags)
    } else {
        line_units(ctx, Some(flags))
    };
    let with_context = t.context_before + t.context_after > 0;
    (
        units,
        Shape {
            head_share: t.head_share,
            tail_share: t.tail_share,
            spots: Some(SpotStyle {
                before: t.context_before,
                after: t.context_after,
                location_after: true,
                arrows: with_context,
                what: if with_context {
                    ["error line with context", "error lines with context"]
                } else {
                    ["error line", "error lines"]
                },
                more: ["error line", "error lines"],
            }),
        },
    )
}

/// Units with identical-line runs and progress redraws collapsed.
fn collapse(ctx: &Ctx, flags: &[bool]) -> Vec<Unit> {
    let src = ctx.src;
    let lines = &ctx.lines;
    let mut units = Vec::with_capacity(lines.len());
    // Only lines with a `\r` can hold redraws; the split found them.
    let mut cr_lines = ctx.cr_lines.iter().copied().peekable();
    let mut i = 0;
    let bytes = src.as_bytes();
    let content_of = |l: &Line| &bytes[l.start..l.content_end];
    while i < lines.len() {
        let line = lines[i];
        while cr_lines.next_if(|&c| c < i).is_some() {}
        let has_cr = cr_lines.peek() == Some(&i);
        // Most lines of a log: no redraws, and a next line that differs. Their unit is the
        // line's, as `line_units` writes it, without the note and slicing checks below (a
        // 4 MiB build log has 80,000 such lines).
        let differs = lines
            .get(i + 1)
            .is_none_or(|n| !same_bytes(content_of(n), content_of(&line)));
        if !has_cr && differs {
            units.push(Unit {
                first_line: i,
                last_line: i,
                keep: [line.start, line.end],
                note: None,
                spot: flags[i],
                cost: ctx.measure(line.start, line.end) + usize::from(!line.has_terminator()),
            });
            i += 1;
            continue;
        }
        let content = line.content(src);
        let mut note = String::new();
        let keep_start = match has_cr.then(|| redraws(ctx, &line)).flatten() {
            Some((start, n)) => {
                note.push_str(&format!(
                    "[... {} collapsed ...]\n",
                    plural(n, "progress redraw")
                ));
                start
            }
            None => line.start,
        };
        let mut j = i + 1;
        while j < lines.len() && same_bytes(lines[j].content(src).as_bytes(), content.as_bytes()) {
            j += 1;
        }
        let mut last = i;
        if j - i >= 2 {
            let repeat = format!(
                "[... previous line repeated {} more {} ...]\n",
                j - i - 1,
                if j - i - 1 == 1 { "time" } else { "times" }
            );
            let saved: usize = lines[i + 1..j]
                .iter()
                .map(|l| ctx.measure(l.start, l.end))
                .sum();
            if saved > ctx.m.of(&repeat) {
                note.push_str(&repeat);
                last = j - 1;
            }
        }
        let note = (!note.is_empty()).then_some(note);
        units.push(Unit::new(
            ctx,
            i,
            last,
            [keep_start, line.end],
            note,
            flags[i],
        ));
        i = last + 1;
    }
    units
}

/// For a line of `\r` redraws worth collapsing: where its last visible frame starts, and how
/// many earlier frames it replaces.
fn redraws(ctx: &Ctx, line: &Line) -> Option<(usize, usize)> {
    let content = line.content(ctx.src);
    if !content.contains('\r') {
        return None;
    }
    let mut frames = 0usize;
    let mut last_start = None;
    let mut at = 0;
    for seg in content.split('\r') {
        if !seg.is_empty() {
            frames += 1;
            last_start = Some(at);
        }
        at += seg.len() + 1;
    }
    let last_start = last_start?;
    let earlier = frames - 1;
    if earlier == 0 || is_error_line(&content.as_bytes()[..last_start]) {
        return None;
    }
    let note_cost = ctx.m.of(&format!(
        "[... {} collapsed ...]\n",
        plural(earlier, "progress redraw")
    ));
    (ctx.m.of(&content[..last_start]) > note_cost).then_some((line.start + last_start, earlier))
}
