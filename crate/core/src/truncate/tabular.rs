//! Structured text that is not JSON (seed 001 §6: "Is the output structured
//! (JSON/YAML/CSV/known schema)? Yes → parse by schema, keep decision-relevant fields ...
//! include a summary of what was omitted").
//!
//! - **CSV**: the header, the first and the last rows, and the row count. One unit per
//!   record (a quoted field may span lines), head and tail split evenly, and the header's
//!   unit carries a note with the count (`[CSV: 1200 rows; header, first and last rows
//!   kept]`), so the model knows the table's size even when only a few rows fit.
//! - **YAML**: like the JSON pattern, the document's top-level keys and its outcome keys
//!   (`status`, `ok`, `error`, `exit_code`, `id`, `*_id` ... the JSON pattern's `keep_keys`)
//!   are never lost: head and tail as for a file, and every top-level key line and outcome
//!   key line of the dropped middle shown with its line number (`L214: port: 8443`).

use super::ends::{line_units, Shape, SpotStyle, Unit};
use super::Ctx;

/// Fields of one CSV line, counting quoted commas as data; `None` when a quote is left
/// open (the record continues on the next line).
fn csv_fields(line: &str, mut in_quotes: bool) -> (usize, bool) {
    let mut fields = 1;
    for b in line.bytes() {
        match b {
            b'"' => in_quotes = !in_quotes,
            b',' if !in_quotes => fields += 1,
            _ => {}
        }
    }
    (fields, in_quotes)
}

/// Records as line-index ranges `[start, end)`, and their field counts.
fn csv_records(ctx: &Ctx) -> Vec<([usize; 2], usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut fields = 0;
    let mut open = false;
    for (i, l) in ctx.lines.iter().enumerate() {
        let (f, still) = csv_fields(l.content(ctx.src), open);
        fields += if open { f - 1 } else { f };
        open = still;
        if !open {
            out.push(([start, i + 1], fields));
            start = i + 1;
            fields = 0;
        }
    }
    if start < ctx.lines.len() {
        out.push(([start, ctx.lines.len()], fields));
    }
    out
}

/// Whether the text reads as a CSV table: a header of at least two fields, and (almost)
/// every record with the header's field count.
pub(crate) fn looks_like_csv(ctx: &Ctx) -> bool {
    let records: Vec<_> = csv_records(ctx)
        .into_iter()
        .filter(|([a, b], _)| {
            !(ctx.src[ctx.lines[*a].start..ctx.lines[b - 1].end])
                .trim()
                .is_empty()
        })
        .take(200)
        .collect();
    let Some((_, header)) = records.first() else {
        return false;
    };
    if *header < 2 || records.len() < 3 {
        return false;
    }
    // A log whose every line holds one comma has a steady field count too; what tells a
    // table from prose is its header: short names (`id`, `total`, `First Name`), not
    // sentences. A header cell longer than 48 bytes or with more than 3 spaces is prose.
    let [a, b] = records[0].0;
    let header_text = &ctx.src[ctx.lines[a].start..ctx.lines[b - 1].end];
    let names_ok = header_text.trim_end().split(',').all(|cell| {
        let cell = cell.trim().trim_matches('"');
        cell.len() <= 48 && cell.bytes().filter(|&c| c == b' ').count() <= 3
    });
    if !names_ok {
        return false;
    }
    let same = records.iter().filter(|(_, f)| f == header).count();
    same * 20 >= records.len() * 19
}

pub(crate) fn plan_csv(ctx: &Ctx) -> (Vec<Unit>, Shape) {
    let records = csv_records(ctx);
    let rows = records
        .iter()
        .skip(1)
        .filter(|([a, b], _)| {
            !(ctx.src[ctx.lines[*a].start..ctx.lines[b - 1].end])
                .trim()
                .is_empty()
        })
        .count();
    let units = records
        .iter()
        .enumerate()
        .map(|(i, ([a, b], _))| {
            let keep = [ctx.lines[*a].start, ctx.lines[b - 1].end];
            let note = (i == 0).then(|| {
                let noun = if rows == 1 { "row" } else { "rows" };
                format!("[CSV: {rows} {noun}; header, first and last rows kept]\n")
            });
            Unit::new(ctx, *a, b - 1, keep, note, false)
        })
        .collect();
    (
        units,
        Shape {
            head_share: 0.5,
            tail_share: 0.5,
            spots: None,
        },
    )
}

/// `key:` at the start of a line (a YAML mapping key), with the key.
fn yaml_key(line: &str) -> Option<&str> {
    let t = line.trim_start_matches(' ').trim_start_matches("- ");
    let colon = t.find(':')?;
    let key = t[..colon].trim_matches(|c| c == '"' || c == '\'');
    let after = &t[colon + 1..];
    let ok = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && (after.is_empty() || after.starts_with(' '));
    ok.then_some(key)
}

/// Whether the text reads as a YAML mapping: every unindented line is a `key:`, a list item,
/// a comment or a document marker, at least two top-level keys and some nesting, and (block
/// scalars aside) nine lines in ten are keys or list items. A log's `error: ...` lines are
/// key-shaped, but its other lines are not.
pub(crate) fn looks_like_yaml(ctx: &Ctx) -> bool {
    let (mut top_keys, mut nested, mut shaped, mut lines) = (0, false, 0usize, 0usize);
    // Inside a block scalar (`key: |` or `key: >`): lines indented deeper are text.
    let mut scalar_indent: Option<usize> = None;
    for l in ctx.lines.iter().take(4000) {
        let line = l.content(ctx.src).trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(at) = scalar_indent {
            if indent > at {
                continue;
            }
            scalar_indent = None;
        }
        lines += 1;
        let item = line.trim_start().starts_with("- ") || line.trim_start() == "-";
        let key = yaml_key(line).is_some();
        if key || item || line == "---" || line == "..." {
            shaped += 1;
        }
        if key
            && (line.ends_with('|')
                || line.ends_with('>')
                || line.ends_with("|-")
                || line.ends_with(">-"))
        {
            scalar_indent = Some(indent);
        }
        if indent > 0 {
            nested = true;
        } else if key {
            top_keys += 1;
        } else if !(item || line == "---" || line == "...") {
            return false;
        }
    }
    top_keys >= 2 && nested && shaped * 10 >= lines * 9
}

