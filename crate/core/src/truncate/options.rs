//! The public option types of a truncation: which pattern, what budget, each pattern's
//! settings, and what travels beside the text (tool, exit code, command, header, the
//! `get_more` call). The driver in the parent module validates them and cuts.

use serde::{Deserialize, Serialize};

use super::{Budget, ToolKind, TruncateError};

/// Which cut to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Choose by tool kind, else by sniffing the content (seed 001's decision tree).
    #[default]
    Auto,
    Head,
    Tail,
    HeadTail,
    Terminal,
    Search,
    File,
    Json,
    /// A CSV table: header, first and last rows, the row count.
    Csv,
    /// A YAML document: head, tail, and every top-level and outcome key.
    Yaml,
}

/// Where the model can fetch what was cut: the marker then says
/// `get_more(id="<id>", offset=<offset + start of the omitted part>)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fetch {
    /// The id the paging tool takes (the tool call id, or the stored result's id).
    pub id: String,
    /// Byte offset of this text within the stored full result (0 for a whole result).
    pub offset: u64,
    /// The paging tool's name.
    pub tool: String,
}

impl Default for Fetch {
    fn default() -> Self {
        Fetch {
            id: String::new(),
            offset: 0,
            tool: "get_more".into(),
        }
    }
}

/// Settings of the terminal pattern (seed 001 §4, without its flaws).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerminalOptions {
    /// Share of the budget (after markers) for the first lines, command echo included.
    pub head_share: f64,
    /// Share for the last lines; the tail also gets whatever the error lines leave.
    pub tail_share: f64,
    /// Context lines shown before and after each error line of the dropped middle.
    pub context_before: usize,
    pub context_after: usize,
    /// Collapse runs of identical lines and `\r` progress redraws to one line with a count.
    pub collapse: bool,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        TerminalOptions {
            head_share: 0.25,
            tail_share: 0.45,
            context_before: 1,
            context_after: 0,
            collapse: true,
        }
    }
}

/// Settings of the file pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileOptions {
    /// The requested lines, 1-based and inclusive; `None` for a whole-file read.
    pub range: Option<[usize; 2]>,
    /// Whole-file shares of the budget for the head and the tail; definitions get the rest.
    pub head_share: f64,
    pub tail_share: f64,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            range: None,
            head_share: 0.4,
            tail_share: 0.3,
        }
    }
}

/// Settings of the JSON pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JsonOptions {
    /// Outcome keys: never dropped at any depth, and their scalar values never cut.
    pub keep_keys: Vec<String>,
    /// Also keep every key ending in `_id` or `Id` (receipt ids, call ids).
    pub keep_id_keys: bool,
    /// Name of the records that say what was omitted (`{"_omitted": "120 more items"}`).
    pub omitted_key: String,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions {
            keep_keys: [
                "status",
                "ok",
                "success",
                "error",
                "errors",
                "code",
                "exit_code",
                "id",
                "receipt",
                "receipt_id",
                "timed_out",
                "truncated",
                "next_offset",
            ]
            .map(String::from)
            .to_vec(),
            keep_id_keys: true,
            omitted_key: "_omitted".into(),
        }
    }
}

/// Whether output gets the `Tool: / Command: / Exit code: / Output:` header when the caller
/// does not say: when there is an outcome or a command to show (they are never cut, so they
/// must be above the cut), or the output is a terminal's. The one rule for `pack`,
/// `truncate` (JS `header` absent), the CLI and the page, which each used to decide it.
pub fn header_by_default(
    kind: Option<ToolKind>,
    exit_code: Option<i64>,
    timed_out: bool,
    command: Option<&str>,
) -> bool {
    exit_code.is_some() || timed_out || command.is_some() || kind == Some(ToolKind::Terminal)
}

/// What to cut, to what budget, and what travels beside the text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    pub pattern: Pattern,
    pub budget: Budget,
    /// Tool name: recorded in the audit, shown in the header, and used by `auto`.
    pub tool: Option<String>,
    /// Tool kind for `auto`; when absent it is derived from `tool`, else sniffed.
    pub kind: Option<ToolKind>,
    /// The command's exit code: carried beside the text (and in the header), never cut.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    /// The command that ran, for the header.
    pub command: Option<String>,
    /// Prepend the header (`Tool: ...`, `Command: ...`, `Exit code: ...`, `Output:`); the
    /// budget then covers header and output together.
    pub header: bool,
    pub fetch: Option<Fetch>,
    /// `head_tail`: share of the budget for the head (seed 001's `head_ratio`).
    pub head_share: f64,
    pub terminal: TerminalOptions,
    pub file: FileOptions,
    pub json: JsonOptions,
    /// The success signal and re-verify instruction for the header ([`run_terminal`](super::run_terminal) sets
    /// it; `None` writes the header without them).
    #[serde(skip)]
    pub outcome: Option<Outcome>,
}

/// What the header says beyond the exit code (set by [`run_terminal`](super::run_terminal)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `None`: no success signal was captured.
    pub success: Option<bool>,
    pub timeout_secs: Option<u64>,
    /// Tell the model to re-verify instead of assuming success.
    pub reverify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pattern: Pattern::Auto,
            budget: Budget::default(),
            tool: None,
            kind: None,
            exit_code: None,
            timed_out: false,
            command: None,
            header: false,
            fetch: None,
            head_share: 0.6,
            terminal: TerminalOptions::default(),
            file: FileOptions::default(),
            json: JsonOptions::default(),
            outcome: None,
        }
    }
}

impl Options {
    /// Options with this pattern and budget, everything else default.
    pub fn new(pattern: Pattern, budget: Budget) -> Options {
        Options {
            pattern,
            budget,
            ..Options::default()
        }
    }

    pub(super) fn validate(&self) -> Result<(), TruncateError> {
        let share = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(TruncateError::InvalidOptions(format!(
                    "{name} must be between 0 and 1, got {v}"
                )))
            }
        };
        share("head_share", self.head_share)?;
        share("terminal.head_share", self.terminal.head_share)?;
        share("terminal.tail_share", self.terminal.tail_share)?;
        share("file.head_share", self.file.head_share)?;
        share("file.tail_share", self.file.tail_share)?;
        if self.terminal.head_share + self.terminal.tail_share > 1.0 {
            return Err(TruncateError::InvalidOptions(
                "terminal.head_share + terminal.tail_share must not exceed 1".into(),
            ));
        }
        if self.file.head_share + self.file.tail_share > 1.0 {
            return Err(TruncateError::InvalidOptions(
                "file.head_share + file.tail_share must not exceed 1".into(),
            ));
        }
        if self.terminal.context_before > 100 || self.terminal.context_after > 100 {
            return Err(TruncateError::InvalidOptions(
                "terminal context must be at most 100 lines".into(),
            ));
        }
        if let Some([a, b]) = self.file.range {
            if a == 0 || b < a {
                return Err(TruncateError::InvalidOptions(format!(
                    "file.range must be 1-based with start <= end, got [{a}, {b}]"
                )));
            }
        }
        if self.json.omitted_key.is_empty() {
            return Err(TruncateError::InvalidOptions(
                "json.omitted_key must not be empty".into(),
            ));
        }
        Ok(())
    }
}
