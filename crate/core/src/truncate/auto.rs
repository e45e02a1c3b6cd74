//! `auto`: seed 001 §6's decision tree.
//!
//! ```text
//! fits?                        -> unchanged
//! structured (valid JSON)?     -> json
//! a CSV table / YAML mapping?  -> csv / yaml (unless terminal- or search-class)
//! terminal-class?              -> terminal   (kind, tool name, or an exit code/command given)
//! search or list?              -> search
//! file read?                   -> file       (kind, tool name, or a line range given)
//! otherwise                    -> head_tail
//! ```
//!
//! The kind comes from `Options::kind`, else from the tool's name (`bash`, `run_command`,
//! `grep`, `web_search`, `read_file` ...). When neither says, the content is sniffed: source
//! code (definition lines), terminal output (error lines, progress redraws, a shell prompt),
//! search results (`path:line:` matches, numbered results, bare paths), else `head_tail`.

use serde::{Deserialize, Serialize};

use super::matcher::is_definition_line;
use super::{json, tabular, Applied, Ctx, Pattern, TruncateError};

/// What kind of tool produced the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Command output with an exit code (build, test, deploy, shell).
    Terminal,
    /// Ranked results or a listing (grep, web search, ls, git log).
    Search,
    /// A file read.
    File,
    /// Structured output (JSON).
    Json,
    /// Known, and none of the above: head and tail.
    Other,
}

impl ToolKind {
    /// The kind a tool's name suggests, if any: its words (split at `_`, `-`, `.`, `/`,
    /// spaces and lower-to-upper case changes) are matched against known names.
    pub fn from_tool_name(name: &str) -> Option<ToolKind> {
        let mut words: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in name.chars() {
            if !c.is_alphanumeric() {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                prev_lower = false;
                continue;
            }
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase();
            cur.extend(c.to_lowercase());
        }
        if !cur.is_empty() {
            words.push(cur);
        }
        let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
        if has(&["git"]) && has(&["log"]) {
            return Some(ToolKind::Search);
        }
        if has(&["read", "cat", "view", "open"]) && has(&["file", "files"])
            || has(&["read"]) && words.len() == 1
        {
            return Some(ToolKind::File);
        }
        if has(&[
            "search", "grep", "rg", "find", "glob", "list", "ls", "tree", "query", "lookup",
        ]) {
            return Some(ToolKind::Search);
        }
        if has(&[
            "terminal",
            "bash",
            "shell",
            "sh",
            "zsh",
            "exec",
            "execute",
            "command",
            "cmd",
            "run",
            "process",
            "subprocess",
            "script",
            "npm",
            "cargo",
            "make",
            "build",
            "test",
            "deploy",
            "logs",
            "log",
            "kubectl",
            "docker",
            "git",
            "pytest",
        ]) {
            return Some(ToolKind::Terminal);
        }
        if has(&["file", "files"]) {
            return Some(ToolKind::File);
        }
        if has(&["fetch", "extract", "http", "browse", "web", "get", "api"]) {
            return Some(ToolKind::Other);
        }
        None
    }
}

/// The concrete pattern for a text that does not fit.
pub(crate) fn resolve(ctx: &Ctx) -> Result<Applied, TruncateError> {
    Ok(match ctx.opts.pattern {
        Pattern::Head => Applied::Head,
        Pattern::Tail => Applied::Tail,
        Pattern::HeadTail => Applied::HeadTail,
        Pattern::Terminal => Applied::Terminal,
        Pattern::Search => Applied::Search,
        Pattern::File => Applied::File,
        Pattern::Json => Applied::Json,
        Pattern::Csv => Applied::Csv,
        Pattern::Yaml => Applied::Yaml,
        Pattern::Auto => decide(ctx),
    })
}

