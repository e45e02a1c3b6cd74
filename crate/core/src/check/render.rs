//! Renderings of a report, shared by every front end: the seed's table, a JSON report and
//! JSONL rows.
//!
//! On a clean input (no invalid, skipped or warned lines) the table is byte-for-byte the
//! table `clip_check.py` prints, so scripts that parse the seed's output keep working. Lines
//! the seed would have crashed on or dropped follow its summary line as `#` comments.

use std::borrow::Cow;
use std::fmt::Write;

use serde::Serialize;

use super::report::{Report, Rollup};
use super::rows::RowRef;
use crate::record::{Layout, ReadAs};
use crate::span::next_special;

/// The seed's table: a header, one row per span in priority order, a blank line, then
/// `# silent_clip=N incomplete=N total=N` and the `#` comments. The same text as
/// [`table_head`] + [`table_rows`] over every row + [`table_tail`], the pieces a front end
/// writes one after the other so a large table is never held whole.
pub fn table(report: &Report) -> String {
    let mut out = table_head();
    out.push_str(&table_rows(report, 0, report.rows.len()));
    out.push_str(&table_tail(report));
    out
}

/// The table's header line.
pub fn table_head() -> String {
    format!(
        "{:<16} {:<12} {:<16} {:>8} {:>8} detail\n",
        "status", "span", "tool", "obs", "inj"
    )
}

/// The table lines of rows `from..to` (clamped to the rows there are).
///
/// The columns are padded by hand, as `{:<16} {:<12} {:<16} {:>8} {:>8} {}` pads them (width
/// in chars): through `core::fmt` each padded field cost a `write_char` call per space, and
/// the formatting was half of writing a large table in wasm.
pub fn table_rows(report: &Report, from: usize, to: usize) -> String {
    let mut out = String::with_capacity(72 * to.min(report.rows.len()).saturating_sub(from));
    for row in report.rows.range(from, to) {
        pad_end(&mut out, row.status.as_str(), 16);
        out.push(' ');
        pad_end(&mut out, &esc(row.span_id.unwrap_or("-")), 12);
        out.push(' ');
        pad_end(&mut out, &esc(row.name), 16);
        out.push(' ');
        pad_number(&mut out, row.observed_bytes.unwrap_or(0), 8);
        out.push(' ');
        pad_number(&mut out, row.injected_bytes.unwrap_or(0), 8);
        out.push(' ');
        let mut detail = row.detail.iter();
        if let Some(first) = detail.next() {
            out.push_str(&esc(first));
            for item in detail {
                out.push(',');
                out.push_str(&esc(item));
            }
        }
        out.push('\n');
    }
    out
}

/// `text`, then spaces up to `width` chars (`{:<width}`).
fn pad_end(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    spaces(out, width.saturating_sub(chars(text)));
}