fn is_outcome_key(ctx: &Ctx, key: &str) -> bool {
    let j = &ctx.opts.json;
    j.keep_keys.iter().any(|k| k == key)
        || (j.keep_id_keys && (key.ends_with("_id") || key.ends_with("Id")))
}

pub(crate) fn plan_yaml(ctx: &Ctx) -> (Vec<Unit>, Shape) {
    let flags: Vec<bool> = ctx
        .lines
        .iter()
        .map(|l| {
            let line = l.content(ctx.src);
            match yaml_key(line) {
                Some(key) => !line.starts_with(' ') || is_outcome_key(ctx, key),
                None => false,
            }
        })
        .collect();
    (
        line_units(ctx, Some(&flags)),
        Shape {
            head_share: ctx.opts.file.head_share,
            tail_share: ctx.opts.file.tail_share,
            spots: Some(SpotStyle {
                before: 0,
                after: 0,
                location_after: false,
                arrows: false,
                what: ["top-level or outcome key", "top-level and outcome keys"],
                more: ["key", "keys"],
            }),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::{truncate, Applied, Budget, Options, Pattern};

    fn csv(rows: usize) -> String {
        let mut s = String::from("id,customer,total,status\n");
        for i in 1..=rows {
            s.push_str(&format!("{i},\"Customer {i}, Ltd\",{},paid\n", i * 7));
        }
        s
    }

    #[test]
    fn csv_keeps_header_first_and_last_rows_and_the_count() {
        let text = csv(500);
        let r = truncate(&text, &Options::new(Pattern::Auto, Budget::Bytes(600))).unwrap();
        assert_eq!(r.pattern, Applied::Csv);
        assert!(r.text.len() <= 600);
        assert!(
            r.text.starts_with(
                "id,customer,total,status\n[CSV: 500 rows; header, first and last rows kept]\n1,"
            ),
            "{}",
            r.text
        );
        assert!(
            r.text.ends_with("500,\"Customer 500, Ltd\",3500,paid\n"),
            "{}",
            r.text
        );
        assert!(r.text.contains("omitted from the middle"), "{}", r.text);
        // A quoted field spanning lines is one record.
        let multi = format!("a,b\n1,\"x\ny\"\n{}", "2,z\n".repeat(300));
        let r = truncate(&multi, &Options::new(Pattern::Csv, Budget::Bytes(300))).unwrap();
        assert!(r.text.contains("[CSV: 301 rows;"), "{}", r.text);
        assert!(r.text.contains("1,\"x\ny\"\n"), "{}", r.text);
    }

    #[test]
    fn prose_with_one_comma_per_line_is_not_csv() {
        // Found by the MCP proxy's test server: a log of sentences, each with one comma.
        let mut text = String::new();
        for i in 0..800 {
            text.push_str(&format!(
                "row {i}: the quick brown fox jumps over the lazy dog, value={}\n",
                i * 7
            ));
        }
        let r = truncate(&text, &Options::new(Pattern::Auto, Budget::Bytes(2048))).unwrap();
        assert!(
            !matches!(r.pattern, Applied::Csv | Applied::Yaml),
            "{:?}: {}",
            r.pattern,
            r.text
        );
        assert!(
            r.text.starts_with("row 0: the quick brown fox"),
            "{}",
            r.text
        );
        // A real table with spaces in its header names is still one.
        let mut table = String::from("id,First Name,Last Name,total due\n");
        for i in 0..300 {
            table.push_str(&format!("{i},Ann,Lee,{}\n", i * 3));
        }
        let r = truncate(&table, &Options::new(Pattern::Auto, Budget::Bytes(400))).unwrap();
        assert_eq!(r.pattern, Applied::Csv, "{}", r.text);
    }

    #[test]
    fn yaml_keeps_top_level_and_outcome_keys() {
        let mut text = String::from("app:\n  name: billing\n  replicas: 3\nlimits:\n");
        for i in 0..300 {
            text.push_str(&format!("  rule_{i}: {i}\n"));
        }
        text.push_str("deploy:\n  status: failed\n  receipt_id: r-7731\n  notes:\n");
        for i in 0..300 {
            text.push_str(&format!("    - step {i} done\n"));
        }
        text.push_str("server:\n  port: 8443\n");
        let r = truncate(&text, &Options::new(Pattern::Auto, Budget::Bytes(700))).unwrap();
        assert_eq!(r.pattern, Applied::Yaml);
        assert!(r.text.len() <= 700);
        for want in [
            "app:",
            "limits:",
            "L305: deploy:",
            "L306:   status: failed",
            "L307:   receipt_id: r-7731",
            "server:",
            "port: 8443",
        ] {
            assert!(r.text.contains(want), "{want}: {}", r.text);
        }
        // A log whose lines look like keys is not YAML.
        let log = "error: could not compile\nwarning: unused\n  --> src/a.rs\n".repeat(50);
        let r = truncate(&log, &Options::new(Pattern::Auto, Budget::Bytes(300))).unwrap();
        assert_ne!(r.pattern, Applied::Yaml);
    }
}
