//! `convert --to spans`: seed-000 span JSONL from any supported format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FormatOption, Reader, Sink};
use crate::record::{Invalid, Provenance, ReadAs, Skipped};
use crate::span::{InvalidKind, SpanRecord, SpanView};

/// Seed-000 span JSONL written from any supported format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversion {
    /// The reader that understood the input (`unknown` when none did).
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_as: Option<ReadAs>,
    /// One seed-000 span record per line, each with a `toolslice` object saying where it came
    /// from (`format`, `line`, `join`, `notes`, `warnings`, `injected_tokens_estimated`),
    /// which the seed's scripts ignore.
    pub jsonl: String,
    /// Records written.
    pub records: u64,
    pub invalid: Vec<Invalid>,
    pub skipped: Vec<Skipped>,
}

struct ConvertSink {
    out: String,
    records: u64,
    format: String,
    read_as: Option<ReadAs>,
    invalid: Vec<Invalid>,
    skipped: Vec<Skipped>,
    pending: Vec<(u64, SpanRecord, Provenance)>,
}

impl Sink for ConvertSink {
    fn span(&mut self, line: u64, record: &mut SpanView<'_>) {
        self.pending.push((
            line,
            std::mem::take(record).into_owned(),
            Provenance::default(),
        ));
    }
    fn row(&mut self, line: u64, record: &mut SpanView<'_>, provenance: Provenance) {
        self.pending
            .push((line, std::mem::take(record).into_owned(), provenance));
    }
    fn context(
        &mut self,
        line: u64,
        span_id: Option<&str>,
        _parent_id: Option<&str>,
        _name: Option<&str>,
        reason: &str,
    ) {
        self.skipped(line, span_id.map(str::to_string), reason.to_string());
    }
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        self.skipped.push(Skipped {
            line,
            span_id,
            reason,
        });
    }
    fn invalid(&mut self, line: u64, kind: InvalidKind, error: String) {
        self.invalid.push(Invalid { line, kind, error });
    }
    fn blank(&mut self) {}
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>) {
        self.format = format.to_string();
        self.read_as = read_as;
    }
}

/// Writes seed-000 span JSONL from any supported format, so the rest of the tooling (and the
/// seeds' scripts) can use it. Records keep the seed's field names; a `toolslice` object
/// beside them says where each came from. Lines no reader understood are listed in
/// `invalid`, spans that are not tool calls in `skipped`.
pub fn convert_to_spans(input: &[u8], format: FormatOption) -> Conversion {
    let mut sink = ConvertSink {
        out: String::new(),
        records: 0,
        format: String::new(),
        read_as: None,
        invalid: Vec::new(),
        skipped: Vec::new(),
        pending: Vec::new(),
    };
    let mut reader = Reader::new(format);
    reader.push(input, &mut sink);
    reader.finish(&mut sink);
    let pending = std::mem::take(&mut sink.pending);
    for (line, record, provenance) in pending {
        let mut object = match serde_json::to_value(&record) {
            Ok(Value::Object(object)) => object,
            _ => continue,
        };
        if sink.read_as.is_some() {
            let mut source = serde_json::Map::new();
            source.insert("format".into(), Value::from(sink.format.clone()));
            source.insert("line".into(), Value::from(line));
            if let Some(join) = provenance.join {
                source.insert("join".into(), Value::from(join.as_str()));
            }
            if provenance.injected_tokens_estimated {
                source.insert("injected_tokens_estimated".into(), Value::Bool(true));
            }
            if !provenance.notes.is_empty() {
                source.insert("notes".into(), Value::from(provenance.notes));
            }
            if !provenance.warnings.is_empty() {
                source.insert("warnings".into(), Value::from(provenance.warnings));
            }
            object.insert("toolslice".into(), Value::Object(source));
        }
        // Serializing a Value cannot fail.
        sink.out
            .push_str(&serde_json::to_string(&object).unwrap_or_default());
        sink.out.push('\n');
        sink.records += 1;
    }
    Conversion {
        format: sink.format,
        read_as: sink.read_as,
        jsonl: sink.out,
        records: sink.records,
        invalid: sink.invalid,
        skipped: sink.skipped,
    }
}