fn spaces(out: &mut String, n: usize) {
    const SPACES: &str = "                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Chars in `text`, as `core::fmt` counts them for a width; ASCII text is its length.
fn chars(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// `n` in decimal, after spaces up to `width` chars (`{:>width}`).
fn pad_number(out: &mut String, n: u64, width: usize) {
    let digits = n.checked_ilog10().map_or(1, |d| d as usize + 1);
    spaces(out, width.saturating_sub(digits));
    push_u64(out, n);
}

/// Everything after the table's rows: the blank line, the summary and the `#` comments.
/// The same text as [`table_tail_head`] + [`table_warnings`] and then [`table_notes`] over
/// every row + [`table_tail_middle`] + [`table_rollup`] over every rollup entry, the pieces a
/// front end writes one after the other: a trace export can have a note on every row (50 MB
/// of the bench's Agents SDK export: 31,127 notes, a 5.5 MB tail), and a run with a hundred
/// thousand rollup parents makes a 15 MB one, which whole was held in the module as it grew
/// and again as the writer's copy.
pub fn table_tail(report: &Report) -> String {
    let rows = report.rows.len();
    let mut out = table_tail_head(report);
    out.push_str(&table_warnings(report, 0, rows));
    out.push_str(&table_notes(report, 0, rows));
    out.push_str(&table_tail_middle(report));
    out.push_str(&table_rollup(report, 0, report.rollup.len()));
    out
}

/// What the `#` comments call a row's place: trace formats read as one document number their
/// entries (spans) instead of lines.
fn place_word(report: &Report) -> &'static str {
    match &report.read_as {
        Some(r) if r.layout == Layout::Document => "entry",
        _ => "line",
    }
}

/// The blank line after the rows, the summary, and what the input was read as.
pub fn table_tail_head(report: &Report) -> String {
    let mut out = String::new();
    let c = &report.counts;
    let _ = writeln!(
        out,
        "\n# silent_clip={} incomplete={} total={}",
        c.silent_clip, c.incomplete, c.total
    );
    if report.flagged_only {
        let _ = writeln!(out, "# rows: flagged only ({} ok rows not listed)", c.ok);
    }
    if let Some(line) = &report.nothing_checked {
        let _ = writeln!(out, "# {line}");
    }
    if let Some(read_as) = &report.read_as {
        let conventions = if read_as.conventions.is_empty() {
            String::new()
        } else {
            format!(", conventions: {}", read_as.conventions.join(", "))
        };
        let _ = writeln!(
            out,
            "# read as: {} ({}{})",
            report.format,
            read_as.layout.as_str(),
            conventions
        );
    }
    out
}

/// The `# warning` lines of rows `from..to` (in the report's order, clamped): a row is
/// decoded from its compact record only when it has warnings (a bit of its record says so).
/// Pushed piece by piece, as the rows are, not through `write!`: formatting each line was
/// most of the tail's time.
pub fn table_warnings(report: &Report, from: usize, to: usize) -> String {
    let at = place_word(report);
    let mut out = String::new();
    for row in report.rows.warned(from, to) {
        for w in row.warnings {
            out.push_str("# warning ");
            out.push_str(at);
            out.push(' ');
            push_u64(&mut out, row.line);
            out.push_str(": ");
            out.push_str(&esc(w));
            out.push('\n');
        }
    }
    out
}

/// The `# note` lines of rows `from..to`, decoding only the rows with notes (as
/// [`table_warnings`]).
pub fn table_notes(report: &Report, from: usize, to: usize) -> String {
    let at = place_word(report);
    let mut out = String::new();
    for row in report.rows.noted(from, to) {
        let span = esc(row.span_id.unwrap_or("-"));
        let join = row.join.map_or("", |j| j.as_str());
        for n in row.notes {
            out.push_str("# note ");
            out.push_str(at);
            out.push(' ');
            push_u64(&mut out, row.line);
            out.push_str(" (");
            out.push_str(&span);
            out.push_str(", join=");
            out.push_str(join);
            out.push_str("): ");
            out.push_str(&esc(n));
            out.push('\n');
        }
    }
    out
}

/// The skipped and invalid lines (each list capped where it was kept) and what the memory
/// limit did not keep.
pub fn table_tail_middle(report: &Report) -> String {
    let c = &report.counts;
    let at = place_word(report);
    let mut out = String::new();
    if report.read_as.is_some() {
        // Trace formats skip every span that is not a tool call: one line per reason.
        let mut groups: Vec<(&str, Vec<u64>)> = Vec::new();
        for s in &report.skipped {
            match groups.iter_mut().find(|(reason, _)| *reason == s.reason) {
                Some((_, lines)) => lines.push(s.line),
                None => groups.push((&s.reason, vec![s.line])),
            }
        }
        for (reason, lines) in groups {
            let shown: Vec<String> = lines.iter().take(12).map(u64::to_string).collect();
            let more = if lines.len() > 12 { ", ..." } else { "" };
            let _ = writeln!(
                out,
                "# skipped {} ({}): {at} {}{more}",
                lines.len(),
                esc(reason),
                shown.join(", ")
            );
        }
    } else {
        for s in &report.skipped {
            let _ = writeln!(out, "# skipped line {}: {}", s.line, esc(&s.reason));
        }
    }
    let unlisted = c.skipped - report.skipped.len() as u64;
    if unlisted > 0 {
        let _ = writeln!(out, "# ... and {unlisted} more skipped lines");
    }
    for i in &report.invalid {
        let _ = writeln!(out, "# invalid {at} {}: {}", i.line, esc(&i.error));
    }
    let unlisted = c.invalid - report.invalid.len() as u64;
    if unlisted > 0 {
        let _ = writeln!(out, "# ... and {unlisted} more invalid lines");
    }
    if c.invalid > 0 {
        let _ = writeln!(out, "# invalid={} (the run is not trustworthy)", c.invalid);
    }
    let nk = &report.not_kept;
    if let Some(from) = nk.rows_from_line {
        let _ = writeln!(
            out,
            "# not kept (memory limit): {} rows from {at} {from} on are counted but not listed",
            nk.rows
        );
    }
    if let Some(from) = nk.facts_from_line {
        let _ = writeln!(
            out,
            "# not kept (memory limit): the facts of {} spans from {at} {from} on; the parent \
             rollup, tool medians and builder rates cover the {at}s before it",
            nk.spans
        );
    }
    out
}

/// The `# parent` lines of rollup entries `from..to` (clamped): one line per entry, its id
/// and labels (within its record's bytes) and at most 80 bytes around them, reserved at once
/// rather than doubled into.
pub fn table_rollup(report: &Report, from: usize, to: usize) -> String {
    let to = to.min(report.rollup.len());
    let from = from.min(to);
    let whole = report.rollup.len().max(1);
    let mut out = String::with_capacity(
        report.rollup.record_bytes() / whole * (to - from) + 80 * (to - from),
    );
    for i in from..to {
        let r = report.rollup.get(i).expect("index within len");
        let unlisted = (r.silent_clip + r.incomplete).saturating_sub(r.flagged.len() as u64);
        let more = if unlisted > 0 {
            format!(" (+{unlisted} more)")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "# parent {} ({}) hides silent_clip={} incomplete={}: {}{more}",
            esc(&r.span_id),
            match (r.own_status, r.line) {
                (Some(status), _) => status.as_str(),
                (None, Some(_)) => "not a tool span",
                (None, None) => "not in this input",
            },
            r.silent_clip,
            r.incomplete,
            esc(&r.flagged.join(","))
        );
    }
    out
}

/// Text from the input made safe for a terminal: every control character (C0, DEL, C1) and
/// every bidirectional override is written as a visible escape (`\x1b`, `\r`, `\u{202e}`),
/// so a span id or tool name cannot clear the screen, move the cursor, or overwrite its own
/// `silent_clip` row with `ok`. Borrowed (no copy) when there is nothing to escape, which is
/// every ordinary row.
pub fn esc(text: &str) -> Cow<'_, str> {
    // Printable ASCII (most text) needs no escape, and is told by its bytes.
    if crate::bytes::printable_ascii(text.as_bytes()) || !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Control characters, and the bidirectional embeddings, overrides and isolates that
/// reorder how a terminal shows the rest of the line.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The indent of a row's or a rollup entry's braces in the pretty report: elements of an
/// array that is a field of the report object, as `serde_json` indents them.
macro_rules! ELEMENT_INDENT {
    () => {
        "    "
    };
}

/// The whole report as pretty-printed JSON: [`json_head`] + [`json_rows`] over every row +
/// [`json_tail`], byte for byte what `serde_json::to_string_pretty` writes for the report.
pub fn json(report: &Report) -> String {
    let mut out = json_head(report);
    out.push_str(&json_rows(report, 0, report.rows.len()));
    out.push_str(&json_tail(report));
    out
}

/// The fields before the report's rows, up to and including `"rows": [`.
pub fn json_head(report: &Report) -> String {
    #[derive(Serialize)]
    struct Head<'a> {
        format: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        read_as: &'a Option<ReadAs>,
    }
    let head = pretty(&Head {
        format: &report.format,
        read_as: &report.read_as,
    });
    // `{ ...fields }` without its closing `\n}`, then the rows' key.
    let mut out = head[..head.len() - 2].to_string();
    out.push_str(",\n  \"rows\": [");
    out
}

