//! **Check**: read an exported run and flag every tool span whose injected slice differs
//! from what the tool observed without saying so.
//!
//! The path is: bytes → [`Checker`] (streaming line splitter) → span reader → [`classify`]
//! → [`ReportBuilder`] → [`Report`] → [`render`].
//!
//! ```
//! use toolslice::check::{check_bytes, render, CheckOptions};
//!
//! let run = br#"{"span_id":"t1","name":"read_file","observed_bytes":1000,"injected_bytes":120,"injected_tokens":80}
//! {"span_id":"t2","name":"ls","observed_bytes":10,"injected_bytes":10,"injected_tokens":4}
//! "#;
//! let report = check_bytes(run, CheckOptions::default());
//! assert_eq!(report.counts.silent_clip, 1);
//! assert_eq!(report.exit_code, 1);
//! assert!(render::table(&report).ends_with("# silent_clip=1 incomplete=0 total=2\n"));
//! ```

mod blocks;
mod classify;
mod compare;
pub mod render;
mod report;
mod rollups;
mod rows;
mod stream;

pub use classify::{
    classify, classify_with, clip_ratio, ReasonPolicy, Status, Verdict, UNKNOWN_REASON_WARNING,
};
pub use compare::{compare_span_runs, InjectedChange, SliceSide, SpanRunDiff};
// The shared row types live in `record` (readers produce them without the report builder);
// re-exported here because a report is where users meet them.
pub use crate::formats::{PartError, PartReader};
pub use crate::record::{Invalid, Join, Provenance, ReadAs, Skipped};
pub use report::{
    BuilderStats, CheckOptions, ClipHistogram, Counts, Limits, NotKept, Report, ReportBuilder,
    Rollup, Row, ToolStats, MAX_LISTED, MAX_ROLLUP_EXAMPLES, ROW_BYTES, SPAN_FACT_BYTES,
};
pub use rollups::Rollups;
pub use rows::{RowRef, Rows, TextIter, TextList};
pub use stream::{check_bytes, Checker};
