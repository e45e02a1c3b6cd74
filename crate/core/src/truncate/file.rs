//! File reads (seed 001 §6: "If line-ranged: keep requested range + structural summary of
//! rest. If full file: head + tail with function/class boundary markers preserved.").
//!
//! A ranged read keeps the requested lines whole (as many as fit, in order) and summarises
//! the rest of the file: its size, and the definitions outside the range with their line
//! numbers, so the model can ask for the next range by name. A whole-file read is the line
//! engine with definitions as the spotlight: head, tail, and every definition line of the
//! dropped middle (`L340: pub struct Foo {`).

use super::ends::{line_units, Shape, SpotStyle, Unit};
use super::marker::{choose_level, Kept, Level, Place, Spec};
use super::matcher::is_definition_line;
use super::output::{cut_middle, Out};
use super::{marker_only, Built, Ctx};

const DEFS: [&str; 2] = [
    "definition from outside the range",
    "definitions from outside the range",
];

fn definition_flags(ctx: &Ctx) -> Vec<bool> {
    ctx.lines
        .iter()
        .map(|l| is_definition_line(l.content(ctx.src)))
        .collect()
}

pub(crate) fn plan_whole(ctx: &Ctx) -> (Vec<Unit>, Shape) {
    let flags = definition_flags(ctx);
    (
        line_units(ctx, Some(&flags)),
        Shape {
            head_share: ctx.opts.file.head_share,
            tail_share: ctx.opts.file.tail_share,
            spots: Some(SpotStyle {
                before: 0,
                after: 0,
                location_after: false,
                arrows: false,
                what: ["definition line", "definition lines"],
                more: ["definition line", "definition lines"],
            }),
        },
    )
}

/// A ranged read: the requested lines (0-based, `first..=last`, possibly empty when the
/// range starts past the end) and the definition lines outside them.
pub(crate) struct RangePlan {
    req: [usize; 2],
    first: usize,
    end: usize,
    defs: Vec<usize>,
}

pub(crate) fn plan_range(ctx: &Ctx, range: [usize; 2]) -> RangePlan {
    let n = ctx.lines.len();
    let first = (range[0] - 1).min(n);
    let end = range[1].min(n).max(first);
    let flags = definition_flags(ctx);
    let defs = (0..n)
        .filter(|&i| flags[i] && !(first..end).contains(&i))
        .collect();
    RangePlan {
        req: range,
        first,
        end,
        defs,
    }
}

fn overflow_line(level: Level, count: usize, first_at: usize) -> String {
    match level {
        Level::Minimal => format!("[... {count} more ...]\n"),
        _ => format!(
            "[... {count} more {} not shown, first at line {first_at} ...]\n",
            if count == 1 {
                "definition"
            } else {
                "definitions"
            }
        ),
    }
}