fn decide(ctx: &Ctx) -> Applied {
    let opts = ctx.opts;
    let kind = opts
        .kind
        .or_else(|| opts.tool.as_deref().and_then(ToolKind::from_tool_name));
    if looks_like_json(ctx.src) && json::Doc::parse(ctx.src).is_ok() {
        return Applied::Json;
    }
    // The other structured forms, unless the caller said it is command output or a list
    // (a log's `error: ...` lines must not read as YAML keys).
    let command = opts.exit_code.is_some() || opts.command.is_some() || opts.timed_out;
    let structured_ok = !command
        && opts.file.range.is_none()
        && !matches!(kind, Some(ToolKind::Terminal) | Some(ToolKind::Search));
    if structured_ok && tabular::looks_like_csv(ctx) {
        return Applied::Csv;
    }
    if structured_ok && tabular::looks_like_yaml(ctx) {
        return Applied::Yaml;
    }
    if kind == Some(ToolKind::Terminal)
        || opts.exit_code.is_some()
        || opts.command.is_some()
        || opts.timed_out
    {
        return Applied::Terminal;
    }
    match kind {
        Some(ToolKind::Search) => return Applied::Search,
        Some(ToolKind::File) => return Applied::File,
        _ if opts.file.range.is_some() => return Applied::File,
        Some(ToolKind::Other) | Some(ToolKind::Json) => return Applied::HeadTail,
        _ => {}
    }
    sniff(ctx)
}

/// Whether a text may be a JSON value (a JSON cut has its own error lines, so the split
/// does not look for them in such a text: `Ctx::new`).
pub(super) fn looks_like_json(s: &str) -> bool {
    matches!(s.trim_start().as_bytes().first(), Some(b'{') | Some(b'['))
}

/// Lines sniffed: enough to judge, bounded so sniffing an 8 MB log stays cheap.
const SNIFF_LINES: usize = 4000;

fn sniff(ctx: &Ctx) -> Applied {
    let src = ctx.src;
    let sample: Vec<&str> = ctx
        .lines
        .iter()
        .take(SNIFF_LINES)
        .map(|l| l.content(src))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let n = sample.len().max(1);
    let defs = sample.iter().filter(|l| is_definition_line(l)).count();
    let errors = ctx
        .error_flags()
        .iter()
        .take(SNIFF_LINES)
        .filter(|&&e| e)
        .count();
    if defs >= 3 && defs * 33 >= n && errors < defs {
        return Applied::File;
    }
    let terminalish = errors > 0
        || sample.iter().any(|l| l.contains('\r'))
        || sample
            .first()
            .is_some_and(|l| l.starts_with("$ ") || l.starts_with("+ ") || l.starts_with("> "));
    if terminalish {
        return Applied::Terminal;
    }
    let results = sample.iter().filter(|l| is_result_line(l)).count();
    if results * 10 >= n * 6 {
        return Applied::Search;
    }
    Applied::HeadTail
}

/// `path:12:text` / `path-12-text` (grep -n), numbered results, or a bare path (ls, find).
fn is_result_line(l: &str) -> bool {
    let b = l.as_bytes();
    if let Some(colon) = l.find([':', '-']) {
        let path = &l[..colon];
        let rest = &b[colon + 1..];
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if !path.is_empty()
            && !path.contains(' ')
            && digits > 0
            && matches!(rest.get(digits), Some(b':') | Some(b'-'))
        {
            return true;
        }
    }
    let t = l.trim_start_matches(|c: char| c.is_ascii_digit());
    if t.len() < l.len() && (t.starts_with(". ") || t.starts_with(") ")) {
        return true;
    }
    !l.contains(' ') && (l.contains('/') || l.contains('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        use ToolKind::*;
        for (name, kind) in [
            ("terminal", Some(Terminal)),
            ("run_command", Some(Terminal)),
            ("bash", Some(Terminal)),
            ("execCommand", Some(Terminal)),
            ("web_search", Some(Search)),
            ("search_files", Some(Search)),
            ("grep", Some(Search)),
            ("git_log", Some(Search)),
            ("read_file", Some(File)),
            ("readFile", Some(File)),
            ("read", Some(File)),
            ("web_extract", Some(Other)),
            ("fetch", Some(Other)),
            ("frobnicate", None),
        ] {
            assert_eq!(ToolKind::from_tool_name(name), kind, "{name}");
        }
    }

    #[test]
    fn result_lines() {
        assert!(is_result_line("src/main.rs:12:fn main() {"));
        assert!(is_result_line("src/main.rs-13-    let x = 1;"));
        assert!(is_result_line("1. Rust Programming Language"));
        assert!(is_result_line("./src/lib.rs"));
        assert!(!is_result_line("Compiling serde v1.0"));
    }
}