/// Rows `from..to` (clamped to the rows there are) of the pretty JSON report, each after its
/// separator (`\n` before the first row, `,\n` before the others) and indented as an element
/// of the report's `rows` array.
pub fn json_rows(report: &Report, from: usize, to: usize) -> String {
    let start = from.min(report.rows.len());
    let mut out =
        String::with_capacity(JSON_ROW_BYTES * to.min(report.rows.len()).saturating_sub(start));
    let mut w = RowWriter::pretty();
    for (i, row) in report.rows.range(from, to).enumerate() {
        out.push_str(if start + i == 0 {
            concat!("\n", ELEMENT_INDENT!())
        } else {
            concat!(",\n", ELEMENT_INDENT!())
        });
        w.row(&mut out, &row);
    }
    out
}

/// The end of the pretty JSON report: the rows array's close, the fields after it, and the
/// report's closing brace (no newline after it, as `serde_json` writes it). The same text as
/// [`json_middle`] + [`json_rollup`] over every rollup entry + [`json_end`]: the rollup lists
/// a parent per turn or agent that hides a failure, as many as a tenth of the rows.
pub fn json_tail(report: &Report) -> String {
    let mut out = json_middle(report);
    out.push_str(&json_rollup(report, 0, report.rollup.len()));
    out.push_str(&json_end(report));
    out
}

