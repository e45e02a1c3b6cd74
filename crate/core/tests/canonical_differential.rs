//! The canonical forms against their definitions, over generated documents:
//! - `python` against `json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"),
//!   ensure_ascii=False)` (one python3 process for the whole batch);
//! - `jcs` against the PyPI `rfc8785` package (skipped with a message when it is missing),
//!   including which documents each side refuses;
//! - RFC 8785's own examples, and properties that need no oracle: idempotence, the output
//!   reads back to an equal value, no panic on arbitrary bytes.

mod common;
mod json_gen;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{cases, reference_dir, Draw, Rng};
#[cfg(not(target_arch = "wasm32"))]
use common::{choices, proptest_config, Choices};
use json_gen::{Gen, Options};
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;
use toolslice::canonical::{canonicalize, Form};
#[cfg(not(target_arch = "wasm32"))]
use toolslice::canonical::{canonicalize_into, CanonicalError};
use toolslice::error::Coded;

/// Feeds python one JSON-encoded document per line; it answers one line per document:
/// `ok <json-encoded canonical text>` or `err <exception class>`.
fn run_python(script: &str, docs: &[String]) -> Result<Vec<String>, String> {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut input = String::new();
    for d in docs {
        input.push_str(&serde_json::to_string(d).unwrap());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer.join().unwrap().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect())
}

const PY_DUMPS: &str = r#"
import sys, json
for line in sys.stdin:
    text = json.loads(line)
    try:
        out = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        out.encode("utf-8")
        sys.stdout.write("ok " + json.dumps(out) + "\n")
    except Exception as e:
        sys.stdout.write("err " + type(e).__name__ + "\n")
"#;

// rfc8785 refuses every Python int beyond ±(2^53−1). toolslice accepts an integer lexeme
// beyond that range when it is already the ECMAScript form of its double (as RFC 8785's own
// `295147905179352830000` is), so canonical output stays canonical; `parse_int` hands such
// lexemes to rfc8785 as that double, and the others as ints (which it refuses, as we do).
// Python's json.loads keeps the last of duplicate keys before rfc8785 could see them, so a
// pairs hook raises instead, as RFC 8785 requires.
const PY_JCS: &str = r#"
import sys, json, rfc8785
def parse_int(s):
    v = int(s)
    if abs(v) <= 2**53 - 1:
        return v
    f = float(s)
    if f == f and abs(f) != float("inf") and rfc8785.dumps(f).decode() == str(v):
        return f
    return v
class DuplicateKey(Exception):
    pass
def pairs(items):
    keys = [k for k, _ in items]
    if len(set(keys)) != len(keys):
        raise DuplicateKey()
    return dict(items)
for line in sys.stdin:
    text = json.loads(line)
    try:
        value = json.loads(text, parse_int=parse_int, object_pairs_hook=pairs)
        out = rfc8785.dumps(value).decode("utf-8")
        sys.stdout.write("ok " + json.dumps(out) + "\n")
    except Exception as e:
        sys.stdout.write("err " + type(e).__name__ + "\n")
"#;

fn ours(doc: &str, form: Form) -> String {
    match canonicalize(doc.as_bytes(), form) {
        Ok(text) => format!("ok {text}"),
        Err(e) => format!("err {}", e.code()),
    }
}

/// Python's answer with its canonical text decoded (it is sent JSON-encoded, in ASCII).
fn decode_answer(line: &str) -> String {
    match line.strip_prefix("ok ") {
        Some(json) => format!("ok {}", serde_json::from_str::<String>(json).unwrap()),
        None => line.to_string(),
    }
}

/// Whether both sides refused for compatible reasons. A document with two problems may be
/// refused for either (Python meets them in sorted order, toolslice in reading order), so
/// only a syntax error must be a syntax error on both sides.
fn same_refusal(python: &str, ours: &str) -> bool {
    match python {
        "err JSONDecodeError" => ours == "err invalid_json",
        // The pairs hook runs when an object closes, before python reads on to a syntax
        // error further down; toolslice reports the syntax error first.
        "err DuplicateKey" => ours == "err duplicate_key" || ours == "err invalid_json",
        _ => ours.starts_with("err ") && ours != "err invalid_json",
    }
}

fn documents(seed: u64, n: usize, opts: Options) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut gen = Gen::new(&mut rng, opts);
    (0..n).map(|_| gen.document()).collect()
}

fn compare(form: Form, script: &str, docs: &[String]) -> Result<usize, String> {
    let want = run_python(script, docs)?;
    assert_eq!(want.len(), docs.len(), "python answered every document");
    let mut refused = 0;
    for (doc, want) in docs.iter().zip(&want) {
        let want = &decode_answer(want);
        let got = ours(doc, form);
        if want.starts_with("err ") {
            refused += 1;
            assert!(
                same_refusal(want, &got),
                "{form} of {doc:?}: python {want}, toolslice {got}"
            );
        } else {
            assert_eq!(&got, want, "{form} of {doc:?}");
        }
    }
    Ok(refused)
}

