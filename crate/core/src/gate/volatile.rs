//! Volatile fields: values that change on every run without the call changing.
//!
//! Seed 002: "Timestamps, random request ids, and absolute temp paths do not belong inside
//! the hashed body. Strip them into attributes that you do not use for equality, or the gate
//! will fail closed on noise." [`strip`] does that to a parsed body before it is
//! canonicalised and hashed: each volatile value is replaced by a typed placeholder
//! (`"[VOLATILE:timestamp]"`), so the body keeps its shape and a reader of the store sees
//! where something was taken out, and the value itself is returned as a [`Stripped`]
//! attribute that rides beside the span record and never enters a hash or a manifest.
//!
//! What is volatile ([`VolatilePolicy`]):
//! - by key name (compared without case and separators, so `createdAt`, `created_at` and
//!   `Created-At` are one name): timestamps (`timestamp`, `ts`, `created_at`, `started_at`,
//!   `duration_ms` ...) and random ids (`request_id`, `x-request-id`, `trace_id`, `span_id`,
//!   `nonce` ...); more with `keys`, fewer with `keep`;
//! - by JSON path (`$.meta.run`, `$.items[*].seen`, `$.*.ts`), for fields whose name is not
//!   enough;
//! - absolute temp paths inside any string (`/tmp/tmp.x8Ab/repo/a.rs` →
//!   `[VOLATILE:temp_path]/repo/a.rs`): the temp root and its random first component go,
//!   the rest of the path stays, so two calls on different files still differ.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::push_key_segment;
use crate::error::Coded;

/// Default volatile key names, normalised (lowercase ASCII letters and digits only), with
/// the kind each is stripped as.
const DEFAULT_KEYS: &[(&str, Kind)] = &[
    ("timestamp", Kind::Timestamp),
    ("ts", Kind::Timestamp),
    ("time", Kind::Timestamp),
    ("datetime", Kind::Timestamp),
    ("now", Kind::Timestamp),
    ("createdat", Kind::Timestamp),
    ("updatedat", Kind::Timestamp),
    ("modifiedat", Kind::Timestamp),
    ("startedat", Kind::Timestamp),
    ("endedat", Kind::Timestamp),
    ("finishedat", Kind::Timestamp),
    ("completedat", Kind::Timestamp),
    ("generatedat", Kind::Timestamp),
    ("receivedat", Kind::Timestamp),
    ("sentat", Kind::Timestamp),
    ("starttime", Kind::Timestamp),
    ("endtime", Kind::Timestamp),
    ("elapsed", Kind::Timestamp),
    ("elapsedms", Kind::Timestamp),
    ("durationms", Kind::Timestamp),
    ("latencyms", Kind::Timestamp),
    ("tookms", Kind::Timestamp),
    ("requestid", Kind::RequestId),
    ("xrequestid", Kind::RequestId),
    ("traceid", Kind::RequestId),
    ("spanid", Kind::RequestId),
    ("parentspanid", Kind::RequestId),
    ("correlationid", Kind::RequestId),
    ("xcorrelationid", Kind::RequestId),
    ("nonce", Kind::RequestId),
    ("runid", Kind::RequestId),
];

/// Why a value was stripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Timestamp,
    RequestId,
    TempPath,
    /// A key name the caller listed.
    Key,
    /// A JSON path the caller listed.
    Path,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Timestamp => "timestamp",
            Kind::RequestId => "request_id",
            Kind::TempPath => "temp_path",
            Kind::Key => "key",
            Kind::Path => "path",
        }
    }

    fn placeholder(self) -> String {
        format!("[VOLATILE:{}]", self.as_str())
    }
}

/// Which fields are volatile. The default strips the timestamp and request-id key names
/// above and absolute temp paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VolatilePolicy {
    /// Use the default key names.
    pub defaults: bool,
    /// More key names whose values are volatile (compared without case and separators).
    pub keys: Vec<String>,
    /// Default key names that are data here, not noise (`time` in a timetable ...).
    pub keep: Vec<String>,
    /// JSON paths of volatile values: `$` then `.key`, `["key"]`, `[3]`, `[*]` (any index)
    /// or `.*` (any key).
    pub paths: Vec<String>,
    /// Replace absolute temp paths (`/tmp/...`, `/var/folders/.../T/...`, `%TEMP%`) inside
    /// strings.
    pub temp_paths: bool,
}

