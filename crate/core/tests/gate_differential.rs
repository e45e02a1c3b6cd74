//! The gate against the seed's `trace_gate.py`, run from `shared/reference`: `tool_span`
//! over generated arguments and results, `export_ready` over a directory store with missing
//! bodies and open spans, and `diff_manifests` over runs with repeated and reordered calls.

mod common;
mod json_gen;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{cases, reference_dir, Draw, Rng};
#[cfg(not(target_arch = "wasm32"))]
use common::{choices, proptest_config, Choices};
use json_gen::{Gen, Options};
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;
use serde_json::{json, Value};
use toolslice::canonical::Form;
use toolslice::gate::{
    diff_manifests, export_ready, manifest, tool_span, tool_span_of_values, write_bodies, Body,
    BodyStore, StoreError,
};

/// Runs `script` with `trace_gate` importable, feeding `input`; returns stdout.
fn python(reference: &Path, script: &str, input: &str) -> String {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", reference)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const NAMES: &[&str] = &["read_file", "apply_patch", "search", "run_tests", "ä", "B"];
const STATUSES: &[&str] = &["ok", "error", "running", "", "OK"];

#[test]
fn tool_span_equals_seed() {
    let Some(reference) = reference_dir() else {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    };
    let mut rng = Rng::new(2);
    let opts = Options {
        duplicates: true,
        non_finite: true,
        big_ints: true,
    };
    let mut calls = Vec::new();
    {
        let mut gen = Gen::new(&mut rng, opts);
        for _ in 0..cases(3000) {
            calls.push((gen.document(), gen.document()));
        }
    }
    let mut input = String::new();
    let mut ours = Vec::new();
    for (i, (args, result)) in calls.iter().enumerate() {
        let name = NAMES[i % NAMES.len()];
        let status = STATUSES[i % STATUSES.len()];
        input.push_str(&json!([name, args, result, status]).to_string());
        input.push('\n');
        let a = Body::from_json(args.as_bytes(), Form::Python).unwrap();
        let r = Body::from_json(result.as_bytes(), Form::Python).unwrap();
        ours.push(serde_json::to_string(&tool_span(name, &a, &r, status)).unwrap());
    }
    let script = r#"
import sys, json, trace_gate
for line in sys.stdin:
    name, args, result, status = json.loads(line)
    span = trace_gate.tool_span(name, json.loads(args), json.loads(result), status)
    print(json.dumps(span, ensure_ascii=False, separators=(",", ":")))
"#;
    let theirs: Vec<String> = python(&reference, script, &input)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(theirs.len(), ours.len());
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(o, t, "call {i}: {:?}", calls[i]);
    }
    // The value path agrees too wherever serde_json holds the value exactly (no floats,
    // which its default reader may round differently, and no integers beyond 64 bits).
    let mut compared = 0;
    for (args, result) in &calls {
        let (Ok(a), Ok(r)) = (
            serde_json::from_str::<Value>(args),
            serde_json::from_str::<Value>(result),
        ) else {
            continue;
        };
        if has_float(&a) || has_float(&r) {
            continue;
        }
        let by_value = tool_span_of_values("n", &a, &r, "ok").unwrap();
        let by_text = tool_span(
            "n",
            &Body::from_json(args.as_bytes(), Form::Python).unwrap(),
            &Body::from_json(result.as_bytes(), Form::Python).unwrap(),
            "ok",
        );
        assert_eq!(by_value, by_text, "{args} {result}");
        compared += 1;
    }
    assert!(compared > calls.len() / 10, "{compared}");
}

fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

/// A directory store with the seed's layout, for comparing against the seed's own.
struct DirStore<'a>(&'a Path);

impl BodyStore for DirStore<'_> {
    fn get(&self, digest: &str) -> Result<Option<String>, StoreError> {
        match std::fs::read_to_string(self.0.join(digest)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::Backend {
                message: e.to_string(),
            }),
        }
    }
    fn put(&mut self, digest: &str, text: &str) -> Result<(), StoreError> {
        std::fs::write(self.0.join(digest), text).map_err(|e| StoreError::Backend {
            message: e.to_string(),
        })
    }
}

