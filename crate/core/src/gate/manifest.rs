//! Manifests of a run and their multiset diff.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Coded;

/// One manifest row: `(name, status, args_sha256, result_sha256)`, serialised as a
/// four-element array like the seed's tuples. Rows order as Python orders tuples of strings
/// (field by field, by code point); a missing or `null` field is `None` and sorts first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ManifestEntry(
    pub Option<String>,
    pub Option<String>,
    pub Option<String>,
    pub Option<String>,
);

/// The seed's `diff_manifests` result: rows only in the left run and only in the right run,
/// each a sorted multiset difference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestDiff {
    pub only_left: Vec<ManifestEntry>,
    pub only_right: Vec<ManifestEntry>,
}

impl ManifestDiff {
    /// Whether the two runs had the same tool boundary.
    pub fn is_empty(&self) -> bool {
        self.only_left.is_empty() && self.only_right.is_empty()
    }
}

/// A span field that cannot go into a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// The span is not an object.
    NotAnObject { span: usize },
    /// A manifest field holds something other than a string or `null`.
    NotAString { span: usize, field: &'static str },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::NotAnObject { span } => write!(f, "span {span} is not a JSON object"),
            ManifestError::NotAString { span, field } => {
                write!(f, "span {span}: field '{field}' is not a string")
            }
        }
    }
}

impl std::error::Error for ManifestError {}

impl Coded for ManifestError {
    fn code(&self) -> &'static str {
        "invalid_span"
    }
}

const FIELDS: [&str; 4] = ["name", "status", "args_sha256", "result_sha256"];

/// The manifest of a run: one row per span, in span order.
pub fn manifest(spans: &[Value]) -> Result<Vec<ManifestEntry>, ManifestError> {
    spans
        .iter()
        .enumerate()
        .map(|(index, span)| {
            let obj = span
                .as_object()
                .ok_or(ManifestError::NotAnObject { span: index })?;
            let mut row: [Option<String>; 4] = Default::default();
            for (slot, field) in row.iter_mut().zip(FIELDS) {
                *slot = match obj.get(field) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(ManifestError::NotAString { span: index, field }),
                };
            }
            let [a, b, c, d] = row;
            Ok(ManifestEntry(a, b, c, d))
        })
        .collect()
}

/// The multiset difference of two manifests, both sides sorted.
pub fn diff_manifests(left: &[ManifestEntry], right: &[ManifestEntry]) -> ManifestDiff {
    let mut counts: BTreeMap<&ManifestEntry, i64> = BTreeMap::new();
    for row in left {
        *counts.entry(row).or_default() += 1;
    }
    for row in right {
        *counts.entry(row).or_default() -= 1;
    }
    let mut diff = ManifestDiff::default();
    // BTreeMap iterates in key order, so both lists come out sorted.
    for (row, count) in counts {
        let side = if count > 0 {
            &mut diff.only_left
        } else {
            &mut diff.only_right
        };
        for _ in 0..count.unsigned_abs() {
            side.push(row.clone());
        }
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(n: &str, h: &str) -> ManifestEntry {
        ManifestEntry(
            Some(n.into()),
            Some("ok".into()),
            Some(h.into()),
            Some(h.into()),
        )
    }

    #[test]
    fn multiset_difference_sorted() {
        let left = vec![row("b", "1"), row("a", "1"), row("a", "1"), row("c", "2")];
        let right = vec![row("a", "1"), row("c", "3"), row("B", "1")];
        let diff = diff_manifests(&left, &right);
        assert_eq!(
            diff.only_left,
            vec![row("a", "1"), row("b", "1"), row("c", "2")]
        );
        assert_eq!(diff.only_right, vec![row("B", "1"), row("c", "3")]);
        assert!(diff_manifests(&left, &left).is_empty());
        let json = serde_json::to_string(&diff.only_right[0]).unwrap();
        assert_eq!(json, r#"["B","ok","1","1"]"#);
    }

    #[test]
    fn manifest_rows_and_errors() {
        let spans = vec![
            json!({"name": "t", "status": null, "args_sha256": "a", "result_sha256": "r", "args_len": 3}),
        ];
        assert_eq!(
            manifest(&spans).unwrap(),
            vec![ManifestEntry(
                Some("t".into()),
                None,
                Some("a".into()),
                Some("r".into())
            )]
        );
        let bad = vec![json!({"name": 3})];
        assert_eq!(
            manifest(&bad).unwrap_err(),
            ManifestError::NotAString {
                span: 0,
                field: "name"
            }
        );
    }
}
