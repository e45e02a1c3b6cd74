//! Differential tests against the seed's own `clip_check.py` (run when python3 and
//! `shared/reference` are present; skipped with a notice otherwise).
//!
//! For every well-formed record whose status is ok, error or absent, our status and detail
//! must equal the seed's `classify`; and on clean inputs our table and exit code must equal
//! what `clip_check.py` prints.

mod common;

use common::python;

use common::{Draw, Rng};
use toolslice::check::{check_bytes, classify_with, render, CheckOptions, ReasonPolicy};
use toolslice::span::parse_str;

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A well-formed record. Lengths are small so ratio ties (0.125, 0.375 ...) come up often.
fn random_record(rng: &mut Rng, i: usize, for_table: bool) -> String {
    let mut fields: Vec<String> = Vec::new();
    let id = match rng.below(4) {
        0 if !for_table => "null".to_string(),
        1 => format!("{}", i),
        _ => json_str(&format!("tool-{i}")),
    };
    if !for_table || rng.chance(9, 10) {
        fields.push(format!("\"span_id\":{id}"));
    }
    let name = rng.pick(&[
        "read_file",
        "grep",
        "shell",
        "caf\u{e9}",
        "\u{5de5}\u{5177}",
        "x",
    ]);
    fields.push(format!("\"name\":{}", json_str(name)));
    if let Some(status) = rng.pick(&[None, Some("ok"), Some("error"), Some("OK")]) {
        fields.push(format!("\"status\":\"{status}\""));
    }
    let scale = *rng.pick(&[8u64, 16, 40, 1000, 96412]);
    let obs = rng.below(scale + 1);
    let inj = match rng.below(4) {
        0 => obs,
        1 => obs + rng.below(5),
        _ => rng.below(obs + 1),
    };
    for (key, value) in [
        ("observed_bytes", obs),
        ("injected_bytes", inj),
        ("injected_tokens", inj / 4),
    ] {
        match rng.below(12) {
            0 => {}
            1 => fields.push(format!("\"{key}\":null")),
            _ => fields.push(format!("\"{key}\":{value}")),
        }
    }
    match rng.below(8) {
        0 => {}
        1 => fields.push("\"clip_reason\":null".into()),
        2 => fields.push("\"clip_reason\":\"\"".into()),
        3 => fields.push("\"clip_reason\":\"none\"".into()),
        4 => fields.push("\"clip_reason\":\"not_in_enum\"".into()),
        _ => {
            let r = rng.pick(&[
                "prompt_token_cap",
                "tool_result_char_limit",
                "provider_context_window",
                "redaction",
                "binary_omitted",
            ]);
            fields.push(format!("\"clip_reason\":\"{r}\""));
        }
    }
    for key in ["sha256_observed", "sha256_injected"] {
        match rng.below(6) {
            0 => {}
            1 => fields.push(format!("\"{key}\":\"\"")),
            2 => fields.push(format!("\"{key}\":null")),
            3 => fields.push(format!("\"{key}\":\"cd34\"")),
            _ => fields.push(format!("\"{key}\":\"ab12\"")),
        }
    }
    // Parents: turns absent from the input, and tool spans present in it (ids `tool-N`).
    if rng.chance(1, 3) {
        let parent = rng.pick(&["turn-1", "turn-2", "tool-0", "tool-3"]);
        fields.push(format!("\"parent_id\":{}", json_str(parent)));
    }
    if rng.chance(1, 2) {
        fields.push(
            "\"injected_preview\":\"app:\\n  name: billing\\n\",\"extra\":{\"k\":[1,2]}".into(),
        );
    }
    // Field order must not matter.
    for j in (1..fields.len()).rev() {
        let k = rng.below(j as u64 + 1) as usize;
        fields.swap(j, k);
    }
    format!("{{{}}}", fields.join(","))
}

#[test]
fn classify_equals_the_seed_on_generated_records() {
    let Some(dir) = common::reference_dir() else {
        eprintln!("skipped: python3 or shared/reference not found");
        return;
    };
    let mut rng = Rng::new(42);
    let n = common::cases(20_000);
    let lines: Vec<String> = (0..n).map(|i| random_record(&mut rng, i, false)).collect();
    let driver = format!(
        "import json, sys\nsys.path.insert(0, {:?})\nfrom clip_check import classify\n\
         for line in sys.stdin:\n    s, d = classify(json.loads(line))\n    print(json.dumps([s, [str(x) for x in d]]))\n",
        dir.to_str().unwrap()
    );
    let (out, code) = python(&["-c", &driver], lines.join("\n").as_bytes());
    assert_eq!(code, 0);
    let theirs: Vec<(String, Vec<String>)> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(theirs.len(), n);
    for (line, (status, detail)) in lines.iter().zip(theirs) {
        // The seed's leniency: any clip_reason but `none` declares (the compatibility mode).
        let ours = classify_with(&parse_str(line).unwrap().view(), ReasonPolicy::Lenient);
        assert_eq!(ours.status.as_str(), status, "{line}");
        assert_eq!(ours.detail, detail, "{line}");
    }
}

#[test]
fn table_and_exit_code_equal_the_seed_on_clean_runs() {
    let Some(dir) = common::reference_dir() else {
        eprintln!("skipped: python3 or shared/reference not found");
        return;
    };
    let script = dir.join("clip_check.py");
    let mut rng = Rng::new(7);
    let mut with_parent_lines = 0;
    for run in 0..common::cases(60) {
        let n = rng.below(50) as usize;
        let mut input = String::new();
        for i in 0..n {
            // Keep clean runs clean: the seed crashes on unknown reasons in its table join.
            let mut rec = random_record(&mut rng, i, true);
            while rec.contains("not_in_enum") {
                rec = random_record(&mut rng, i, true);
            }
            input.push_str(&rec);
            input.push('\n');
            if rng.chance(1, 10) {
                input.push('\n');
            }
        }
        let (theirs, code) = python(&[script.to_str().unwrap()], input.as_bytes());
        let lenient = CheckOptions {
            lenient_clip_reason: true,
            ..CheckOptions::default()
        };
        let report = check_bytes(input.as_bytes(), lenient);
        let ours = render::table(&report);
        if n == 0 {
            // The one departure: the seed passes a run it did not check; we say so and fail.
            assert_eq!(
                ours,
                format!("{theirs}# nothing checked: the input is empty\n"),
                "run {run}"
            );
            assert_eq!((report.exit_code, code), (1, 0), "run {run}");
            continue;
        }
        // The README's claim, made precise: the seed's table byte for byte, then, only when a
        // parent (via parent_id) hides a failure, one `# parent ...` line per such parent.
        let extra = ours.strip_prefix(theirs.as_str()).unwrap_or_else(|| {
            panic!(
                "run {run}: the seed's table is not a prefix of ours:\n{ours}\n--- seed:\n{theirs}"
            )
        });
        assert_eq!(
            extra.lines().count(),
            report.rollup.len(),
            "run {run}: {extra}"
        );
        assert!(
            extra.lines().all(|l| l.starts_with("# parent ")),
            "run {run}: {extra}"
        );
        assert_eq!(report.exit_code, code, "run {run}");
        with_parent_lines += usize::from(!extra.is_empty());
    }
    assert!(with_parent_lines > 0, "no run exercised the parent lines");
}
