//! The emitter against the seed's own `emit_tool_span.py` (run when python3 and
//! `shared/reference` are present): for generated boundaries (non-ASCII, controls, quotes,
//! long injected strings), the JSONL line must be byte-for-byte the seed's.

mod common;

use common::{python, Draw, Rng};
use toolslice::span::emit::{emit_tool_span, span_line, ToolBoundary};
use toolslice::span::ClipReason;

fn text(rng: &mut Rng) -> String {
    let pieces = [
        "a",
        "port: 8443\n",
        "\t",
        "\"",
        "\\",
        "é",
        "工具",
        "😀",
        "\u{1}",
        "\u{7f}",
        "\u{2028}",
        " ",
        "\r\n",
    ];
    let n = rng.below(300) as usize;
    (0..n).map(|_| *rng.pick(&pieces)).collect()
}

#[test]
fn lines_equal_the_seed_emitter() {
    let Some(dir) = common::reference_dir() else {
        eprintln!("skipped: python3 or shared/reference not found");
        return;
    };
    let mut rng = Rng::new(3);
    let mut inputs = Vec::new();
    let mut ours = String::new();
    for i in 0..common::cases(500) {
        let observed = text(&mut rng);
        let injected: String = observed.chars().take(rng.below(400) as usize).collect();
        let reason = *rng.pick(&ClipReason::ALL);
        let parent = rng.chance(1, 2).then(|| format!("turn-{i}"));
        let builder = rng.chance(2, 3).then(|| "cap-v3".to_string());
        let tokens = rng.below(10_000);
        let span_id = format!("tool-{i}");
        inputs.push(serde_json::json!([
            span_id,
            parent,
            "read_file",
            observed,
            injected,
            reason.as_str(),
            builder,
            tokens
        ]));
        ours.push_str(&span_line(&emit_tool_span(&ToolBoundary {
            span_id: &span_id,
            parent_id: parent.as_deref(),
            name: "read_file",
            observed: &observed,
            injected: &injected,
            reason,
            token_count: tokens,
            builder_version: builder.as_deref(),
        })));
    }
    let driver = format!(
        "import json, sys, tempfile, os\nsys.path.insert(0, {:?})\nfrom emit_tool_span import emit_tool_span\n\
         d = tempfile.mkdtemp(); p = os.path.join(d, 'spans.jsonl')\n\
         for line in sys.stdin:\n    a = json.loads(line)\n    emit_tool_span(p, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])\n\
         sys.stdout.write(open(p, encoding='utf-8').read())\n",
        dir.to_str().unwrap()
    );
    let input: String = inputs.iter().map(|v| v.to_string() + "\n").collect();
    let (theirs, code) = python(&["-c", &driver], input.as_bytes());
    assert_eq!(code, 0);
    for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
        assert_eq!(a, b, "record {i}");
    }
    assert_eq!(ours, theirs);
}
