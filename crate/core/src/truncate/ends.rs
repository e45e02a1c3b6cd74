//! Keep both ends of a sequence of lines, and the spotlighted lines of the dropped middle.
//!
//! Every line-based pattern is this one procedure with different settings: `head` is all
//! head share, `tail` all tail share, `head_tail` splits the two, `terminal` adds error
//! lines (with context) from the middle and collapses repeats first, and a whole-file read
//! adds definition lines. Sharing the procedure means sharing its guarantees:
//!
//! 1. **Hard budget.** The marker (and the "N more not shown" line) is reserved first at
//!    its widest (see `marker`), then the rest is split by shares; every piece is measured
//!    before it is taken, so the sum never exceeds the limit.
//! 2. **Line boundaries.** Units are whole lines. The only cut inside a line is the first or
//!    last unit when even it alone exceeds its share, and a spotlighted line longer than its
//!    cap; those are cut in their middle with an inline marker at grapheme boundaries.
//! 3. **Nothing twice.** A line is in the head, the tail, or the spotlight block, never two of
//!    them: the block takes only middle lines, and a line the tail or head later absorbs
//!    (when budget is left over) leaves the block.
//! 4. **Tail first.** The tail is taken before the head and gets leftovers first, so the
//!    outcome at the end of a log survives the smallest budgets.
//! 5. **Exact counts.** The marker's counts are computed from the lines actually written.

use std::fmt::Write;

use super::budget::Measure;
use super::marker::{choose_level, Kept, Level, Place, Spec};
use super::output::{cut_middle, MiddleCut, Out};
use super::{marker_only, Built, Ctx};

/// One output line: a source line (or a collapsed run of them) and what it costs to show.
#[derive(Clone, Debug)]
pub(crate) struct Unit {
    /// Inclusive range of source line indices this unit stands for.
    pub first_line: usize,
    pub last_line: usize,
    /// Source bytes shown for it (a whole line, or its last progress redraw).
    pub keep: [usize; 2],
    /// Annotation written after it (repeat count, collapsed redraws), ending with `\n`.
    pub note: Option<String>,
    /// Spotlighted: an error line (terminal) or a definition (file).
    pub spot: bool,
    /// Measure of keep + note, plus 1 for the newline added when keep has none.
    pub cost: usize,
}

impl Unit {
    pub fn new(
        ctx: &Ctx,
        first_line: usize,
        last_line: usize,
        keep: [usize; 2],
        note: Option<String>,
        spot: bool,
    ) -> Unit {
        let text = &ctx.src[keep[0]..keep[1]];
        let cost = ctx.measure(keep[0], keep[1])
            + note.as_deref().map_or(0, |n| ctx.m.of(n))
            + usize::from(!text.ends_with('\n'));
        Unit {
            first_line,
            last_line,
            keep,
            note,
            spot,
            cost,
        }
    }
}

/// One unit per line, with the given spot flags (or none).
pub(crate) fn line_units(ctx: &Ctx, spots: Option<&[bool]>) -> Vec<Unit> {
    ctx.lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let spot = spots.is_some_and(|s| s[i]);
            let cost = ctx.measure(l.start, l.end) + usize::from(!l.has_terminator());
            Unit {
                first_line: i,
                last_line: i,
                keep: [l.start, l.end],
                note: None,
                spot,
                cost,
            }
        })
        .collect()
}

/// How spotlighted lines are shown.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpotStyle {
    /// Context lines shown before and after each spot.
    pub before: usize,
    pub after: usize,
    /// Prefix spots with `> ` and context with two spaces (terminal); else no mark (file).
    pub arrows: bool,
    /// Also show the line after a spot when it is a source location (rustc's
    /// `  --> src/main.rs:42:13`), whatever `after` says.
    pub location_after: bool,
    /// For the marker, singular and plural: "error line(s) with context".
    pub what: [&'static str; 2],
    /// For the overflow line, singular and plural: "error line(s)".
    pub more: [&'static str; 2],
}

/// The settings of one pattern.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub head_share: f64,
    pub tail_share: f64,
    pub spots: Option<SpotStyle>,
}

/// A line of the spotlight block.
struct Entry {
    unit: usize,
    spot: bool,
    cut: Option<MiddleCut>,
    cost: usize,
}

