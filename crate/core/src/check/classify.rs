//! The classifier of seed 000: one span record in, one verdict out.
//!
//! For every well-formed record whose `status` is `ok`, `error` or absent, the status and
//! detail are exactly what the seed's `classify` returns (a differential test holds us to
//! it). Two things are added: a partial span (`running`, `open` ...) is `incomplete` with
//! its status named, as the seed's limitations section asks, and `clip_reason` is the
//! closed enum the seed asks for ("no free-text excuses"): by default ([`ReasonPolicy::Strict`])
//! a value outside the enum is not a declaration, so a cut carrying one is a silent clip,
//! and the row carries a warning naming the value, which fails the run. The seed's script
//! is lenient (any non-`none` text declares a clip); [`ReasonPolicy::Lenient`] reproduces it
//! exactly, still with the warning, for compatibility and for the differential test.

use serde::{Deserialize, Serialize};

#[cfg(test)]
use crate::span::SpanRecord;
use crate::span::{ClipReason, SpanView};

/// A verdict, in the seed's priority order: the first is the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Fewer bytes were injected than observed and no clip reason was declared.
    SilentClip,
    /// A length field is missing, or the span never closed.
    Incomplete,
    /// Same length, different content, nothing declared.
    HashMismatch,
    /// Cut, and the cut was declared.
    Clipped,
    /// The model received the same data as the tool returned, in another serialisation
    /// (JSON and Python's repr, another key order or spacing): not a cut. Only a trace-format
    /// reader, which sees both texts, can tell; a span record never classifies as this.
    Reformatted,
    Ok,
}

impl Status {
    /// Every status, in priority order: `ALL[s.priority()] == s`.
    pub const ALL: [Status; 6] = [
        Status::SilentClip,
        Status::Incomplete,
        Status::HashMismatch,
        Status::Clipped,
        Status::Reformatted,
        Status::Ok,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::SilentClip => "silent_clip",
            Status::Incomplete => "incomplete",
            Status::HashMismatch => "hash_mismatch",
            Status::Clipped => "clipped",
            Status::Reformatted => "reformatted",
            Status::Ok => "ok",
        }
    }

    /// The seed's PRIORITY number (0 = most urgent).
    pub fn priority(self) -> u8 {
        self as u8
    }

    /// Statuses that make a run untrustworthy (exit code 1), as in the seed.
    pub fn fails_run(self) -> bool {
        matches!(self, Status::SilentClip | Status::Incomplete)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`classify`] says of one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: Status,
    /// The seed's detail list: `ratio=0.88`, missing field names, the declared reason,
    /// `bytes_match_but_hash_differs`; plus `status=<s>` for a partial span.
    pub detail: Vec<String>,
    /// Problems that do not change the status but must not pass silently.
    pub warnings: Vec<String>,
}

const LENGTH_FIELDS: [&str; 3] = ["observed_bytes", "injected_bytes", "injected_tokens"];

/// How a `clip_reason` outside the closed enum is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonPolicy {
    /// The seed's enum is closed: an unknown value declares nothing (a cut carrying it is a
    /// silent clip, a changed hash a mismatch) and its warning fails the run.
    #[default]
    Strict,
    /// The seed script's leniency: any value other than `none` declares the clip; the row
    /// still carries the warning, but the run does not fail for it.
    Lenient,
}

/// The warning every unknown `clip_reason` carries; it starts with this prefix, so the
/// report can count such rows.
pub const UNKNOWN_REASON_WARNING: &str = "unknown clip_reason ";

/// Classifies one span record strictly (the seed's `classify`, plus partial spans, the
/// closed enum and warnings). See [`classify_with`].
pub fn classify(rec: &SpanView<'_>) -> Verdict {
    classify_with(rec, ReasonPolicy::Strict)
}

