//! `run_terminal`: a finished command as the model should read it (seed 001 §5).
//!
//! "Every terminal tool wrapper must capture and re-inject the exit code as a separate,
//! truncation-immune field", stdout and stderr keep their labels ("preserving which is
//! which"), `success` travels beside `exit_code`, a timeout is reported as one, and, from
//! §7, "if the output was truncated and no explicit success signal was captured, the model
//! should be prompted to re-verify". [`run_terminal`] takes what a runner captured (the two
//! streams, the exit code if any, whether it timed out) and returns the text the model reads
//! (header with the outcome, then the labelled output cut by the terminal pattern to the
//! budget, header included) and the outcome fields beside it.
//!
//! Unlike the seed's listing, a timed-out command keeps the output it produced before the
//! timeout: that partial output is often the only evidence of where it hung.

use serde::{Deserialize, Serialize};

use super::{truncate_with, Options, Pattern, TokenCounter, TruncateError, Truncation};

/// What a runner captured of one command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandRun {
    pub command: Option<String>,
    pub stdout: String,
    pub stderr: String,
    /// `None` when no exit code was captured (killed, lost, never reported).
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    /// The timeout that fired, in seconds, for the header.
    pub timeout_secs: Option<u64>,
}

/// The model-facing result of one command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TerminalResult {
    /// What the model reads: header (tool, command, exit code, success, timeout, and the
    /// re-verify instruction when needed), then the labelled, cut output.
    pub output: String,
    /// Never cut, never omitted.
    pub exit_code: Option<i64>,
    /// `exit_code == 0` and not timed out; `None` when no exit code was captured.
    pub success: Option<bool>,
    pub timed_out: bool,
    /// No success signal was captured: the output tells the model to re-verify.
    pub reverify: bool,
    pub truncation: Truncation,
}

/// The label lines of the two streams, as in the seed.
pub const STDOUT_LABEL: &str = "--- stdout ---\n";
pub const STDERR_LABEL: &str = "--- stderr ---\n";

/// The combined output with each stream under its label (a stream that wrote nothing is left
/// out; stderr always starts on a line of its own).
pub fn label_streams(stdout: &str, stderr: &str) -> String {
    let mut out = String::with_capacity(stdout.len() + stderr.len() + 32);
    if !stdout.is_empty() {
        out.push_str(STDOUT_LABEL);
        out.push_str(stdout);
    }
    if !stderr.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(STDERR_LABEL);
        out.push_str(stderr);
    }
    out
}

/// The success signal, if one was captured: exit code 0 and no timeout.
/// A timed-out command with an exit code (the runner killed it) did not succeed; without an
/// exit code nothing is known.
pub fn success_of(exit_code: Option<i64>, timed_out: bool) -> Option<bool> {
    exit_code.map(|c| c == 0 && !timed_out)
}

/// Builds the model-facing result. `options` gives the budget, the tool name and the
/// terminal settings; the pattern is always `terminal` and the header always on (it carries
/// the outcome), and the command, exit code and timeout come from `run`.
pub fn run_terminal(
    run: &CommandRun,
    options: &Options,
    counter: &dyn TokenCounter,
) -> Result<TerminalResult, TruncateError> {
    let success = success_of(run.exit_code, run.timed_out);
    let reverify = success.is_none() || run.timed_out;
    let opts = Options {
        pattern: Pattern::Terminal,
        header: true,
        command: run.command.clone().or_else(|| options.command.clone()),
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        outcome: Some(super::Outcome {
            success,
            timeout_secs: run.timeout_secs,
            reverify,
        }),
        ..options.clone()
    };
    let text = label_streams(&run.stdout, &run.stderr);
    let truncation = truncate_with(&text, &opts, counter)?;
    Ok(TerminalResult {
        output: truncation.text.clone(),
        exit_code: run.exit_code,
        success,
        timed_out: run.timed_out,
        reverify,
        truncation,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Budget, EstimateTokens};
    use super::*;

    fn run(stdout: &str, stderr: &str, exit_code: Option<i64>, timed_out: bool) -> CommandRun {
        CommandRun {
            command: Some("npm run build".into()),
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code,
            timed_out,
            timeout_secs: timed_out.then_some(120),
        }
    }

    #[test]
    fn streams_are_labelled_and_success_sits_beside_the_exit_code() {
        let r = run_terminal(
            &run("built 3 files\n", "warning: unused\n", Some(0), false),
            &Options::default(),
            &EstimateTokens,
        )
        .unwrap();
        assert_eq!(
            r.output,
            "Tool: terminal\nCommand: npm run build\nExit code: 0\nSuccess: yes\nOutput:\n\
             --- stdout ---\nbuilt 3 files\n--- stderr ---\nwarning: unused\n"
        );
        assert_eq!(
            (r.exit_code, r.success, r.reverify),
            (Some(0), Some(true), false)
        );
        let failed = run_terminal(
            &run("", "error: boom", Some(1), false),
            &Options::default(),
            &EstimateTokens,
        )
        .unwrap();
        assert!(
            failed.output.contains("Exit code: 1\nSuccess: no\n"),
            "{}",
            failed.output
        );
        assert!(failed.output.ends_with("--- stderr ---\nerror: boom"));
        assert_eq!(
            label_streams("a", "b"),
            "--- stdout ---\na\n--- stderr ---\nb"
        );
    }

    #[test]
    fn no_success_signal_tells_the_model_to_reverify_within_the_budget() {
        let log: String = (0..400).map(|i| format!("step {i} ok\n")).collect();
        let opts = Options {
            budget: Budget::Bytes(600),
            ..Options::default()
        };
        let r = run_terminal(&run(&log, "", None, true), &opts, &EstimateTokens).unwrap();
        assert!(r.output.len() <= 600, "{}", r.output.len());
        assert!(
            r.output.contains("Exit code: not reported\n"),
            "{}",
            r.output
        );
        assert!(
            r.output.contains("Timed out: yes (after 120 s)\n"),
            "{}",
            r.output
        );
        assert!(
            r.output.contains("Success: unknown: re-verify"),
            "{}",
            r.output
        );
        assert!(
            r.output.contains("--- stdout ---\nstep 0 ok"),
            "the partial output stays"
        );
        assert!(r.truncation.truncated && r.reverify && r.timed_out);
        assert_eq!(r.success, None);
        // No exit code but no timeout either: still unknown.
        let lost = run_terminal(
            &run("done\n", "", None, false),
            &Options::default(),
            &EstimateTokens,
        )
        .unwrap();
        assert!(lost.reverify && lost.output.contains("Success: unknown: re-verify"));
        // A timeout with an exit code (the runner killed it): not a success, re-verify.
        let killed = run_terminal(
            &run("", "", Some(137), true),
            &Options::default(),
            &EstimateTokens,
        )
        .unwrap();
        assert_eq!(killed.success, Some(false));
        assert!(killed.reverify);
    }
}
