//! The export gate: refuse to export while any span is open or any hash lacks its body.

use serde::Serialize;
use serde_json::Value;

use crate::hash::is_sha256_hex;

use super::store::{BodyStore, StoreError};
use super::TERMINAL_STATUSES;

/// What is wrong with one span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The status is not terminal (`ok` or `error`): the call was never closed.
    Open,
    /// The store has no body for this digest.
    Missing,
    /// The span has no digest in this field, or something that is not a SHA-256 hex digest.
    InvalidDigest,
    /// The span is not a JSON object.
    InvalidSpan,
}

/// One reason the gate refuses export. `message` is the seed's one-line form
/// (`open:NAME`, `missing:DIGEST`), extended with `invalid:NAME:FIELD` and `invalid:#INDEX`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    /// Index of the span in the input.
    pub span: usize,
    pub name: Option<String>,
    /// `args_sha256` or `result_sha256`, for digest problems.
    pub field: Option<String>,
    pub digest: Option<String>,
    pub message: String,
}

/// Every problem that blocks export, in span order (open before missing, args before result,
/// as the seed lists them). An empty list means the spans may leave the machine.
pub fn export_ready(spans: &[Value], store: &dyn BodyStore) -> Result<Vec<Problem>, StoreError> {
    let mut problems = Vec::new();
    for (index, span) in spans.iter().enumerate() {
        let Some(obj) = span.as_object() else {
            problems.push(Problem {
                kind: ProblemKind::InvalidSpan,
                span: index,
                name: None,
                field: None,
                digest: None,
                message: format!("invalid:#{index}"),
            });
            continue;
        };
        let name = obj.get("name").map(|n| match n {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let label = name.clone().unwrap_or_else(|| format!("#{index}"));
        let status = obj.get("status").and_then(Value::as_str);
        if !status.is_some_and(|s| TERMINAL_STATUSES.contains(&s)) {
            problems.push(Problem {
                kind: ProblemKind::Open,
                span: index,
                name: name.clone(),
                field: None,
                digest: None,
                message: format!("open:{label}"),
            });
        }
        for field in ["args_sha256", "result_sha256"] {
            let digest = obj.get(field).and_then(Value::as_str);
            match digest {
                Some(d) if is_sha256_hex(d) => {
                    if !store.contains(d)? {
                        problems.push(Problem {
                            kind: ProblemKind::Missing,
                            span: index,
                            name: name.clone(),
                            field: Some(field.to_string()),
                            digest: Some(d.to_string()),
                            message: format!("missing:{d}"),
                        });
                    }
                }
                _ => problems.push(Problem {
                    kind: ProblemKind::InvalidDigest,
                    span: index,
                    name: name.clone(),
                    field: Some(field.to_string()),
                    digest: digest.map(str::to_string),
                    message: format!("invalid:{label}:{field}"),
                }),
            }
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::Form;
    use crate::gate::{tool_span_of_values, write_bodies, Body, MemoryStore};
    use serde_json::json;

    #[test]
    fn lists_every_problem() {
        let mut store = MemoryStore::new();
        let args = Body::from_value(&json!({"q": 1}), Form::Python).unwrap();
        let result = Body::from_value(&json!("r"), Form::Python).unwrap();
        let span = crate::gate::tool_span("search", &args, &result, "ok");
        write_bodies(&mut store, &span, &args, &result).unwrap();
        let good = serde_json::to_value(&span).unwrap();
        let open = serde_json::to_value(
            tool_span_of_values("edit", &json!(1), &json!(2), "running").unwrap(),
        )
        .unwrap();
        let spans = vec![
            good.clone(),
            open,
            json!({"name": "x", "status": "ok", "args_sha256": "../x"}),
            json!(3),
        ];
        let problems = export_ready(&spans, &store).unwrap();
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        let (a, r) = (crate::hash::sha256_hex(b"1"), crate::hash::sha256_hex(b"2"));
        assert_eq!(
            messages,
            vec![
                "open:edit".to_string(),
                format!("missing:{a}"),
                format!("missing:{r}"),
                "invalid:x:args_sha256".to_string(),
                "invalid:x:result_sha256".to_string(),
                "invalid:#3".to_string(),
            ]
        );
        assert!(export_ready(&[good], &store).unwrap().is_empty());
    }
}