#[test]
fn python_form_equals_json_dumps() {
    if reference_dir().is_none() {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    }
    let opts = Options {
        duplicates: true,
        non_finite: true,
        big_ints: true,
    };
    let docs = documents(1, cases(5000), opts);
    let refused = compare(Form::Python, PY_DUMPS, &docs).unwrap();
    eprintln!(
        "python form: {} documents, {refused} refused by both",
        docs.len()
    );
    // Damaged documents: both sides must refuse the same ones.
    let damaged = damage(&docs, 7);
    let refused = compare(Form::Python, PY_DUMPS, &damaged).unwrap();
    eprintln!(
        "python form: {} damaged documents, {refused} refused by both",
        damaged.len()
    );
}

/// Copies of `docs` with one to three ASCII bytes replaced, inserted or cut (so they stay
/// UTF-8 text that python can be handed).
fn damage(docs: &[String], seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    docs.iter()
        .map(|d| {
            let mut chars: Vec<char> = d.chars().collect();
            for _ in 0..1 + rng.below(3) {
                if chars.is_empty() {
                    break;
                }
                let at = rng.below(chars.len() as u64) as usize;
                let c = char::from(*rng.pick(b"{}[]\",:\\u0aeE+-.1 tnNI"));
                match rng.below(3) {
                    0 => chars[at] = c,
                    1 => chars.insert(at, c),
                    _ => {
                        chars.remove(at);
                    }
                }
            }
            chars.into_iter().collect()
        })
        .collect()
}

#[test]
fn jcs_form_equals_rfc8785_package() {
    if reference_dir().is_none() {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    }
    // Duplicates are left out: Python's json.loads drops them before rfc8785 could object.
    for (seed, opts) in [
        (
            2,
            Options {
                duplicates: false,
                non_finite: false,
                big_ints: false,
            },
        ),
        (
            3,
            Options {
                duplicates: false,
                non_finite: true,
                big_ints: true,
            },
        ),
    ] {
        let mut docs = documents(seed, cases(5000), opts);
        docs.extend(damage(&docs[..docs.len() / 2], seed));
        match compare(Form::Jcs, PY_JCS, &docs) {
            Ok(refused) => eprintln!(
                "jcs form: {} documents, {refused} refused by both",
                docs.len()
            ),
            Err(e) if e.contains("No module named 'rfc8785'") => {
                eprintln!("skipping: the python module rfc8785 is missing (pip install rfc8785)");
                return;
            }
            Err(e) => panic!("python failed: {e}"),
        }
    }
}

#[test]
fn lone_surrogates_are_refused_like_python() {
    if reference_dir().is_none() {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    }
    let docs: Vec<String> = [
        r#""\ud800""#,
        r#"["\udc00\ud800"]"#,
        r#"{"\ud83d":1}"#,
        r#""\ud83d\ude00""#,
        r#""\ud83dx""#,
    ]
    .map(String::from)
    .to_vec();
    compare(Form::Python, PY_DUMPS, &docs).unwrap();
}

/// RFC 8785 §3.2.2 and §3.2.3 examples, and the cyberphone/json-canonicalization test data
/// (written in by hand from the RFC text and that repository).
#[test]
fn rfc8785_examples() {
    let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
    let want = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
    let got = canonicalize(input.as_bytes(), Form::Jcs).unwrap();
    assert_eq!(got, want);
    // The RFC also gives the UTF-8 bytes of that output.
    let hex: String = got.bytes().map(|b| format!("{b:02x} ")).collect();
    assert_eq!(
        hex.trim_end(),
        "7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a 5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31 65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37 5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d"
    );

    let sorting = r#"{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"#;
    assert_eq!(
        canonicalize(sorting.as_bytes(), Form::Jcs).unwrap(),
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
    );

    for (input, want) in [
        (
            "[\n  56,\n  {\n    \"d\": true,\n    \"10\": null,\n    \"1\": [ ]\n  }\n]",
            r#"[56,{"1":[],"10":null,"d":true}]"#,
        ),
        (
            "{\n  \"1\": {\"f\": {\"f\": \"hi\",\"F\": 5} ,\"\\n\": 56.0},\n  \"10\": { },\n  \"\": \"empty\",\n  \"a\": { },\n  \"111\": [ { } ],\n  \"A\": { }\n}",
            r#"{"":"empty","1":{"\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}"#,
        ),
        ("{\n  \"Unnormalized Unicode\":\"\\u1e0d\\u0307\"\n}\n", "{\"Unnormalized Unicode\":\"\u{1e0d}\u{307}\"}"),
        (
            "{\n  \"peach\": \"This sorting order\",\n  \"péché\": \"is wrong according to French\",\n  \"pêche\": \"but canonicalization MUST\",\n  \"sin\":   \"ingnore locale\"\n}\n",
            r#"{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ingnore locale"}"#,
        ),
        (
            "{\n  \"\\u20ac\": \"Euro Sign\",\n  \"1\": \"One\",\n  \"\\u0080\": \"Control\\u007f\",\n  \"\\ud83d\\ude02\": \"Smiley\",\n  \"\\u00f6\": \"Latin Small Letter O With Diaeresis\",\n  \"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\",\n  \"</script>\": \"Browser Challenge\"\n}\n",
            "{\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\u{80}\":\"Control\u{7f}\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😂\":\"Smiley\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}",
        ),
        ("\"this is a test string 1235\"", "\"this is a test string 1235\""),
    ] {
        assert_eq!(canonicalize(input.as_bytes(), Form::Jcs).unwrap(), want, "{input}");
    }
}