/// Classifies one span record with the given reading of unknown clip reasons.
pub fn classify_with(rec: &SpanView<'_>, policy: ReasonPolicy) -> Verdict {
    let mut warnings = Vec::new();
    let reason = rec.clip_reason_text();
    let mut undeclared = crate::bytes::eq(reason.as_bytes(), b"none");
    if ClipReason::parse(reason).is_none() {
        let consequence = match policy {
            ReasonPolicy::Strict => {
                undeclared = true;
                "not a declaration; fails the run"
            }
            ReasonPolicy::Lenient => "read as declared (lenient)",
        };
        warnings.push(format!(
            "{UNKNOWN_REASON_WARNING}{reason:?}: {consequence} (the enum is closed: {})",
            ClipReason::ALL.map(ClipReason::as_str).join(", ")
        ));
    }

    let lengths = [rec.observed_bytes, rec.injected_bytes, rec.injected_tokens];
    let open = rec.status.as_deref().filter(|s| !is_closed_status(s));
    // The common case, tested first: a closed span with all three lengths.
    if open.is_some() || lengths.iter().any(Option::is_none) {
        let mut detail: Vec<String> = open.map(|s| format!("status={s}")).into_iter().collect();
        for (field, value) in LENGTH_FIELDS.iter().zip(lengths) {
            if value.is_none() {
                detail.push(field.to_string());
            }
        }
        return Verdict {
            status: Status::Incomplete,
            detail,
            warnings,
        };
    }

    let obs = rec.observed_bytes.unwrap_or(0);
    let inj = rec.injected_bytes.unwrap_or(0);
    if inj < obs {
        let ratio = ratio_detail(clip_ratio(obs, inj));
        return if undeclared {
            Verdict {
                status: Status::SilentClip,
                detail: vec![ratio],
                warnings,
            }
        } else {
            Verdict {
                status: Status::Clipped,
                detail: vec![crate::bytes::to_string(reason), ratio],
                warnings,
            }
        };
    }

    let differs = match (
        rec.sha256_observed.as_deref(),
        rec.sha256_injected.as_deref(),
    ) {
        (Some(o), Some(i)) => {
            !o.is_empty() && !i.is_empty() && !crate::bytes::eq(o.as_bytes(), i.as_bytes())
        }
        _ => false,
    };
    if differs && undeclared {
        return Verdict {
            status: Status::HashMismatch,
            detail: vec!["bytes_match_but_hash_differs".to_string()],
            warnings,
        };
    }
    Verdict {
        status: Status::Ok,
        detail: Vec::new(),
        warnings,
    }
}

/// A span whose status says it finished. Anything else (running, open, partial ...) was
/// exported before the tool closed, so its lengths are not final.
#[inline]
fn is_closed_status(status: &str) -> bool {
    match status.len() {
        0 => true,
        2 => status.eq_ignore_ascii_case("ok"),
        5 => status.eq_ignore_ascii_case("error"),
        _ => false,
    }
}

/// The share of observed bytes that did not reach the model (the seed's `clip_ratio`).
/// The clip ratio of a span whose two lengths are known (what the report records and the
/// histogram counts); `None` when either is missing.
pub fn clip_ratio_of(observed: Option<u64>, injected: Option<u64>) -> Option<f64> {
    Some(clip_ratio(observed?, injected?))
}

pub fn clip_ratio(observed: u64, injected: u64) -> f64 {
    if observed == 0 {
        return 0.0;
    }
    1.0 - (injected as f64 / observed as f64)
}

