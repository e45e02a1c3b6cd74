//! The header the model reads above a terminal result (seed 001 §5):
//!
//! ```text
//! Tool: terminal
//! Command: npm run build
//! Exit code: 1
//! Output:
//! ```
//!
//! The header is written outside the cut: no budget removes the exit code or the timeout,
//! and the budget covers header and output together. A very long command is cut in its
//! middle (it is context, not outcome) so that it cannot crowd out the output.

use super::budget::Measure;
use super::output::cut_middle;
use super::Options;

pub(crate) fn header(opts: &Options, limit: usize) -> String {
    let mut h = String::new();
    h.push_str("Tool: ");
    h.push_str(&one_line(opts.tool.as_deref().unwrap_or("terminal")));
    h.push('\n');
    if let Some(cmd) = &opts.command {
        let cmd = one_line(cmd);
        let m = Measure::for_unit(opts.budget.unit());
        let cap = (limit / 4).max(32);
        let shown = match cut_middle(&cmd, 0, cmd.len(), cap, m, &|_| None) {
            Some(c) => format!("{}{}{}", &cmd[..c.head_end], c.marker, &cmd[c.tail_start..]),
            None => cmd,
        };
        h.push_str("Command: ");
        h.push_str(&shown);
        h.push('\n');
    }
    match opts.exit_code {
        Some(code) => h.push_str(&format!("Exit code: {code}\n")),
        None => h.push_str("Exit code: not reported\n"),
    }
    let timeout = opts.outcome.and_then(|o| o.timeout_secs);
    match (opts.timed_out, timeout) {
        (true, Some(secs)) => h.push_str(&format!("Timed out: yes (after {secs} s)\n")),
        (true, None) => h.push_str("Timed out: yes\n"),
        _ => {}
    }
    if let Some(outcome) = opts.outcome {
        match (outcome.success, outcome.reverify) {
            (Some(true), false) => h.push_str("Success: yes\n"),
            (Some(false), false) => h.push_str("Success: no\n"),
            (Some(false), true) => h.push_str(
                "Success: no: the command did not finish; re-verify its effect before reporting a result\n",
            ),
            _ => h.push_str(
                "Success: unknown: re-verify (no exit code was captured; do not assume the command succeeded)\n",
            ),
        }
    }
    h.push_str("Output:\n");
    h
}

/// Newlines and carriage returns shown as `\n` and `\r`, so a header field stays one line.
fn one_line(s: &str) -> String {
    s.replace('\r', "\\r").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_carries_outcome_fields() {
        let opts = Options {
            command: Some("npm run build".into()),
            exit_code: Some(1),
            timed_out: true,
            ..Options::default()
        };
        assert_eq!(
            header(&opts, 1000),
            "Tool: terminal\nCommand: npm run build\nExit code: 1\nTimed out: yes\nOutput:\n"
        );
        let opts = Options {
            tool: Some("bash".into()),
            command: Some(format!("echo {}\nrm -rf x", "a".repeat(500))),
            ..Options::default()
        };
        let h = header(&opts, 200);
        assert!(h.starts_with("Tool: bash\nCommand: echo aaa"));
        assert!(h.contains("bytes cut...]"));
        assert!(h.contains("rm -rf x\nExit code: not reported\nOutput:\n"));
        assert_eq!(h.lines().count(), 4);
    }
}