#[test]
fn export_ready_and_store_layout_equal_seed() {
    let Some(reference) = reference_dir() else {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    };
    let base = std::env::temp_dir().join(format!("toolslice-gate-{}", std::process::id()));
    let (ours_dir, seed_dir) = (base.join("ours"), base.join("seed"));
    std::fs::create_dir_all(&ours_dir).unwrap();
    std::fs::create_dir_all(&seed_dir).unwrap();

    let mut rng = Rng::new(3);
    let opts = Options {
        duplicates: false,
        non_finite: false,
        big_ints: true,
    };
    let mut spans = Vec::new();
    let mut lines = String::new();
    let mut store = DirStore(&ours_dir);
    {
        let mut gen = Gen::new(&mut rng, opts);
        for i in 0..cases(300) {
            let (args, result) = (gen.document(), gen.document());
            let name = NAMES[i % NAMES.len()];
            let status = STATUSES[(i * 7) % STATUSES.len()];
            let a = Body::from_json(args.as_bytes(), Form::Python).unwrap();
            let r = Body::from_json(result.as_bytes(), Form::Python).unwrap();
            let span = tool_span(name, &a, &r, status);
            // Every fifth call's bodies are never written: the gate must find them missing.
            let write = i % 5 != 0;
            if write {
                write_bodies(&mut store, &span, &a, &r).unwrap();
            }
            lines.push_str(&json!([name, args, result, status, write]).to_string());
            lines.push('\n');
            spans.push(serde_json::to_value(&span).unwrap());
        }
    }
    // Bodies written by an earlier call stay, so recompute what is missing from the store.
    let problems = export_ready(&spans, &store).unwrap();
    let ours: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();

    let script = format!(
        r#"
import sys, json, trace_gate
spans = []
for line in sys.stdin:
    name, args, result, status, write = json.loads(line)
    a, r = json.loads(args), json.loads(result)
    span = trace_gate.tool_span(name, a, r, status)
    if write:
        trace_gate.write_bodies({seed:?}, span, a, r)
    spans.append(span)
print(json.dumps(trace_gate.export_ready(spans, {seed:?}), ensure_ascii=False))
"#,
        seed = seed_dir.to_str().unwrap()
    );
    let theirs: Vec<String> = serde_json::from_str(&python(&reference, &script, &lines)).unwrap();
    assert_eq!(ours, theirs);
    assert!(
        ours.iter().any(|m| m.starts_with("open:"))
            && ours.iter().any(|m| m.starts_with("missing:"))
    );

    // Same files, same bytes.
    let mut names: Vec<_> = std::fs::read_dir(&seed_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut our_names: Vec<_> = std::fs::read_dir(&ours_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    our_names.sort();
    assert_eq!(names, our_names);
    for name in names {
        assert_eq!(
            std::fs::read(seed_dir.join(&name)).unwrap(),
            std::fs::read(ours_dir.join(&name)).unwrap()
        );
    }
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn diff_manifests_equals_seed() {
    let Some(reference) = reference_dir() else {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    };
    let mut rng = Rng::new(4);
    let hashes: Vec<String> = (0..6).map(|i| toolslice::hash::sha256_hex(&[i])).collect();
    let mut runs = Vec::new();
    let mut input = String::new();
    for _ in 0..cases(300) {
        let mut side = || -> Vec<Value> {
            (0..rng.below(12))
                .map(|_| {
                    json!({
                        "name": NAMES[rng.below(NAMES.len() as u64) as usize],
                        "status": STATUSES[rng.below(3) as usize],
                        "args_sha256": hashes[rng.below(3) as usize],
                        "result_sha256": hashes[3 + rng.below(3) as usize],
                        "args_len": 1, "result_len": 1,
                    })
                })
                .collect()
        };
        let (left, right) = (side(), side());
        input.push_str(&json!([left, right]).to_string());
        input.push('\n');
        runs.push((left, right));
    }
    let script = r#"
import sys, json, trace_gate
for line in sys.stdin:
    left, right = json.loads(line)
    d = trace_gate.diff_manifests(trace_gate.manifest(left), trace_gate.manifest(right))
    print(json.dumps(d, ensure_ascii=False))
"#;
    let out = python(&reference, script, &input);
    for ((left, right), line) in runs.iter().zip(out.lines()) {
        let diff = diff_manifests(&manifest(left).unwrap(), &manifest(right).unwrap());
        let theirs: Value = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_value(&diff).unwrap(), theirs);
    }
}

// proptest is a native-only dev-dependency (see Cargo.toml): the property is too.
#[cfg(not(target_arch = "wasm32"))]
proptest! {
    #![proptest_config(proptest_config(4000))]
    /// The gate's default order (redact, strip, canonicalise, hash) on generated documents:
    /// never a panic, the stored body is canonical (re-canonicalising it changes nothing),
    /// its digest is its hash, and a document with nothing to redact or strip hashes as the
    /// seed's bare canonical form.
    ///
    /// Documents from the differential tests' generator (json_gen), drawn from proptest's
    /// choices so a failure shrinks to the simplest document; both forms (2000 documents per
    /// form before, 4000 cases over both now).
    #[test]
    fn gate_policy_bodies_are_canonical_on_generated_documents(
        choices in choices(512),
        form in prop::sample::select(&[Form::Python, Form::Jcs][..]),
    ) {
        use toolslice::canonical::canonicalize;
        use toolslice::gate::{Gate, GatePolicy};
        let opts = Options {
            duplicates: true,
            non_finite: true,
            big_ints: true,
        };
        let doc = Gen::new(&mut Choices::new(choices), opts).document();
        let gate = Gate::new(&GatePolicy {
            form,
            ..GatePolicy::default()
        })
        .unwrap();
        let Ok(raw) = Body::from_json(doc.as_bytes(), form) else {
            prop_assert!(gate.prepare(doc.as_bytes(), "args").is_err(), "{}", doc);
            return Ok(());
        };
        let prepared = match gate.prepare(doc.as_bytes(), "args") {
            Ok(p) => p,
            // The marker collision is the one refusal a valid document may get.
            Err(e) => {
                prop_assert!(e.to_string().contains("number marker"), "{}: {}", doc, e);
                return Ok(());
            }
        };
        let body = &prepared.body;
        prop_assert_eq!(
            &canonicalize(body.text.as_bytes(), form).unwrap(),
            &body.text,
            "{}",
            doc
        );
        prop_assert_eq!(
            &body.sha256,
            &toolslice::hash::sha256_hex(body.text.as_bytes())
        );
        if prepared.receipts.is_empty() && prepared.volatile.is_empty() {
            prop_assert_eq!(body, &raw, "{}", doc);
        }
    }
}