/// The rows array's close, the fields between the rows and the rollup, and `"rollup": [`.
pub fn json_middle(report: &Report) -> String {
    #[derive(Serialize)]
    struct Middle<'a> {
        counts: &'a super::Counts,
        invalid: &'a [crate::record::Invalid],
        skipped: &'a [crate::record::Skipped],
        silent_clips_per_100: f64,
        clip_histogram: &'a super::ClipHistogram,
        tools: &'a [super::ToolStats],
        builders: &'a [super::BuilderStats],
    }
    let middle = pretty(&Middle {
        counts: &report.counts,
        invalid: &report.invalid,
        skipped: &report.skipped,
        silent_clips_per_100: report.silent_clips_per_100,
        clip_histogram: &report.clip_histogram,
        tools: &report.tools,
        builders: &report.builders,
    });
    // An empty array closes on its own line's bracket; a full one on a new line.
    let mut out = String::from(if report.rows.is_empty() {
        "],"
    } else {
        "\n  ],"
    });
    // The fields without the braces around them.
    out.push_str(&middle[1..middle.len() - 2]);
    out.push_str(",\n  \"rollup\": [");
    out
}

/// Rollup entries `from..to` (clamped to the entries there are), each after its separator,
/// indented as elements of the report's `rollup` array.
pub fn json_rollup(report: &Report, from: usize, to: usize) -> String {
    let to = to.min(report.rollup.len());
    let from = from.min(to);
    let mut out = String::with_capacity(JSON_ROLLUP_BYTES * (to - from));
    let mut w = RowWriter::pretty();
    for i in from..to {
        let entry = report.rollup.get(i).expect("index within len");
        out.push_str(if i == 0 {
            concat!("\n", ELEMENT_INDENT!())
        } else {
            concat!(",\n", ELEMENT_INDENT!())
        });
        w.rollup(&mut out, &entry);
    }
    out
}

/// The rollup's close, the fields after it, and the report's closing brace.
pub fn json_end(report: &Report) -> String {
    #[derive(Serialize)]
    struct End<'a> {
        flagged_only: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        nothing_checked: &'a Option<String>,
        not_kept: &'a super::NotKept,
        exit_code: i32,
    }
    let end = pretty(&End {
        flagged_only: report.flagged_only,
        nothing_checked: &report.nothing_checked,
        not_kept: &report.not_kept,
        exit_code: report.exit_code,
    });
    let mut out = String::from(if report.rollup.is_empty() {
        "],"
    } else {
        "\n  ],"
    });
    // The fields and the closing brace, without the opening one.
    out.push_str(&end[1..]);
    out
}

/// One JSON object per row, in priority order, each ending in a newline.
pub fn jsonl(report: &Report) -> String {
    jsonl_rows(report, 0, report.rows.len())
}

/// The JSONL lines of rows `from..to` (clamped to the rows there are).
pub fn jsonl_rows(report: &Report, from: usize, to: usize) -> String {
    let start = from.min(report.rows.len());
    let mut out =
        String::with_capacity(JSON_ROW_BYTES * to.min(report.rows.len()).saturating_sub(start));
    let mut w = RowWriter::compact();
    for row in report.rows.range(from, to) {
        w.row(&mut out, &row);
        out.push('\n');
    }
    out
}

/// About what one JSON row and one rollup entry take, to size the output once per range.
const JSON_ROW_BYTES: usize = 512;
const JSON_ROLLUP_BYTES: usize = 160;

