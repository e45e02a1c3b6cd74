//! The three-boundary classifier (seed 003): which owner changed a tool result on its way
//! to the model.
//!
//! Three byte strings are hashed: the raw process output, the adapter's output (after parse,
//! wrap and redact) and the tool-result slice of the outbound model request. The seed's hop
//! table, applied to the three digests with lengths as the tie break, names the hop to
//! inspect ([`MutationHop`]); [`classify_hop`] returns the seed's row, field for field.
//!
//! Three additions make the row tell more than the seed's:
//!
//! - **Raw and canonical hashes.** The row also carries the canonical (python form) hash of
//!   the process and adapter bytes when they are JSON, so [`AdapterChange`] tells a key-order
//!   or whitespace change (`format_only`) apart from a change of content. The raw hashes stay
//!   the primary columns: exact bytes are what the model received.
//! - **Redaction receipts** ([`RedactionReceipt`]: `field_path`, `rule_id`, `original_len`,
//!   replacement) ride beside the row, and [`compare_runs`] calls a changed `rule_id` policy
//!   drift instead of a model regression.
//! - **Streaming.** [`HopStream`] hashes process output chunk by chunk and classifies only
//!   when the stream is closed, so a partial buffer can never be labelled (a mid-stream hash
//!   would read as a false `adapter_grow`).

mod classify;
mod compare;
mod filter;
mod stream;

pub use classify::{
    classify_hop, mutation_hop, AdapterChange, HopRow, MutationHop, RedactionReceipt,
};
pub use compare::{compare_runs, PolicyDrift, RowComparison, RowVerdict, RunComparison};
pub use filter::{mutations_only, Filtered};
pub use stream::{HopStream, DEFAULT_CANONICAL_LIMIT};

impl From<crate::redact::Receipt> for RedactionReceipt {
    /// The receipt as the three-boundary row stores it (seed 003), for policy-drift checks.
    fn from(r: crate::redact::Receipt) -> Self {
        RedactionReceipt {
            field_path: r.field_path,
            rule_id: r.rule_id,
            original_len: r.original_len,
            replacement: r.replacement,
        }
    }
}
