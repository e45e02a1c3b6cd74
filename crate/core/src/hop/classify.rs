//! The hop table and the row it fills.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::canonical::{canonicalize, Form};
use crate::hash::sha256_hex;

/// The hop to inspect, from the seed's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MutationHop {
    /// Process and adapter differ, adapter shorter: adapter truncate or parse drop.
    AdapterShrink,
    /// Process and adapter differ, adapter longer: adapter wrap or injected default.
    AdapterGrow,
    /// Process equals adapter, model slice longer: the prompt builder added a wrapper.
    PromptBuilderWrap,
    /// Process equals adapter, model slice shorter: the prompt builder dropped fields.
    PromptBuilderDrop,
    /// All three equal: not a payload mutation (a behaviour question, not transport).
    NoPayloadMutation,
    /// Hashes equal but lengths disagree: the model hash covered a different byte range.
    HashSliceMismatch,
    /// None of the rows fits (for instance a same-length rewrite).
    NeedsManualReview,
}

impl MutationHop {
    pub fn as_str(self) -> &'static str {
        match self {
            MutationHop::AdapterShrink => "adapter_shrink",
            MutationHop::AdapterGrow => "adapter_grow",
            MutationHop::PromptBuilderWrap => "prompt_builder_wrap",
            MutationHop::PromptBuilderDrop => "prompt_builder_drop",
            MutationHop::NoPayloadMutation => "no_payload_mutation",
            MutationHop::HashSliceMismatch => "hash_slice_mismatch",
            MutationHop::NeedsManualReview => "needs_manual_review",
        }
    }
}

impl fmt::Display for MutationHop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The seed's table over (digest, length) at each boundary, rows tried in the seed's order.
/// Works on stored rows too, so a reader can recompute a label from its hashes.
pub fn mutation_hop(process: (&str, u64), adapter: (&str, u64), model: (&str, u64)) -> MutationHop {
    let (p, pl) = process;
    let (a, al) = adapter;
    let (m, ml) = model;
    if p != a && al < pl {
        MutationHop::AdapterShrink
    } else if p != a && al > pl {
        MutationHop::AdapterGrow
    } else if p == a && a != m && ml > al {
        MutationHop::PromptBuilderWrap
    } else if p == a && a != m && ml < al {
        MutationHop::PromptBuilderDrop
    } else if p == a && a == m && pl == al && al == ml {
        MutationHop::NoPayloadMutation
    } else if p == a && a == m {
        MutationHop::HashSliceMismatch
    } else {
        MutationHop::NeedsManualReview
    }
}

/// How the adapter changed the process output, judged by raw and canonical hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AdapterChange {
    /// Same bytes.
    None,
    /// Different bytes, same canonical JSON: key order, whitespace, escapes or number
    /// spelling only. Hash canonical forms on both sides, or compare raw on both sides.
    FormatOnly,
    /// Different canonical JSON: the adapter changed the content.
    Content,
    /// Different bytes, and one side is not JSON (or was not kept for canonical hashing).
    #[default]
    Unknown,
}

/// A redaction receipt: what was replaced, by which rule, how long the original was (counted
/// on the tool host), and the replacement token. Never the original characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RedactionReceipt {
    pub field_path: String,
    pub rule_id: String,
    pub original_len: u64,
    pub replacement: String,
}

/// One tool call's row: the seed's fields (three digests, three lengths, `mutation_hop`, and
/// the optional ids of its sample row), then the canonical hashes, the adapter change and
/// the redaction receipts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HopRow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    pub process_sha256: String,
    pub adapter_sha256: String,
    pub model_sha256: String,
    pub process_len: u64,
    pub adapter_len: u64,
    pub model_len: u64,
    pub mutation_hop: MutationHop,
    #[serde(default)]
    pub process_canonical_sha256: Option<String>,
    #[serde(default)]
    pub adapter_canonical_sha256: Option<String>,
    #[serde(default)]
    pub adapter_change: AdapterChange,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redactions: Vec<RedactionReceipt>,
}

impl HopRow {
    /// The label the seed's table gives this row's stored digests and lengths. A row whose
    /// stored `mutation_hop` differs was edited by hand or written by a different rule.
    pub fn recomputed_hop(&self) -> MutationHop {
        mutation_hop(
            (&self.process_sha256, self.process_len),
            (&self.adapter_sha256, self.adapter_len),
            (&self.model_sha256, self.model_len),
        )
    }

    /// Sets the row's ids (the seed's sample row carries them).
    pub fn with_ids(
        mut self,
        run_id: Option<String>,
        tool_call_id: Option<String>,
        tool_name: Option<String>,
    ) -> HopRow {
        self.run_id = run_id;
        self.tool_call_id = tool_call_id;
        self.tool_name = tool_name;
        self
    }

    /// Stores redaction receipts beside the row.
    pub fn with_receipts(mut self, receipts: Vec<RedactionReceipt>) -> HopRow {
        self.redactions = receipts;
        self
    }
}

/// The canonical (python form) hash of bytes that are JSON, else `None`.
pub(super) fn canonical_sha256(bytes: &[u8]) -> Option<String> {
    canonicalize(bytes, Form::Python)
        .ok()
        .map(|text| sha256_hex(text.as_bytes()))
}

pub(super) fn adapter_change(
    raw_equal: bool,
    process_canonical: Option<&str>,
    adapter_canonical: Option<&str>,
) -> AdapterChange {
    if raw_equal {
        return AdapterChange::None;
    }
    match (process_canonical, adapter_canonical) {
        (Some(p), Some(a)) if p == a => AdapterChange::FormatOnly,
        (Some(_), Some(_)) => AdapterChange::Content,
        _ => AdapterChange::Unknown,
    }
}