/// Loose equality for values read back by serde_json, whose default float reader may be
/// one unit in the last place off on long mantissas.
#[cfg(not(target_arch = "wasm32"))]
fn same_value(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || ((x - y).abs() <= 1e-15 * x.abs().max(y.abs())),
            _ => x == y,
        },
        (Array(x), Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Object(x), Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// The three generator settings of the idempotence property: each form without Python's
/// extensions (duplicates only where Python allows them), then Python with all of them and
/// big integers.
#[cfg(not(target_arch = "wasm32"))]
const SETTINGS: [(Form, Options); 3] = [
    (
        Form::Python,
        Options {
            duplicates: true,
            non_finite: false,
            big_ints: false,
        },
    ),
    (
        Form::Jcs,
        Options {
            duplicates: false,
            non_finite: false,
            big_ints: false,
        },
    ),
    (
        Form::Python,
        Options {
            duplicates: true,
            non_finite: true,
            big_ints: true,
        },
    ),
];

// proptest is a native-only dev-dependency (see Cargo.toml): the properties are too.
#[cfg(not(target_arch = "wasm32"))]
proptest! {
    #![proptest_config(proptest_config(60_000))]
    /// Documents from json_gen drawn from proptest's choices (so a failure shrinks to the
    /// simplest document), in one of three settings (20 000 documents per setting before,
    /// 60 000 cases over the three now).
    #[test]
    fn canonical_output_is_idempotent_and_reads_back_equal(
        choices in choices(512),
        setting in 0..SETTINGS.len(),
    ) {
        let (form, opts) = SETTINGS[setting];
        let doc = Gen::new(&mut Choices::new(choices), opts).document();
        let once = canonicalize(doc.as_bytes(), form);
        prop_assert!(once.is_ok(), "{} {:?}: {:?}", form, doc, once);
        let once = once.unwrap();
        let twice = canonicalize(once.as_bytes(), form).unwrap();
        prop_assert_eq!(&once, &twice, "{} is idempotent on {:?}", form, doc);
        if opts.non_finite {
            // With Python's extensions and big integers, idempotence still holds, and the
            // canonical output has no duplicates left.
            let mut out = String::new();
            let report = canonicalize_into(once.as_bytes(), Form::Python, &mut out).unwrap();
            prop_assert!(report.duplicate_keys.is_empty(), "canonical output has no duplicates");
        } else {
            // serde_json keeps the last of duplicate keys, as Python does.
            let before: serde_json::Value = serde_json::from_str(&doc).unwrap();
            let after: serde_json::Value = serde_json::from_str(&once).unwrap();
            prop_assert!(same_value(&before, &after), "{} {:?} -> {}", form, doc, once);
        }
    }
}

/// A fixed corpus of 500 valid documents for the mutations below.
#[cfg(not(target_arch = "wasm32"))]
fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let opts = Options {
            duplicates: true,
            non_finite: true,
            big_ints: true,
        };
        documents(13, 500, opts)
    })
}

/// Half the inputs: up to 63 bytes, mostly JSON punctuation, so the reader gets deep before
/// failing; the other half: a corpus document with one to three bytes flipped, cut, or
/// duplicated.
#[cfg(not(target_arch = "wasm32"))]
fn damaged_bytes() -> impl Strategy<Value = Vec<u8>> {
    let punctuation = prop::collection::vec(
        prop::sample::select(&b"{}[]\",:\\u0123456789.eE+-tfnNI \n\xff\xc3\xa9"[..]),
        0..64,
    );
    let mutated = (
        0..500usize,
        prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, any::<u8>()), 1..=3),
    )
        .prop_map(|(doc, edits)| {
            let mut d = corpus()[doc].clone().into_bytes();
            for (at, op, byte) in edits {
                if d.is_empty() {
                    break;
                }
                let at = at.index(d.len());
                match op {
                    0 => d[at] = byte,
                    1 => d.truncate(at),
                    _ => {
                        let b = d[at];
                        d.insert(at, b)
                    }
                }
            }
            d
        });
    prop_oneof![punctuation, mutated]
}

#[cfg(not(target_arch = "wasm32"))]
proptest! {
    #![proptest_config(proptest_config(50_000))]
    #[test]
    fn arbitrary_bytes_never_panic(input in damaged_bytes()) {
        for form in [Form::Python, Form::Jcs] {
            match canonicalize(&input, form) {
                Ok(text) => {
                    let again = canonicalize(text.as_bytes(), form);
                    prop_assert_eq!(again.as_ref(), Ok(&text));
                }
                Err(e) => {
                    let _ = (e.code(), e.to_string());
                    if let CanonicalError::Syntax { at, .. } = &e {
                        prop_assert!(at.position.is_some_and(|p| p.offset <= input.len()));
                    }
                }
            }
        }
    }
}