fn prefix(style: &SpotStyle, line_no: usize, spot: bool) -> String {
    match (style.arrows, spot) {
        (true, true) => format!("> L{line_no}: "),
        (true, false) => format!("  L{line_no}: "),
        (false, _) => format!("L{line_no}: "),
    }
}

fn overflow_line(style: &SpotStyle, level: Level, count: usize, first_at: usize) -> String {
    match level {
        Level::Minimal => format!("[... {count} more ...]\n"),
        _ => format!(
            "[... {count} more {} not shown, first at line {first_at} ...]\n",
            style.more[usize::from(count != 1)]
        ),
    }
}

/// Cuts `units` (which tile the source's lines in order) to `limit` units of `ctx.m`.
pub(crate) fn build<'a>(
    ctx: &Ctx<'a>,
    units: &[Unit],
    shape: &Shape,
    limit: usize,
) -> Result<Built<'a>, usize> {
    let m = ctx.m;
    let src = ctx.src;
    let n = units.len();
    let total: usize = units.iter().map(|u| u.cost).sum();

    if total <= limit {
        // Collapsing repeats alone made it fit.
        let mut out = Out::new(src);
        for u in units {
            write_unit(&mut out, u, None);
        }
        return Ok(Built::new(out, None).represent(units.iter()));
    }
    if n == 1 {
        let u = &units[0];
        let Some((cut, _)) = cut_unit(ctx, u, limit) else {
            return marker_only(ctx, limit);
        };
        let mut out = Out::new(src);
        write_unit(&mut out, u, Some(&cut));
        let marker = cut.marker.clone();
        return Ok(Built::new(out, Some(marker)).represent(units.iter()));
    }

    let total_lines = ctx.lines.len();
    let mut kept_plan = Vec::new();
    if shape.head_share > 0.0 {
        kept_plan.push(Kept::Head(0));
    }
    if shape.tail_share > 0.0 {
        kept_plan.push(Kept::Tail(0));
    }
    if let Some(style) = &shape.spots {
        kept_plan.push(Kept::Spots {
            count: 0,
            what: style.what,
        });
    }
    let place = match (shape.head_share > 0.0, shape.tail_share > 0.0) {
        (true, false) => Place::End,
        (false, true) => Place::Start,
        _ => Place::Middle,
    };
    let plan = Spec {
        bytes: src.len(),
        lines: total_lines,
        place,
        span: Some((1, total_lines)),
        total_lines,
        results: None,
        kept: kept_plan,
        exit_code: ctx.exit_reported(),
        fetch: ctx.fetch_at(src.len()),
    }
    .widened(src.len(), total_lines);
    let wide_lines = total_lines.max(10);
    let reserve = |level: Level| {
        m.of(&plan.render(level))
            + shape.spots.as_ref().map_or(0, |s| {
                m.of(&overflow_line(s, level, wide_lines, wide_lines))
            })
    };
    let Some(level) = choose_level(limit, reserve) else {
        return marker_only(ctx, limit);
    };
    let budget = limit - reserve(level);
    let head_room = (budget as f64 * shape.head_share).floor() as usize;
    let tail_room = ((budget as f64 * shape.tail_share).floor() as usize).min(budget - head_room);

    // Tail first: whole units from the end, or the last unit cut in its middle.
    let mut tail_used = 0;
    let mut t_start = n;
    while t_start > 0 && tail_used + units[t_start - 1].cost <= tail_room {
        t_start -= 1;
        tail_used += units[t_start].cost;
    }
    let mut tail_cut = None;
    if t_start == n && shape.tail_share > 0.0 {
        let u = &units[n - 1];
        tail_cut = cut_unit(ctx, u, tail_room);
        if let Some((_, cost)) = &tail_cut {
            t_start = n - 1;
            tail_used = *cost;
        }
    }

    // Then the head, up to the tail.
    let mut head_used = 0;
    let mut h_end = 0;
    while h_end < t_start && head_used + units[h_end].cost <= head_room {
        head_used += units[h_end].cost;
        h_end += 1;
    }
    let mut head_cut = None;
    if h_end == 0 && t_start > 0 && shape.head_share > 0.0 {
        head_cut = cut_unit(ctx, &units[0], head_room);
        if let Some((_, cost)) = &head_cut {
            h_end = 1;
            head_used = *cost;
        }
    }

    // Spotlight block: spots of the middle, in order, with their context.
    let mut left = budget - head_used - tail_used;
    let mut block: Vec<Entry> = Vec::new();
    if let Some(style) = &shape.spots {
        let cap = (left / 4).max(160).min(left);
        let mut shown = vec![false; t_start.saturating_sub(h_end)];
        let mut i = h_end;
        'spots: while i < t_start {
            if !units[i].spot {
                i += 1;
                continue;
            }
            if shown[i - h_end] {
                // Already shown as the context after an earlier spot: mark it as a spot.
                if let Ok(p) = block.binary_search_by_key(&i, |e| e.unit) {
                    block[p].spot = true;
                }
                i += 1;
                continue;
            }
            let lo = i.saturating_sub(style.before).max(h_end);
            let mut after = style.after;
            if style.location_after
                && after == 0
                && i + 1 < t_start
                && is_location(ctx, &units[i + 1])
            {
                after = 1;
            }
            let hi = (i + after).min(t_start - 1);
            let mut group: Vec<Entry> = Vec::new();
            for j in lo..=hi {
                if shown[j - h_end] {
                    continue;
                }
                let is_spot = j == i || (j > i && units[j].spot);
                if let Some(e) = entry(ctx, style, units, j, is_spot, cap) {
                    group.push(e);
                }
            }
            let group_cost: usize = group.iter().map(|e| e.cost).sum();
            if group.iter().any(|e| e.unit == i) && group_cost <= left {
                for e in group {
                    shown[e.unit - h_end] = true;
                    left -= e.cost;
                    block.push(e);
                }
            } else {
                match entry(ctx, style, units, i, true, cap) {
                    Some(e) if e.cost <= left => {
                        shown[i - h_end] = true;
                        left -= e.cost;
                        block.push(e);
                    }
                    _ => break 'spots,
                }
            }
            i += 1;
        }
    }

    debug_assert!(
        block.windows(2).all(|w| w[0].unit < w[1].unit),
        "block in unit order"
    );

    // Leftover budget: grow the tail, then the head; a line they absorb leaves the block
    // (refunding its block cost), so no line is ever shown twice.
    let absorb = |idx: usize, left: &mut usize, block: &mut Vec<Entry>| -> bool {
        // The block is in unit order (spots are visited in order, each group ascending).
        let pos = block.binary_search_by_key(&idx, |e| e.unit).ok();
        let refund = pos.map_or(0, |p| block[p].cost);
        if units[idx].cost > *left + refund {
            return false;
        }
        if let Some(p) = pos {
            block.remove(p);
        }
        *left = *left + refund - units[idx].cost;
        true
    };
    if shape.tail_share > 0.0 && tail_cut.is_none() {
        while t_start > h_end && absorb(t_start - 1, &mut left, &mut block) {
            t_start -= 1;
        }
    }
    if shape.head_share > 0.0 && head_cut.is_none() {
        while h_end < t_start && absorb(h_end, &mut left, &mut block) {
            h_end += 1;
        }
    }

    // Write it.
    let mut out = Out::new(src);
    let mut shown_units: Vec<&Unit> = Vec::new();
    for (i, u) in units.iter().enumerate().take(h_end) {
        let cut = if i == 0 {
            head_cut.as_ref().map(|(c, _)| c)
        } else {
            None
        };
        write_unit(&mut out, u, cut);
        shown_units.push(u);
    }
    let mut marker = None;
    if h_end < t_start {
        let first = &ctx.lines[units[h_end].first_line];
        let last = &ctx.lines[units[t_start - 1].last_line];
        let region_lines = units[t_start - 1].last_line + 1 - units[h_end].first_line;
        let kept_bytes: usize = block
            .iter()
            .map(|e| match &e.cut {
                Some(c) => c.kept(),
                None => units[e.unit].keep[1] - units[e.unit].keep[0],
            })
            .sum();
        let spots_shown = block.iter().filter(|e| e.spot).count();
        let mut kept = Vec::new();
        if h_end > 0 {
            kept.push(Kept::Head(units[h_end - 1].last_line + 1));
        }
        if t_start < n {
            kept.push(Kept::Tail(units[t_start].first_line + 1));
        }
        if let Some(style) = &shape.spots {
            if spots_shown > 0 {
                kept.push(Kept::Spots {
                    count: spots_shown,
                    what: style.what,
                });
            }
        }
        let spec = Spec {
            bytes: (last.end - first.start) - kept_bytes,
            lines: region_lines - block.len(),
            place: match (h_end > 0, t_start < n) {
                (true, true) => Place::Middle,
                (true, false) => Place::End,
                (false, true) => Place::Start,
                (false, false) => Place::Whole,
            },
            span: Some((
                units[h_end].first_line + 1,
                units[t_start - 1].last_line + 1,
            )),
            total_lines,
            results: None,
            kept,
            exit_code: ctx.exit_reported(),
            fetch: ctx.fetch_at(first.start),
        };
        let text = spec.render(level);
        out.newline_if_needed();
        out.marker(&text);
        marker = Some(text);
        if let Some(style) = &shape.spots {
            for e in &block {
                let u = &units[e.unit];
                out.note(&prefix(style, u.first_line + 1, e.spot));
                write_unit(&mut out, u, e.cut.as_ref());
                shown_units.push(u);
            }
            let hidden: Vec<usize> = (h_end..t_start)
                .filter(|&i| units[i].spot && block.binary_search_by_key(&i, |e| e.unit).is_err())
                .collect();
            if let Some(&first_hidden) = hidden.first() {
                out.newline_if_needed();
                out.marker(&overflow_line(
                    style,
                    level,
                    hidden.len(),
                    units[first_hidden].first_line + 1,
                ));
            }
        }
    }
    for (i, u) in units.iter().enumerate().skip(t_start) {
        let cut = if i == n - 1 {
            tail_cut.as_ref().map(|(c, _)| c)
        } else {
            None
        };
        write_unit(&mut out, u, cut);
        shown_units.push(u);
    }
    Ok(
        Built::new(out, marker.map(|m: String| m.trim_end().to_string()))
            .represent(shown_units.into_iter()),
    )
}