pub(crate) fn build_range<'a>(
    ctx: &Ctx<'a>,
    plan: &RangePlan,
    limit: usize,
) -> Result<Built<'a>, usize> {
    let m = ctx.m;
    let src = ctx.src;
    let lines = &ctx.lines;
    let n = lines.len();
    let spec_for = |bytes, lines_omitted, kept| Spec {
        bytes,
        lines: lines_omitted,
        place: Place::Outside,
        span: Some((plan.req[0], plan.req[1])),
        total_lines: n,
        results: None,
        kept,
        exit_code: ctx.exit_reported(),
        fetch: ctx.fetch_at(0),
    };
    let bound = n.max(plan.req[1]);
    let mut planned = spec_for(
        src.len(),
        n,
        vec![
            Kept::Range {
                from: 0,
                to: 0,
                req_from: 0,
                req_to: 0,
            },
            Kept::Spots {
                count: 0,
                what: DEFS,
            },
        ],
    );
    planned.fetch = ctx.fetch_at(src.len());
    let wide = planned.widened(src.len(), bound);
    let reserve = |level: Level| {
        m.of(&wide.render(level)) + m.of(&overflow_line(level, bound.max(10), bound.max(10)))
    };
    let Some(level) = choose_level(limit, reserve) else {
        return marker_only(ctx, limit);
    };
    let mut left = limit - reserve(level);

    // The requested lines, whole, as many as fit; the first one cut if even it does not.
    let mut taken = plan.first;
    while taken < plan.end {
        let l = &lines[taken];
        let cost = m.of(l.text(src)) + usize::from(!l.has_terminator());
        if cost > left {
            break;
        }
        left -= cost;
        taken += 1;
    }
    let mut first_cut = None;
    if taken == plan.first && plan.first < plan.end {
        let l = &lines[plan.first];
        first_cut = cut_middle(src, l.start, l.end, left.saturating_sub(1), m, &|at| {
            ctx.fetch_call(at)
        });
        if let Some(c) = &first_cut {
            let mut probe = Out::new(src);
            probe.keep_cut(c);
            left -= m.of(&probe.text) + usize::from(!probe.text.ends_with('\n'));
        }
    }

    // Definitions outside the range, in order, with the room left.
    let cap = (left / 4).max(160).min(left);
    let mut shown: Vec<(usize, Option<super::output::MiddleCut>)> = Vec::new();
    for &d in &plan.defs {
        let l = &lines[d];
        let prefix = format!("L{}: ", d + 1);
        let whole = m.of(&prefix) + m.of(l.text(src)) + usize::from(!l.has_terminator());
        if whole <= cap.min(left) {
            left -= whole;
            shown.push((d, None));
            continue;
        }
        let room = cap.min(left).saturating_sub(m.of(&prefix) + 1);
        match cut_middle(src, l.start, l.end, room, m, &|at| ctx.fetch_call(at)) {
            Some(c) => {
                let mut probe = Out::new(src);
                probe.keep_cut(&c);
                let cost =
                    m.of(&prefix) + m.of(&probe.text) + usize::from(!probe.text.ends_with('\n'));
                if cost > left {
                    break;
                }
                left -= cost;
                shown.push((d, Some(c)));
            }
            None => break,
        }
    }

    let mut out = Out::new(src);
    let mut kept_bytes = 0;
    let mut kept_lines = taken - plan.first;
    if taken > plan.first {
        kept_bytes += lines[taken - 1].end - lines[plan.first].start;
    } else if let Some(c) = &first_cut {
        kept_bytes += c.kept();
        kept_lines += 1;
    }
    for (d, c) in &shown {
        kept_lines += 1;
        kept_bytes += match c {
            Some(c) => c.kept(),
            None => lines[*d].len(),
        };
    }
    let mut kept = Vec::new();
    let last_kept = if taken > plan.first {
        Some(taken)
    } else {
        first_cut.as_ref().map(|_| plan.first + 1)
    };
    if let Some(to) = last_kept {
        kept.push(Kept::Range {
            from: plan.first + 1,
            to,
            req_from: plan.req[0],
            req_to: plan.req[1],
        });
    }
    let defs_shown = shown.len();
    if defs_shown > 0 {
        kept.push(Kept::Spots {
            count: defs_shown,
            what: DEFS,
        });
    }
    let mut spec = spec_for(src.len() - kept_bytes, n - kept_lines, kept);
    // The first omitted byte: before the range, else inside or after it.
    let first_gap = if plan.first > 0 {
        0
    } else if let (true, Some(c)) = (taken == plan.first, &first_cut) {
        c.head_end
    } else if taken < n {
        lines[taken].start
    } else {
        0
    };
    spec.fetch = ctx.fetch_at(first_gap);
    let marker = spec.render(level);
    out.marker(&marker);
    for (d, c) in &shown {
        out.note(&format!("L{}: ", d + 1));
        match c {
            Some(c) => out.keep_cut(c),
            None => out.keep(lines[*d].start, lines[*d].end),
        }
        out.newline_if_needed();
    }
    if defs_shown < plan.defs.len() {
        let first_hidden = plan.defs[defs_shown];
        out.marker(&overflow_line(
            level,
            plan.defs.len() - defs_shown,
            first_hidden + 1,
        ));
    }
    if taken > plan.first {
        out.keep(lines[plan.first].start, lines[taken - 1].end);
    } else if let Some(c) = &first_cut {
        out.keep_cut(c);
    }
    Ok(Built::new(out, Some(marker.trim_end().to_string())))
}
