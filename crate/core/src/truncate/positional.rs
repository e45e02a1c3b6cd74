//! The seed's positional patterns, made exact: `head`, `tail` and `head_tail`.
//!
//! They are the line engine (`ends`) with no spotlight: all of the budget to the head, all
//! to the tail, or split by `head_share` (seed 001's `head_ratio`, default 0.6). Unlike the
//! seed's versions they cut on line boundaries, never overrun the budget by the marker, and
//! their markers carry real counts instead of a literal `N`.

use super::ends::{line_units, Shape, Unit};
use super::{Applied, Ctx};

pub(crate) fn plan(ctx: &Ctx, applied: Applied) -> (Vec<Unit>, Shape) {
    let (head_share, tail_share) = match applied {
        Applied::Head => (1.0, 0.0),
        Applied::Tail => (0.0, 1.0),
        _ => (ctx.opts.head_share, 1.0 - ctx.opts.head_share),
    };
    (
        line_units(ctx, None),
        Shape {
            head_share,
            tail_share,
            spots: None,
        },
    )
}
