//! The tenant policy: other tenants' rows never reach the model.
//!
//! Seed 004, among the packer's rules: "Do not paste other tenants' rows". A tool that reads
//! a shared table can return rows of every tenant; the handler should filter, and the packer
//! makes sure. Given the caller's tenant and the key that names a row's tenant
//! (`tenant_id` by default), [`drop_foreign_rows`] walks the result: an array element that is
//! an object whose key names another tenant is removed; such an object anywhere else (the
//! whole result, a field) is replaced by the placeholder `[DROPPED:foreign_tenant]`. Each
//! drop leaves a receipt, like a redaction: where, the rule (`foreign_tenant`), how many
//! bytes of JSON went, the placeholder, and never a character of the row or of the other
//! tenant's id. Rows without the key are kept unless the policy says `require_key`.
//!
//! It runs first, before redaction: what is dropped is never scanned, hashed, previewed or
//! stored for `get_more`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::redact::Receipt;

/// The rule id in receipts.
pub const FOREIGN_TENANT: &str = "foreign_tenant";
/// What stands where a foreign row was (outside arrays) and in receipts.
pub const DROPPED: &str = "[DROPPED:foreign_tenant]";

/// Whose rows the caller may see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantPolicy {
    /// The caller's tenant. A row's value matches when it is this string, or a number whose
    /// JSON text is this string.
    pub tenant: String,
    /// The key that names a row's tenant (compared exactly).
    pub key: String,
    /// Drop rows that do not carry the key at all, in arrays where some rows do.
    pub require_key: bool,
}

impl Default for TenantPolicy {
    fn default() -> Self {
        TenantPolicy {
            tenant: String::new(),
            key: "tenant_id".into(),
            require_key: false,
        }
    }
}

enum Verdict {
    Own,
    Foreign,
    /// No tenant key: not a tenant-scoped row.
    Unscoped,
}

fn verdict(value: &Value, policy: &TenantPolicy) -> Verdict {
    let Some(obj) = value.as_object() else {
        return Verdict::Unscoped;
    };
    match obj.get(&policy.key) {
        None => Verdict::Unscoped,
        Some(Value::String(s)) if *s == policy.tenant => Verdict::Own,
        Some(Value::Number(n)) if n.to_string() == policy.tenant => Verdict::Own,
        Some(_) => Verdict::Foreign,
    }
}

fn receipt(path: &str, value: &Value) -> Receipt {
    Receipt {
        field_path: path.to_string(),
        rule_id: FOREIGN_TENANT.to_string(),
        original_len: value.to_string().len() as u64,
        replacement: DROPPED.to_string(),
        offset: None,
    }
}

/// Removes every row of another tenant from `value`; returns one receipt per row dropped.
pub fn drop_foreign_rows(value: &mut Value, policy: &TenantPolicy) -> Vec<Receipt> {
    let mut receipts = Vec::new();
    let mut path = String::from("$");
    if let Verdict::Foreign = verdict(value, policy) {
        receipts.push(receipt(&path, value));
        *value = Value::String(DROPPED.to_string());
        return receipts;
    }
    walk(value, policy, &mut path, &mut receipts);
    receipts
}

fn walk(value: &mut Value, policy: &TenantPolicy, path: &mut String, out: &mut Vec<Receipt>) {
    match value {
        Value::Array(items) => {
            let scoped = policy.require_key
                && items
                    .iter()
                    .any(|v| v.as_object().is_some_and(|o| o.contains_key(&policy.key)));
            let mut kept = Vec::with_capacity(items.len());
            for (i, mut item) in std::mem::take(items).into_iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let drop = match verdict(&item, policy) {
                    Verdict::Foreign => true,
                    Verdict::Unscoped => scoped && item.is_object(),
                    Verdict::Own => false,
                };
                if drop {
                    out.push(receipt(path, &item));
                } else {
                    walk(&mut item, policy, path, out);
                    kept.push(item);
                }
                path.truncate(len);
            }
            *items = kept;
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let len = path.len();
                crate::canonical::push_key_segment(path, k);
                if let Verdict::Foreign = verdict(v, policy) {
                    out.push(receipt(path, v));
                    *v = Value::String(DROPPED.to_string());
                } else {
                    walk(v, policy, path, out);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// [`drop_foreign_rows`] over a text that is JSON: the filtered text (compact JSON) when a
/// row was dropped, else `None` (the text stays as it was, byte for byte), and the receipts.
pub fn filter_text(text: &str, policy: &TenantPolicy) -> (Option<String>, Vec<Receipt>) {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return (None, Vec::new());
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return (None, Vec::new());
    };
    let receipts = drop_foreign_rows(&mut value, policy);
    if receipts.is_empty() {
        return (None, receipts);
    }
    (Some(value.to_string()), receipts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(tenant: &str) -> TenantPolicy {
        TenantPolicy {
            tenant: tenant.into(),
            ..TenantPolicy::default()
        }
    }

    #[test]
    fn foreign_rows_go_with_a_receipt_that_names_no_data() {
        let mut v = json!({"rows": [
            {"tenant_id": "acme", "invoice": 1},
            {"tenant_id": "globex", "invoice": 2, "email": "ceo@globex.example"},
            {"tenant_id": "acme", "invoice": 3},
            {"note": "no tenant"}
        ], "owner": {"tenant_id": "initech", "name": "Bill"}, "count": 4});
        let receipts = drop_foreign_rows(&mut v, &policy("acme"));
        assert_eq!(
            v,
            json!({"rows": [
                {"tenant_id": "acme", "invoice": 1},
                {"tenant_id": "acme", "invoice": 3},
                {"note": "no tenant"}
            ], "owner": DROPPED, "count": 4})
        );
        let paths: Vec<&str> = receipts.iter().map(|r| r.field_path.as_str()).collect();
        assert_eq!(paths, ["$.rows[1]", "$.owner"]);
        let text = serde_json::to_string(&receipts).unwrap();
        assert!(
            !text.contains("globex") && !text.contains("initech"),
            "{text}"
        );
        assert_eq!(receipts[0].rule_id, FOREIGN_TENANT);
    }

    #[test]
    fn numbers_keys_and_required_keys() {
        let mut v = json!([{"org": 7, "x": 1}, {"org": 8}, {"x": 2}, "text"]);
        let p = TenantPolicy {
            tenant: "7".into(),
            key: "org".into(),
            require_key: true,
        };
        let receipts = drop_foreign_rows(&mut v, &p);
        assert_eq!(v, json!([{"org": 7, "x": 1}, "text"]));
        assert_eq!(receipts.len(), 2);
        let mut whole = json!({"tenant_id": "b", "secret": 1});
        drop_foreign_rows(&mut whole, &policy("a"));
        assert_eq!(whole, json!(DROPPED));
    }
}