/// A field's key with its separator, as it stands after the field before it (`later`) or
/// as an object's first, in compact and in pretty JSON.
struct Key {
    compact: [&'static str; 2],
    pretty: [&'static str; 2],
}

/// The [`Key`] of a field, made at compile time: the keys are this file's own identifiers
/// (nothing to escape). Pushed as one text, where the separator, the newline, the indent, the
/// quotes, the key and the colon were seven pushes, each a copy of a few bytes: `key` was
/// the largest part of writing a `--json` report (112 of 604 ms of a CPU profile of `check
/// --json` on 60 MB of mostly flagged spans).
macro_rules! key {
    ($name:literal) => {
        &Key {
            compact: [concat!("\"", $name, "\":"), concat!(",\"", $name, "\":")],
            pretty: [
                concat!("\n", ELEMENT_INDENT!(), "  \"", $name, "\": "),
                concat!(",\n", ELEMENT_INDENT!(), "  \"", $name, "\": "),
            ],
        }
    };
}

/// Writes rows as JSON by hand, byte for byte what `serde_json` writes for a [`RowRef`]
/// (compact, or pretty as an element of the report's arrays): going through `serde_json` per row (a pretty string,
/// then re-indented into the output) made `check --json` and `--jsonl` slower than the
/// table by half again (issue 17). The tests in `tests/check_render_stream.rs` compare the
/// two on every kind of field.
struct RowWriter {
    /// Pretty JSON (rows and rollup entries are elements of an array in the report object,
    /// their braces at `ELEMENT_INDENT!()`), or compact.
    pretty: bool,
    /// Whether the next field is the row's first.
    first: bool,
    /// Reused for floats, which `serde_json` formats (its shortest round-trip digits).
    scratch: Vec<u8>,
}

impl RowWriter {
    fn compact() -> RowWriter {
        RowWriter {
            pretty: false,
            first: true,
            scratch: Vec::new(),
        }
    }

    fn pretty() -> RowWriter {
        RowWriter {
            pretty: true,
            first: true,
            scratch: Vec::new(),
        }
    }

    /// Appends one row object (no separator before it, no newline after it). The fields
    /// and their skip rules are those of [`RowRef`]'s derived `Serialize`.
    fn row(&mut self, out: &mut String, row: &RowRef<'_>) {
        out.push('{');
        self.first = true;
        self.key(out, key!("line"));
        push_u64(out, row.line);
        self.key(out, key!("span_id"));
        push_opt_str(out, row.span_id);
        self.key(out, key!("parent_id"));
        push_opt_str(out, row.parent_id);
        self.key(out, key!("name"));
        push_json_str(out, row.name);
        self.key(out, key!("status"));
        push_plain_str(out, row.status.as_str());
        self.key(out, key!("detail"));
        self.list(out, row.detail);
        self.key(out, key!("observed_bytes"));
        push_opt_u64(out, row.observed_bytes);
        self.key(out, key!("injected_bytes"));
        push_opt_u64(out, row.injected_bytes);
        self.key(out, key!("injected_tokens"));
        push_opt_u64(out, row.injected_tokens);
        self.key(out, key!("clip_ratio"));
        match row.clip_ratio {
            Some(ratio) => {
                self.scratch.clear();
                // Writing a float into memory cannot fail; serde_json writes ASCII.
                serde_json::to_writer(&mut self.scratch, &ratio).expect("float serializes");
                out.push_str(std::str::from_utf8(&self.scratch).expect("serde_json writes UTF-8"));
            }
            None => out.push_str("null"),
        }
        self.key(out, key!("clip_reason"));
        push_opt_str(out, row.clip_reason);
        self.key(out, key!("sha256_observed"));
        push_opt_str(out, row.sha256_observed);
        self.key(out, key!("sha256_injected"));
        push_opt_str(out, row.sha256_injected);
        self.key(out, key!("injected_preview"));
        push_opt_str(out, row.injected_preview);
        self.key(out, key!("prompt_builder_version"));
        push_opt_str(out, row.prompt_builder_version);
        self.key(out, key!("model_context_limit_tokens"));
        push_opt_u64(out, row.model_context_limit_tokens);
        if !row.warnings.is_empty() {
            self.key(out, key!("warnings"));
            self.list(out, row.warnings);
        }
        if let Some(join) = row.join {
            self.key(out, key!("join"));
            push_plain_str(out, join.as_str());
        }
        if !row.notes.is_empty() {
            self.key(out, key!("notes"));
            self.list(out, row.notes);
        }
        if row.injected_tokens_estimated {
            self.key(out, key!("injected_tokens_estimated"));
            out.push_str("true");
        }
        out.push_str(if self.pretty {
            concat!("\n", ELEMENT_INDENT!(), "}")
        } else {
            "}"
        });
    }

    /// Appends one rollup entry object, the fields of [`Rollup`]'s derived `Serialize`.
    fn rollup(&mut self, out: &mut String, entry: &Rollup) {
        out.push('{');
        self.first = true;
        self.key(out, key!("span_id"));
        push_json_str(out, &entry.span_id);
        self.key(out, key!("own_status"));
        match entry.own_status {
            Some(status) => push_plain_str(out, status.as_str()),
            None => out.push_str("null"),
        }
        self.key(out, key!("line"));
        push_opt_u64(out, entry.line);
        self.key(out, key!("name"));
        push_opt_str(out, entry.name.as_deref());
        self.key(out, key!("silent_clip"));
        push_u64(out, entry.silent_clip);
        self.key(out, key!("incomplete"));
        push_u64(out, entry.incomplete);
        self.key(out, key!("flagged"));
        self.list(out, entry.flagged.iter().map(String::as_str));
        out.push_str(if self.pretty {
            concat!("\n", ELEMENT_INDENT!(), "}")
        } else {
            "}"
        });
    }

    /// The separator before a field, and its key: one copy of a text made at compile time
    /// ([`key!`]).
    fn key(&mut self, out: &mut String, key: &Key) {
        let later = usize::from(!self.first);
        self.first = false;
        out.push_str(if self.pretty {
            key.pretty[later]
        } else {
            key.compact[later]
        });
    }

    /// A field's array of strings (`[]` when empty, as `serde_json` writes it).
    fn list<'t>(&self, out: &mut String, items: impl IntoIterator<Item = &'t str>) {
        let mut items = items.into_iter().peekable();
        if items.peek().is_none() {
            out.push_str("[]");
            return;
        }
        out.push('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push(',');
            }
            if self.pretty {
                out.push_str(concat!("\n", ELEMENT_INDENT!(), "    "));
            }
            push_json_str(out, item);
        }
        out.push_str(if self.pretty {
            concat!("\n", ELEMENT_INDENT!(), "  ]")
        } else {
            "]"
        });
    }
}