impl Default for VolatilePolicy {
    fn default() -> Self {
        VolatilePolicy {
            defaults: true,
            keys: Vec::new(),
            keep: Vec::new(),
            paths: Vec::new(),
            temp_paths: true,
        }
    }
}

/// One stripped value: where it was, why, and the value itself (already redacted, since
/// redaction runs first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stripped {
    pub field_path: String,
    pub kind: Kind,
    pub value: Value,
}

/// A path pattern that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    pub pattern: String,
    pub message: &'static str,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "volatile path {:?}: {} (expected $ followed by .key, [\"key\"], [N], [*] or .*)",
            self.pattern, self.message
        )
    }
}

impl std::error::Error for PathError {}

impl Coded for PathError {
    fn code(&self) -> &'static str {
        "invalid_policy"
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pat {
    Key(String),
    Index(usize),
    AnyKey,
    AnyIndex,
}

/// A compiled [`VolatilePolicy`].
#[derive(Debug, Clone)]
pub struct Volatile {
    keys: Vec<(String, Kind)>,
    paths: Vec<Vec<Pat>>,
    temp_paths: bool,
}

fn norm(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl Volatile {
    pub fn new(policy: &VolatilePolicy) -> Result<Volatile, PathError> {
        let keep: Vec<String> = policy.keep.iter().map(|k| norm(k)).collect();
        let mut keys: Vec<(String, Kind)> = Vec::new();
        if policy.defaults {
            for (k, kind) in DEFAULT_KEYS {
                if !keep.iter().any(|x| x == k) {
                    keys.push((k.to_string(), *kind));
                }
            }
        }
        for k in &policy.keys {
            let k = norm(k);
            if !k.is_empty() && !keys.iter().any(|(x, _)| *x == k) {
                keys.push((k, Kind::Key));
            }
        }
        let paths = policy
            .paths
            .iter()
            .map(|p| parse_path(p))
            .collect::<Result<_, _>>()?;
        Ok(Volatile {
            keys,
            paths,
            temp_paths: policy.temp_paths,
        })
    }

    /// Strips every volatile value of `value` in place; `root` is the path prefix of the
    /// returned attributes (`$.args`).
    pub fn strip(&self, value: &mut Value, root: &str) -> Vec<Stripped> {
        let mut out = Vec::new();
        let mut segs = Vec::new();
        self.walk(value, &mut segs, root, &mut out);
        out
    }

    fn walk(&self, value: &mut Value, segs: &mut Vec<Seg>, root: &str, out: &mut Vec<Stripped>) {
        if !segs.is_empty() && self.paths.iter().any(|p| matches(p, segs)) {
            return take(value, Kind::Path, segs, root, out);
        }
        if let Some(Seg::Key(k)) = segs.last() {
            let k = norm(k);
            if let Some((_, kind)) = self.keys.iter().find(|(x, _)| *x == k) {
                // A container under a volatile name (`"timestamp": {"s": 1}`) goes whole.
                return take(value, *kind, segs, root, out);
            }
        }
        match value {
            Value::String(s) if self.temp_paths => {
                if let Some(new) = replace_temp_paths(s) {
                    out.push(Stripped {
                        field_path: path_of(root, segs),
                        kind: Kind::TempPath,
                        value: Value::String(std::mem::replace(s, new)),
                    });
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    segs.push(Seg::Index(i));
                    self.walk(item, segs, root, out);
                    segs.pop();
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    segs.push(Seg::Key(k.clone()));
                    self.walk(v, segs, root, out);
                    segs.pop();
                }
            }
            _ => {}
        }
    }
}

fn take(value: &mut Value, kind: Kind, segs: &[Seg], root: &str, out: &mut Vec<Stripped>) {
    // A null is no noise: there is nothing run-specific in it.
    if value.is_null() {
        return;
    }
    let old = std::mem::replace(value, Value::String(kind.placeholder()));
    out.push(Stripped {
        field_path: path_of(root, segs),
        kind,
        value: old,
    });
}

fn path_of(root: &str, segs: &[Seg]) -> String {
    let mut path = root.to_string();
    for s in segs {
        match s {
            Seg::Key(k) => push_key_segment(&mut path, k),
            Seg::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    path
}

fn matches(pattern: &[Pat], segs: &[Seg]) -> bool {
    pattern.len() == segs.len()
        && pattern.iter().zip(segs).all(|(p, s)| match (p, s) {
            (Pat::AnyKey, Seg::Key(_)) | (Pat::AnyIndex, Seg::Index(_)) => true,
            (Pat::Key(a), Seg::Key(b)) => a == b,
            (Pat::Index(a), Seg::Index(b)) => a == b,
            _ => false,
        })
}

fn parse_path(pattern: &str) -> Result<Vec<Pat>, PathError> {
    let err = |message| PathError {
        pattern: pattern.to_string(),
        message,
    };
    let rest = pattern
        .strip_prefix('$')
        .ok_or_else(|| err("does not start with $"))?;
    let b = rest.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < b.len() && b[end] != b'.' && b[end] != b'[' {
                    end += 1;
                }
                let key = &rest[start..end];
                if key.is_empty() {
                    return Err(err("empty key after '.'"));
                }
                out.push(if key == "*" {
                    Pat::AnyKey
                } else {
                    Pat::Key(key.to_string())
                });
                i = end;
            }
            b'[' => {
                let close = rest[i..]
                    .find(']')
                    .map(|c| i + c)
                    .ok_or_else(|| err("'[' without ']'"))?;
                let inner = &rest[i + 1..close];
                if inner == "*" {
                    out.push(Pat::AnyIndex);
                    i = close + 1;
                } else if inner.starts_with('"') {
                    // A quoted key may hold ']': read the JSON string, then expect ']'.
                    let mut de = serde_json::Deserializer::from_str(&rest[i + 1..]).into_iter();
                    let Some(Ok(Value::String(key))) = de.next() else {
                        return Err(err("bad quoted key"));
                    };
                    let after = i + 1 + de.byte_offset();
                    if b.get(after) != Some(&b']') {
                        return Err(err("quoted key not followed by ']'"));
                    }
                    out.push(Pat::Key(key));
                    i = after + 1;
                } else {
                    let n = inner
                        .parse::<usize>()
                        .map_err(|_| err("index is not a number, \"key\" or *"))?;
                    out.push(Pat::Index(n));
                    i = close + 1;
                }
            }
            _ => return Err(err("unexpected character")),
        }
    }
    if out.is_empty() {
        return Err(err("the whole body cannot be volatile"));
    }
    Ok(out)
}

/// Temp roots: the prefix and how many path components after it are run-specific (the
/// random directory or file name; macOS's per-user folders have two more before `T/`).
const TEMP_ROOTS: &[&str] = &["/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/"];

/// `s` with every absolute temp path's root (the temp directory and the random component
/// after it) replaced by `[VOLATILE:temp_path]`; `None` when there is none.
fn replace_temp_paths(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        // Every temp root starts with an ASCII byte ('/' or a drive letter), which is also a
        // char boundary, so slicing there is safe.
        if !matches!(bytes[i], b'/' | b'A'..=b'Z' | b'a'..=b'z') {
            i += 1;
            continue;
        }
        let starts_path = i == 0 || !is_path_byte(bytes[i - 1]) || s[..i].ends_with("://");
        if starts_path {
            if let Some(end) = temp_root_end(&s[i..]) {
                out.push_str(&s[last..i]);
                out.push_str("[VOLATILE:temp_path]");
                last = i + end;
                i = last;
                continue;
            }
        }
        i += 1;
    }
    if last == 0 {
        return None;
    }
    out.push_str(&s[last..]);
    Some(out)
}

fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'\\' | b'.' | b'_' | b'-' | b'~' | b'%')
}

/// The length of the temp root at the start of `s` (prefix plus its first component), if
/// `s` starts with one.
fn temp_root_end(s: &str) -> Option<usize> {
    let component = |from: usize, sep: &[u8]| -> Option<usize> {
        let b = s.as_bytes();
        let mut end = from;
        while end < b.len() && is_path_byte(b[end]) && !sep.contains(&b[end]) {
            end += 1;
        }
        (end > from).then_some(end)
    };
    for root in TEMP_ROOTS {
        if s.starts_with(root) {
            return component(root.len(), b"/");
        }
    }
    // macOS: /var/folders/xx/yyyyyy/T/<random>, also under /private.
    for root in ["/var/folders/", "/private/var/folders/"] {
        if let Some(rest) = s.strip_prefix(root) {
            let mut parts = rest.splitn(4, '/');
            let (a, b, t) = (parts.next()?, parts.next()?, parts.next()?);
            if a.is_empty() || b.is_empty() || t != "T" {
                return None;
            }
            return component(root.len() + a.len() + b.len() + t.len() + 3, b"/");
        }
    }
    // Windows: C:\Users\NAME\AppData\Local\Temp\<random> (either slash).
    let b = s.as_bytes();
    if b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/') {
        let lower = s.to_ascii_lowercase().replace('\\', "/");
        if lower[3..].starts_with("users/") {
            let name_end = 9 + lower[9..].find('/')?;
            let tail = "/appdata/local/temp/";
            if lower[name_end..].starts_with(tail) {
                return component(name_end + tail.len(), b"/\\");
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strip(v: &mut Value, p: &VolatilePolicy) -> Vec<Stripped> {
        Volatile::new(p).unwrap().strip(v, "$")
    }

    #[test]
    fn default_keys_any_spelling_and_containers() {
        let mut v = json!({"createdAt": "2026-11-30T01:02:03Z", "X-Request-Id": "f1e2", "q": "rust",
                            "meta": {"timestamp": {"s": 1, "ns": 2}, "trace_id": null}});
        let s = strip(&mut v, &VolatilePolicy::default());
        assert_eq!(
            v,
            json!({"createdAt": "[VOLATILE:timestamp]", "X-Request-Id": "[VOLATILE:request_id]", "q": "rust",
                   "meta": {"timestamp": "[VOLATILE:timestamp]", "trace_id": null}})
        );
        let paths: Vec<&str> = s.iter().map(|x| x.field_path.as_str()).collect();
        assert_eq!(
            paths,
            ["$.createdAt", "$[\"X-Request-Id\"]", "$.meta.timestamp"]
        );
        assert_eq!(s[2].value, json!({"s": 1, "ns": 2}));
    }

    #[test]
    fn keys_keep_and_paths_configure() {
        let mut v = json!({"time": "09:15", "seed": 42, "items": [{"seen": 1}, {"seen": 2}], "a": {"b": {"ts": 3}}});
        let p = VolatilePolicy {
            keep: vec!["time".into()],
            keys: vec!["Seed".into()],
            paths: vec!["$.items[*].seen".into()],
            ..VolatilePolicy::default()
        };
        let s = strip(&mut v, &p);
        assert_eq!(v["time"], "09:15");
        assert_eq!(v["seed"], "[VOLATILE:key]");
        assert_eq!(
            v["items"],
            json!([{"seen": "[VOLATILE:path]"}, {"seen": "[VOLATILE:path]"}])
        );
        assert_eq!(v["a"]["b"]["ts"], "[VOLATILE:timestamp]");
        assert_eq!(s.len(), 4);
        let off = VolatilePolicy {
            defaults: false,
            temp_paths: false,
            ..VolatilePolicy::default()
        };
        let mut w = json!({"ts": 1, "p": "/tmp/x/y"});
        assert!(strip(&mut w, &off).is_empty());
        assert_eq!(w, json!({"ts": 1, "p": "/tmp/x/y"}));
    }

    #[test]
    fn temp_roots_go_the_rest_of_the_path_stays() {
        for (input, want) in [
            ("/tmp/tmp.x8Ab/repo/a.rs", "[VOLATILE:temp_path]/repo/a.rs"),
            (
                "wrote /tmp/pytest-7/out.txt and /var/tmp/k",
                "wrote [VOLATILE:temp_path]/out.txt and [VOLATILE:temp_path]",
            ),
            (
                "/var/folders/3x/abc123/T/tmpq1/f.json",
                "[VOLATILE:temp_path]/f.json",
            ),
            (
                "C:\\Users\\ann\\AppData\\Local\\Temp\\tmp42\\a.txt",
                "[VOLATILE:temp_path]\\a.txt",
            ),
            ("file:///tmp/abc/x", "file://[VOLATILE:temp_path]/x"),
        ] {
            assert_eq!(replace_temp_paths(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(
            replace_temp_paths("café é/tmp/é1/x, 工具 /tmp/d/é").as_deref(),
            Some("café é/tmp/é1/x, 工具 [VOLATILE:temp_path]/é")
        );
        for input in [
            "/tmp",
            "/home/a/tmp/x",
            "src/tmp/a.rs",
            "/tmp/",
            "café",
            "é/tmp",
        ] {
            assert_eq!(replace_temp_paths(input), None, "{input}");
        }
    }

    #[test]
    fn bad_paths_are_named() {
        for p in ["meta.x", "$", "$.", "$[x]", "$[\"a\"", "$a"] {
            let err = Volatile::new(&VolatilePolicy {
                paths: vec![p.into()],
                ..VolatilePolicy::default()
            })
            .unwrap_err();
            assert!(err.to_string().contains(&format!("{p:?}")), "{err}");
        }
    }
}
