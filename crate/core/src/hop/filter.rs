//! `toolslice hop --mutations-only LOG`: the rows of a hop log whose `mutation_hop` is not
//! `no_payload_mutation` (the seed's `jq -c 'select(.mutation_hop != "no_payload_mutation")'`),
//! with a note for every line that is not a hop row and for every row whose stored label
//! disagrees with its own digests. The CLI only reads the file and prints.

use serde::Serialize;
use serde_json::Value;

use super::classify::{HopRow, MutationHop};

/// What the filter kept and what it noticed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Filtered {
    /// The kept rows, one compact JSON line each (keys in the log's order).
    pub rows: String,
    /// Rows kept.
    pub kept: usize,
    /// Lines that are not hop rows (not JSON, or without a string `mutation_hop`): the
    /// CLI's exit status 1.
    pub invalid: usize,
    /// `NAME:LINE: message`, one per invalid line and per row whose `mutation_hop` is not
    /// what its digests say (a hand-edited or mislabelled row; still filtered by its label).
    pub notes: Vec<String>,
}

/// Filters the hop rows of `text` (one JSON object per line, blank lines skipped); `name`
/// names the input in notes.
pub fn mutations_only(text: &str, name: &str) -> Filtered {
    let mut out = Filtered::default();
    let keep = MutationHop::NoPayloadMutation.as_str();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let at = i + 1;
        let row: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                out.invalid += 1;
                out.notes.push(format!("{name}:{at}: not JSON: {e}"));
                continue;
            }
        };
        let Some(label) = row.get("mutation_hop").and_then(Value::as_str) else {
            out.invalid += 1;
            out.notes
                .push(format!("{name}:{at}: not a hop row (no mutation_hop)"));
            continue;
        };
        // A row without the digest fields cannot be rechecked; the filter still applies.
        if let Ok(parsed) = serde_json::from_value::<HopRow>(row.clone()) {
            let recomputed = parsed.recomputed_hop().as_str();
            if recomputed != label {
                out.notes.push(format!(
                    "{name}:{at}: mutation_hop is {label} but its hashes say {recomputed}"
                ));
            }
        }
        if label != keep {
            out.rows.push_str(&row.to_string());
            out.rows.push('\n');
            out.kept += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::classify_hop;

    #[test]
    fn keeps_mutations_and_names_bad_lines() {
        let same = serde_json::to_string(&classify_hop(b"a", b"a", b"a")).unwrap();
        let grew = serde_json::to_string(&classify_hop(b"a", b"ab", b"ab")).unwrap();
        let mut lied: Value = serde_json::from_str(&grew).unwrap();
        lied["mutation_hop"] = "prompt_builder_drop".into();
        let text = format!(
            "{same}\n\n{grew}\nnot json\n{{\"x\":1}}\n{lied}\n{{\"mutation_hop\":\"adapter_shrink\"}}\n"
        );
        let f = mutations_only(&text, "log");
        assert_eq!(f.kept, 3);
        assert_eq!(f.invalid, 2);
        let lines: Vec<&str> = f.rows.lines().collect();
        assert_eq!(lines[0], grew);
        assert_eq!(lines[2], r#"{"mutation_hop":"adapter_shrink"}"#);
        assert!(f.notes[0].starts_with("log:4: not JSON"), "{:?}", f.notes);
        assert_eq!(f.notes[1], "log:5: not a hop row (no mutation_hop)");
        assert_eq!(
            f.notes[2],
            "log:6: mutation_hop is prompt_builder_drop but its hashes say adapter_grow"
        );
        assert_eq!(f.notes.len(), 3);
    }
}