/// `  --> src/main.rs:42:13`: where a compiler error points.
fn is_location(ctx: &Ctx, u: &Unit) -> bool {
    let text = ctx.src[u.keep[0]..u.keep[1]].trim_start();
    text.starts_with("--> ") && text.contains(':')
}

/// Writes a unit (whole or cut), a newline if its text lacks one, and its note.
fn write_unit(out: &mut Out, u: &Unit, cut: Option<&MiddleCut>) {
    match cut {
        Some(c) => out.keep_cut(c),
        None => out.keep(u.keep[0], u.keep[1]),
    }
    if u.note.is_some() {
        out.newline_if_needed();
    }
    if let Some(note) = &u.note {
        out.note(note);
    }
}

/// A unit cut in its middle to fit `room` (note included), with its cost.
fn cut_unit(ctx: &Ctx, u: &Unit, room: usize) -> Option<(MiddleCut, usize)> {
    let note_cost = u.note.as_deref().map_or(0, |s| ctx.m.of(s));
    let text_room = room.checked_sub(note_cost)?;
    let cut = cut_middle(ctx.src, u.keep[0], u.keep[1], text_room, ctx.m, &|at| {
        ctx.fetch_call(at)
    })?;
    let cost = cut_cost(ctx.m, ctx.src, &cut) + note_cost;
    (cost <= room).then_some((cut, cost))
}

fn cut_cost(m: Measure, src: &str, cut: &MiddleCut) -> usize {
    m.of(&src[cut.start..cut.head_end])
        + m.of(&cut.marker)
        + m.of(&src[cut.tail_start..cut.end])
        + usize::from(!src[cut.start..cut.end].ends_with('\n'))
}

/// The block line for unit `j`, cut to `cap` when longer.
fn entry(
    ctx: &Ctx,
    style: &SpotStyle,
    units: &[Unit],
    j: usize,
    spot: bool,
    cap: usize,
) -> Option<Entry> {
    let u = &units[j];
    let mut p = String::new();
    let _ = write!(p, "{}", prefix(style, u.first_line + 1, spot));
    let pcost = ctx.m.of(&p);
    if pcost + u.cost <= cap {
        return Some(Entry {
            unit: j,
            spot,
            cut: None,
            cost: pcost + u.cost,
        });
    }
    let (cut, cost) = cut_unit(ctx, u, cap.checked_sub(pcost)?)?;
    Some(Entry {
        unit: j,
        spot,
        cut: Some(cut),
        cost: pcost + cost,
    })
}
