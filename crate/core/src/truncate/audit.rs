//! Seed 001 §9's audit: one record per tool call, and the aggregate that tells whether the
//! truncation strategy is hiding evidence.
//!
//! The record keeps the seed's field names, so records written by the seed's
//! `truncation_audit_record` and by toolslice aggregate together.

use serde::{Deserialize, Serialize};

use super::auto::ToolKind;

/// The seed's audit record of one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub tool: String,
    /// Bytes the model would have seen uncut (header included when rendered).
    pub full_bytes: usize,
    /// Bytes it saw.
    pub truncated_bytes: usize,
    /// `truncated_bytes / max(full_bytes, 1)`: the share retained (the seed's name).
    pub truncation_ratio: f64,
    pub was_truncated: bool,
    pub pattern: String,
    /// The exit code travels as a field beside the text.
    pub exit_code_preserved: bool,
    /// An error-matching line of the input is absent from the output.
    pub errors_in_dropped_region: bool,
}

impl AuditRecord {
    /// A record in the seed's form; `pattern` is `"none"` when nothing was cut.
    pub fn new(
        tool: &str,
        full_bytes: usize,
        truncated_bytes: usize,
        pattern: &str,
        exit_code_preserved: bool,
        errors_in_dropped_region: bool,
    ) -> AuditRecord {
        AuditRecord {
            tool: tool.to_string(),
            full_bytes,
            truncated_bytes,
            truncation_ratio: truncated_bytes as f64 / full_bytes.max(1) as f64,
            was_truncated: pattern != "none",
            pattern: pattern.to_string(),
            exit_code_preserved,
            errors_in_dropped_region,
        }
    }
}

/// What a week of records says (seed 001 §9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditSummary {
    pub calls: usize,
    pub truncated: usize,
    /// `truncated / calls` (warning above 0.30).
    pub share_truncated: f64,
    /// Truncated calls that dropped an error line.
    pub lost_error_line: usize,
    /// `lost_error_line / truncated` (goal: 0); `None` without truncated calls.
    pub share_lost_error_line: Option<f64>,
    /// Calls of terminal-class tools (by pattern or tool name).
    pub terminal_calls: usize,
    pub exit_code_preserved: usize,
    /// `exit_code_preserved / terminal_calls` (goal: 1); `None` without terminal calls.
    pub share_exit_code_preserved: Option<f64>,
    /// Mean `truncation_ratio` of truncated calls (warning below 0.20; aim for 0.4-0.7).
    pub mean_retention: Option<f64>,
    pub warnings: Vec<String>,
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Aggregates audit records into the seed's four numbers and its warnings.
pub fn aggregate(records: &[AuditRecord]) -> AuditSummary {
    let calls = records.len();
    let truncated: Vec<&AuditRecord> = records.iter().filter(|r| r.was_truncated).collect();
    let lost = truncated
        .iter()
        .filter(|r| r.errors_in_dropped_region)
        .count();
    let terminal: Vec<&AuditRecord> = records
        .iter()
        .filter(|r| {
            r.pattern == "terminal" || ToolKind::from_tool_name(&r.tool) == Some(ToolKind::Terminal)
        })
        .collect();
    let preserved = terminal.iter().filter(|r| r.exit_code_preserved).count();
    let share_truncated = truncated.len() as f64 / calls.max(1) as f64;
    let share_lost = (!truncated.is_empty()).then(|| lost as f64 / truncated.len() as f64);
    let share_exit = (!terminal.is_empty()).then(|| preserved as f64 / terminal.len() as f64);
    let mean_retention = (!truncated.is_empty()).then(|| {
        truncated.iter().map(|r| r.truncation_ratio).sum::<f64>() / truncated.len() as f64
    });

    let mut warnings = Vec::new();
    if share_truncated > 0.30 {
        warnings.push(format!(
            "{} of calls were truncated (over 30%): the tools return more than the model needs; \
             filter on the tool side (git log --oneline -20, grep -c before grep)",
            pct(share_truncated)
        ));
    }
    if let Some(r) = mean_retention {
        if r < 0.20 {
            warnings.push(format!(
                "truncated calls keep {} of their output on average (under 20%): the model reasons \
                 from a fragment; aim for 40-70% retention",
                pct(r)
            ));
        }
    }
    if lost > 0 {
        warnings.push(format!(
            "{lost} truncated calls dropped an error line (goal: zero): the error patterns or the \
             pattern choice miss evidence"
        ));
    }
    if let Some(s) = share_exit {
        if s < 1.0 {
            warnings.push(format!(
                "{} of terminal calls carried the exit code as a separate field (goal: 100%): the \
                 false-success failure mode is latent",
                pct(s)
            ));
        }
    }
    AuditSummary {
        calls,
        truncated: truncated.len(),
        share_truncated,
        lost_error_line: lost,
        share_lost_error_line: share_lost,
        terminal_calls: terminal.len(),
        exit_code_preserved: preserved,
        share_exit_code_preserved: share_exit,
        mean_retention,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        tool: &str,
        full: usize,
        kept: usize,
        pattern: &str,
        exit: bool,
        lost: bool,
    ) -> AuditRecord {
        AuditRecord::new(tool, full, kept, pattern, exit, lost)
    }

    #[test]
    fn record_matches_seed_formula() {
        let r = rec("terminal", 12000, 6000, "terminal", true, false);
        assert_eq!(r.truncation_ratio, 0.5);
        assert!(r.was_truncated);
        let json = serde_json::to_value(&r).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "tool",
                "full_bytes",
                "truncated_bytes",
                "truncation_ratio",
                "was_truncated",
                "pattern",
                "exit_code_preserved",
                "errors_in_dropped_region"
            ]
        );
        assert!(!rec("ls", 10, 10, "none", false, false).was_truncated);
    }

    #[test]
    fn aggregate_reports_seed_numbers_and_warnings() {
        let records = vec![
            rec("terminal", 1000, 100, "head", false, true),
            rec("terminal", 1000, 150, "terminal", true, false),
            rec("web_search", 100, 100, "none", false, false),
        ];
        let s = aggregate(&records);
        assert_eq!((s.calls, s.truncated, s.lost_error_line), (3, 2, 1));
        assert_eq!(s.share_lost_error_line, Some(0.5));
        assert_eq!(s.terminal_calls, 2);
        assert_eq!(s.share_exit_code_preserved, Some(0.5));
        assert!((s.mean_retention.unwrap() - 0.125).abs() < 1e-12);
        assert_eq!(s.warnings.len(), 4, "{:?}", s.warnings);
        let quiet = aggregate(&[rec("terminal", 10, 10, "none", true, false)]);
        assert!(quiet.warnings.is_empty());
        assert_eq!(aggregate(&[]).share_truncated, 0.0);
    }

    #[test]
    fn reads_records_written_by_the_seed() {
        let seed = r#"{"tool": "terminal", "full_bytes": 50000, "truncated_bytes": 6000,
            "truncation_ratio": 0.12, "was_truncated": true, "pattern": "semantic",
            "exit_code_preserved": true, "errors_in_dropped_region": false}"#;
        let r: AuditRecord = serde_json::from_str(seed).unwrap();
        assert_eq!(aggregate(&[r]).terminal_calls, 1);
    }
}