/// `ratio=0.88`: the ratio (0 to 1) to two decimals, rounded exactly as `format!("{:.2}")`
/// and Python's `f"{r:.2f}"` round it (the exact binary value, ties to even). Integer
/// arithmetic instead of `core::fmt`'s float formatting, which cost as much as classifying
/// the span: every clipped span has one.
fn ratio_detail(ratio: f64) -> String {
    // A clip ratio is 1 - injected/observed with injected < observed: in (0, 1]. Anything
    // else (never passed here) is clamped into range rather than formatted another way.
    let ratio = if ratio.is_nan() {
        0.0
    } else {
        ratio.clamp(0.0, 1.0)
    };
    let hundredths = {
        // ratio = m * 2^-shift exactly; hundredths = round(m * 100 / 2^shift).
        let bits = ratio.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        let (m, shift) = match exponent {
            0 => (fraction, 1074),
            _ => (fraction | 1 << 52, 1075 - exponent),
        };
        // m * 100 < 2^60: below 2^(shift - 1), a half, the value rounds to 0.
        if m == 0 || shift > 61 {
            0
        } else {
            let p = m * 100;
            let q = p >> shift;
            let rest = p & ((1 << shift) - 1);
            let half = 1 << (shift - 1);
            q + u64::from(rest > half || (rest == half && q % 2 == 1))
        }
    };
    let mut out = String::with_capacity(10);
    out.push_str("ratio=");
    out.push(char::from(b'0' + (hundredths / 100) as u8));
    out.push('.');
    out.push(char::from(b'0' + (hundredths / 10 % 10) as u8));
    out.push(char::from(b'0' + (hundredths % 10) as u8));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows and rollup records store a status as its priority and read it back through
    /// `ALL`: the two orders must agree.
    #[test]
    fn all_lists_statuses_in_priority_order() {
        for s in Status::ALL {
            assert_eq!(Status::ALL[usize::from(s.priority())], s);
        }
    }

    #[test]
    fn ratio_detail_rounds_as_format_does() {
        let mut ratios = vec![
            0.0, 1.0, 0.005, 0.015, 0.125, 0.375, 0.625, 0.875, 0.995, 0.994999,
        ];
        ratios.extend([
            f64::MIN_POSITIVE,
            5e-324,
            1e-300,
            0.0049999999999999,
            0.0050000000000001,
        ]);
        // Every ratio the seed's formula gives for lengths to 400, and large lengths.
        for obs in 1..=400u64 {
            for inj in 0..=obs {
                ratios.push(clip_ratio(obs, inj));
            }
        }
        for obs in [999_983u64, 1 << 40, u64::MAX / 3] {
            for k in 0..2000u64 {
                ratios.push(clip_ratio(obs, obs / 2000 * k + k % 7));
            }
        }
        // Exactly halfway between hundredths, and one ulp either side.
        for k in 0..100 {
            let half = (2 * k + 1) as f64 / 200.0;
            ratios.extend([
                half,
                f64::from_bits(half.to_bits() - 1),
                f64::from_bits(half.to_bits() + 1),
            ]);
        }
        for r in ratios {
            assert_eq!(ratio_detail(r), format!("ratio={r:.2}"), "{r:e}");
        }
    }

    fn rec(
        obs: Option<u64>,
        inj: Option<u64>,
        tok: Option<u64>,
        reason: Option<&str>,
    ) -> SpanRecord {
        SpanRecord {
            name: Some("read_file".into()),
            observed_bytes: obs,
            injected_bytes: inj,
            injected_tokens: tok,
            clip_reason: reason.map(str::to_string),
            ..SpanRecord::default()
        }
    }

    // The seed's three tests.
    #[test]
    fn test_silent_clip() {
        let v = classify(&rec(Some(1000), Some(120), Some(80), Some("none")).view());
        assert_eq!(v.status, Status::SilentClip);
        assert!(v.detail[0].starts_with("ratio="));
        assert_eq!(v.detail, ["ratio=0.88"]);
    }

    #[test]
    fn test_declared_clip_is_visible() {
        let v = classify(&rec(Some(1000), Some(120), Some(80), Some("prompt_token_cap")).view());
        assert_eq!(v.status, Status::Clipped);
        assert_eq!(v.detail, ["prompt_token_cap", "ratio=0.88"]);
    }

    #[test]
    fn test_missing_lengths_fail() {
        let v = classify(&rec(None, None, None, None).view());
        assert_eq!(v.status, Status::Incomplete);
        assert_eq!(
            v.detail,
            ["observed_bytes", "injected_bytes", "injected_tokens"]
        );
    }

    #[test]
    fn hash_mismatch_only_when_nothing_declared() {
        let mut r = rec(Some(10), Some(10), Some(3), None);
        r.sha256_observed = Some("ab".into());
        r.sha256_injected = Some("cd".into());
        assert_eq!(classify(&r.view()).status, Status::HashMismatch);
        assert_eq!(classify(&r.view()).detail, ["bytes_match_but_hash_differs"]);
        r.clip_reason = Some("redaction".into());
        assert_eq!(classify(&r.view()).status, Status::Ok);
        r.sha256_injected = Some(String::new());
        r.clip_reason = None;
        assert_eq!(classify(&r.view()).status, Status::Ok);
    }

    #[test]
    fn partial_spans_are_incomplete_and_named() {
        let mut r = rec(Some(10), Some(10), Some(3), None);
        r.status = Some("running".into());
        let v = classify(&r.view());
        assert_eq!(v.status, Status::Incomplete);
        assert_eq!(v.detail, ["status=running"]);
        r.status = Some("ERROR".into());
        assert_eq!(classify(&r.view()).status, Status::Ok);
    }

    #[test]
    fn unknown_reason_leniently_classifies_like_the_seed() {
        let r = rec(Some(100), Some(50), Some(9), Some("too_big"));
        let v = classify_with(&r.view(), ReasonPolicy::Lenient);
        assert_eq!(v.status, Status::Clipped);
        assert_eq!(v.detail, ["too_big", "ratio=0.50"]);
        assert_eq!(v.warnings.len(), 1);
        assert!(v.warnings[0].starts_with("unknown clip_reason \"too_big\": read as declared"));
    }

    #[test]
    fn unknown_reason_is_not_a_declaration_by_default() {
        let v = classify(&rec(Some(100), Some(50), Some(9), Some("too_big")).view());
        assert_eq!(v.status, Status::SilentClip);
        assert_eq!(v.detail, ["ratio=0.50"]);
        assert!(
            v.warnings[0].starts_with("unknown clip_reason \"too_big\": not a declaration"),
            "{:?}",
            v.warnings
        );
        let mut same = rec(Some(10), Some(10), Some(3), Some("because"));
        same.sha256_observed = Some("ab".into());
        same.sha256_injected = Some("cd".into());
        assert_eq!(classify(&same.view()).status, Status::HashMismatch);
        // Every enum value still declares.
        for reason in ClipReason::ALL.map(ClipReason::as_str) {
            let v = classify(&rec(Some(100), Some(50), Some(9), Some(reason)).view());
            assert!(v.warnings.is_empty(), "{reason}");
        }
    }

    #[test]
    fn ratio_rounds_like_python() {
        // 1 - 7/8 = 0.125 exactly: Python's format rounds half to even ("0.12").
        let v = classify(&rec(Some(8), Some(7), Some(1), None).view());
        assert_eq!(v.detail, ["ratio=0.12"]);
    }
}

#[cfg(test)]
mod run_tests {
    use crate::check::{check_bytes, CheckOptions};

    const RUN: &[u8] = br#"{"span_id":"a","name":"read_file","observed_bytes":100,"injected_bytes":100,"injected_tokens":9,"clip_reason":"because"}
{"span_id":"b","name":"ls","observed_bytes":10,"injected_bytes":10,"injected_tokens":3}
"#;

    #[test]
    fn an_unknown_reason_fails_the_run_unless_lenient() {
        let strict = check_bytes(RUN, CheckOptions::default());
        assert_eq!(strict.counts.unknown_clip_reason, 1);
        assert_eq!(strict.counts.silent_clip, 0, "nothing was cut");
        assert_eq!(strict.exit_code, 1);
        let table = crate::check::render::table(&strict);
        assert!(table.contains("\"because\""), "{table}");

        let lenient = CheckOptions {
            lenient_clip_reason: true,
            ..CheckOptions::default()
        };
        let report = check_bytes(RUN, lenient);
        assert_eq!(report.counts.unknown_clip_reason, 1);
        assert_eq!(report.exit_code, 0);
    }
}