fn push_opt_str(out: &mut String, text: Option<&str>) {
    match text {
        Some(text) => push_json_str(out, text),
        None => out.push_str("null"),
    }
}

fn push_opt_u64(out: &mut String, n: Option<u64>) {
    match n {
        Some(n) => push_u64(out, n),
        None => out.push_str("null"),
    }
}

fn push_u64(out: &mut String, n: u64) {
    out.push_str(crate::bytes::itoa_u64(n, &mut [0; 20]));
}

/// A JSON string as `serde_json` escapes it: `"` and `\`, the short escapes `\b \f \n \r
/// \t`, every other control character below U+0020 as `\u00xx` (lowercase hex), and
/// everything else (DEL, non-ASCII) as it is.
fn push_json_str(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    // The bytes to escape are those that end a run of plain string content as the span
    // reader sees it (a quote, a backslash, a control byte), found 16 at a step: nearly no
    // byte of a row needs one, and a table look-up per byte was a tenth of writing a
    // `--jsonl` report.
    while let Some(i) = next_special::<false>(bytes, start) {
        let b = bytes[i];
        let short = ESCAPE[usize::from(b)];
        // `i` is at an ASCII byte: a character boundary.
        out.push_str(&text[start..i]);
        if short == b'u' {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push('\\');
            out.push(char::from(short));
        }
        start = i + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// A text known to need no escape (a status or join name), in quotes.
fn push_plain_str(out: &mut String, text: &str) {
    out.push('"');
    out.push_str(text);
    out.push('"');
}

/// Per byte: 0 when it stands as it is, else the letter after its backslash (`u` for
/// `\\u00xx`), as `serde_json` escapes.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

fn pretty<T: Serialize>(value: &T) -> String {
    // Serializing plain data with string keys cannot fail.
    serde_json::to_string_pretty(value).expect("report serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    // Also in wasm32, where the search for bytes to escape takes 16 at a step (simd128).
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn strings_and_numbers_are_written_as_serde_json_writes_them() {
        let mut every_ascii: String = (0u8..0x80).map(char::from).collect();
        every_ascii.push_str("\u{80}\u{9b}\u{2028}\u{202e}\u{1f600}é");
        for text in [every_ascii.as_str(), "", "plain", "\\\"", "a\u{0}b"] {
            let mut out = String::new();
            push_json_str(&mut out, text);
            assert_eq!(out, serde_json::to_string(text).unwrap());
        }
        // Each byte to escape, alone or two together, at every place in texts longer than
        // the 8 and 16 bytes the search for them takes at a step, among ASCII and non-ASCII.
        for special in ["\"", "\\", "\n", "\u{1f}", "\u{0}", "\t\"", "\u{7f}"] {
            for len in [0, 1, 7, 8, 15, 16, 17, 31, 33, 47] {
                for at in 0..=len {
                    for filler in ["x", "é"] {
                        let mut text = filler.repeat(len);
                        let cut = text.char_indices().nth(at).map_or(text.len(), |(i, _)| i);
                        text.insert_str(cut, special);
                        let mut out = String::new();
                        push_json_str(&mut out, &text);
                        assert_eq!(out, serde_json::to_string(&text).unwrap(), "{text:?}");
                    }
                }
            }
        }
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::from(u32::MAX), u64::MAX] {
            let mut out = String::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }

    #[test]
    fn columns_are_padded_as_core_fmt_pads_them() {
        let texts = [
            "",
            "-",
            "ok",
            "silent_clip",
            "exactly_16_chars",
            "longer than sixteen chars",
            "é",
            "ééééééééééééééé",
            "名前の長いツール",
            "\u{1f600}x",
            "tab\tand\u{202e}",
        ];
        for text in texts {
            for width in [0, 1, 8, 12, 16] {
                let mut out = String::new();
                pad_end(&mut out, text, width);
                assert_eq!(out, format!("{text:<width$}"), "{text:?} {width}");
            }
        }
        for n in [0, 7, 9, 10, 12_345_678, 123_456_789, u64::MAX] {
            for width in [0, 1, 8] {
                let mut out = String::new();
                pad_number(&mut out, n, width);
                assert_eq!(out, format!("{n:>width$}"), "{n} {width}");
            }
        }
    }

    /// The tail's warning and note lines, pushed piece by piece, are the text the `format!`
    /// strings they replaced wrote: on a real export's notes (a declared cut, a result no
    /// model call received), a 4096-character result's warning, and ids with control and
    /// bidirectional characters.
    #[test]
    fn warning_and_note_lines_are_what_format_wrote() {
        let hostile = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ffff0000ffff0000ffff0000ffff0000","spanId":"7e\u001b[2J\u202eok","name":"execute_tool x","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"x\u0007"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"c9"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"RESULT"}}]}]}]}]}"#
            .replace("RESULT", &"y".repeat(4096));
        let input = format!(
            "{}{hostile}\n",
            include_str!("../../tests/fixtures/formats/otlp-collector-events.jsonl")
        );
        let report =
            crate::check::check_bytes(input.as_bytes(), crate::check::CheckOptions::default());
        let mut want = Vec::new();
        for row in report.rows.iter() {
            for w in row.warnings {
                want.push(format!("# warning line {}: {}", row.line, esc(w)));
            }
        }
        for row in report.rows.iter() {
            let span = esc(row.span_id.unwrap_or("-"));
            let join = row.join.map_or("", |j| j.as_str());
            for n in row.notes {
                let n = esc(n);
                want.push(format!(
                    "# note line {} ({span}, join={join}): {n}",
                    row.line
                ));
            }
        }
        let tail = table_tail(&report);
        let got: Vec<&str> = tail
            .lines()
            .filter(|l| l.starts_with("# warning ") || l.starts_with("# note "))
            .collect();
        assert_eq!(got, want);
        for line in [
            "# warning line 5: likely silent clip: the tool result is exactly 4096 characters",
            "# note line 3 (70020000000000b3, join=tool_call_id): declared: the injected text \
             carries the cut marker \"[truncated 2 lines]\"",
            "# note line 5 (7e\\x1b[2J\\u{202e}ok, join=unmatched): not_received:",
        ] {
            assert!(got.iter().any(|l| l.starts_with(line)), "{line}\n{tail}");
        }
    }

    #[test]
    fn escaping_takes_the_ascii_shortcut_only_for_printable_ascii() {
        for (text, want) in [
            ("plain text, 100% ok ~", "plain text, 100% ok ~"),
            ("a\x1b[2Jb", "a\\x1b[2Jb"),
            ("del\x7f", "del\\x7f"),
            ("c1\u{9b}", "c1\\x9b"),
            ("bidi\u{202e}x", "bidi\\u{202e}x"),
            ("é ok", "é ok"),
            ("line\nbreak\r\t", "line\\nbreak\\r\\t"),
        ] {
            assert_eq!(esc(text), want, "{text:?}");
        }
    }
}