/// Builds a row from the three boundaries' digests and lengths and the canonical hashes.
pub(super) fn row(
    process: (String, u64),
    adapter: (String, u64),
    model: (String, u64),
    process_canonical: Option<String>,
    adapter_canonical: Option<String>,
) -> HopRow {
    let hop = mutation_hop(
        (&process.0, process.1),
        (&adapter.0, adapter.1),
        (&model.0, model.1),
    );
    let change = adapter_change(
        process.0 == adapter.0,
        process_canonical.as_deref(),
        adapter_canonical.as_deref(),
    );
    HopRow {
        run_id: None,
        tool_call_id: None,
        tool_name: None,
        process_sha256: process.0,
        adapter_sha256: adapter.0,
        model_sha256: model.0,
        process_len: process.1,
        adapter_len: adapter.1,
        model_len: model.1,
        mutation_hop: hop,
        process_canonical_sha256: process_canonical,
        adapter_canonical_sha256: adapter_canonical,
        adapter_change: change,
        redactions: Vec::new(),
    }
}

/// The seed's `classify(process, adapter, model_part)`, plus canonical hashes.
pub fn classify_hop(process: &[u8], adapter: &[u8], model_part: &[u8]) -> HopRow {
    row(
        (sha256_hex(process), process.len() as u64),
        (sha256_hex(adapter), adapter.len() as u64),
        (sha256_hex(model_part), model_part.len() as u64),
        canonical_sha256(process),
        canonical_sha256(adapter),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_fixtures() {
        let wrap = classify_hop(
            br#"{"ok":true,"rows":2}"#,
            br#"{"ok":true,"rows":2}"#,
            br#"{"type":"tool_result","body":{"ok":true,"rows":2}}"#,
        );
        assert_eq!(wrap.mutation_hop, MutationHop::PromptBuilderWrap);
        assert_eq!(
            (wrap.process_len, wrap.adapter_len, wrap.model_len),
            (20, 20, 50)
        );
        assert_eq!(wrap.adapter_change, AdapterChange::None);
        let shrink = classify_hop(
            br#"{"ok":true,"rows":2,"note":"abcdef"}"#,
            br#"{"ok":true,"rows":2}"#,
            br#"{"ok":true,"rows":2}"#,
        );
        assert_eq!(shrink.mutation_hop, MutationHop::AdapterShrink);
        assert_eq!(
            (shrink.process_len, shrink.adapter_len, shrink.model_len),
            (36, 20, 20)
        );
        assert_eq!(shrink.adapter_change, AdapterChange::Content);
    }

    #[test]
    fn key_order_change_is_format_only() {
        // The seed's warning: raw process bytes against canonical adapter bytes read as
        // adapter_grow/shrink; the canonical columns show nothing changed but the layout.
        let row = classify_hop(
            br#"{"rows": 2, "ok": true}"#,
            br#"{"ok":true,"rows":2}"#,
            br#"{"ok":true,"rows":2}"#,
        );
        assert_eq!(row.mutation_hop, MutationHop::AdapterShrink);
        assert_eq!(row.adapter_change, AdapterChange::FormatOnly);
        assert_eq!(row.process_canonical_sha256, row.adapter_canonical_sha256);
        let text = classify_hop(b"plain text", b"plain text!", b"plain text!");
        assert_eq!(text.adapter_change, AdapterChange::Unknown);
        assert_eq!(text.process_canonical_sha256, None);
    }

    #[test]
    fn table_rows_from_stored_digests() {
        assert_eq!(
            mutation_hop(("a", 3), ("a", 3), ("a", 4)),
            MutationHop::HashSliceMismatch
        );
        assert_eq!(
            mutation_hop(("a", 3), ("b", 3), ("b", 3)),
            MutationHop::NeedsManualReview
        );
        assert_eq!(
            mutation_hop(("a", 3), ("a", 3), ("m", 2)),
            MutationHop::PromptBuilderDrop
        );
        assert_eq!(
            mutation_hop(("a", 3), ("a", 3), ("a", 3)),
            MutationHop::NoPayloadMutation
        );
        assert_eq!(
            mutation_hop(("a", 3), ("b", 4), ("b", 4)),
            MutationHop::AdapterGrow
        );
    }

    #[test]
    fn row_json_keeps_seed_fields_first_and_reads_seed_rows() {
        let row = classify_hop(b"x", b"x", b"x").with_ids(
            Some("run_7f3a".into()),
            Some("call_91".into()),
            Some("read_file".into()),
        );
        let json = serde_json::to_string(&row).unwrap();
        assert!(json.starts_with(r#"{"run_id":"run_7f3a","tool_call_id":"call_91","tool_name":"read_file","process_sha256":"#), "{json}");
        let seed_row = r#"{"run_id":"run_7f3a","tool_call_id":"call_91","tool_name":"read_file","process_sha256":"p","adapter_sha256":"a","model_sha256":"m","process_len":36,"adapter_len":20,"model_len":20,"mutation_hop":"adapter_shrink"}"#;
        let read: HopRow = serde_json::from_str(seed_row).unwrap();
        assert_eq!(read.mutation_hop, MutationHop::AdapterShrink);
        assert_eq!(read.recomputed_hop(), MutationHop::AdapterShrink);
        assert_eq!(read.adapter_change, AdapterChange::Unknown);
    }
}
