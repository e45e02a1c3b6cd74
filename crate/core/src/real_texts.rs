//! Real producers' exports (pkg-tests/producers/corpus: LangChain with OpenLLMetry and
//! OpenInference, pydantic-ai, the Vercel AI SDK, the OpenAI Agents SDK), for the tests that
//! hold the vector scanners to their scalar definitions on text nobody here wrote. Each comes
//! twice: as exported, and with its JSON `\n` escapes turned into newlines, so that the tool
//! outputs and prompts inside become lines as a packer sees them. Beside them, [`mixed`]
//! makes up texts from the pieces a scanner must tell apart.

const FILES: [&str; 5] = [
    include_str!("../../../pkg-tests/producers/corpus/langchain-openllmetry.otlp.jsonl"),
    include_str!("../../../pkg-tests/producers/corpus/langchain-openinference.otlp.jsonl"),
    include_str!("../../../pkg-tests/producers/corpus/pydantic-ai.otlp.jsonl"),
    include_str!("../../../pkg-tests/producers/corpus/ai-sdk-stream.otlp.jsonl"),
    include_str!("../../../pkg-tests/producers/corpus/openai-agents.jsonl"),
];

/// Every text, as exported and unescaped.
pub(crate) fn all() -> Vec<String> {
    FILES
        .iter()
        .flat_map(|f| [f.to_string(), f.replace("\\n", "\n").replace("\\t", "\t")])
        .collect()
}

/// The corpus's whole exports whose names end with `suffix`, sorted by name: for the tests
/// that read every producer's export as a file (more than the five above).
pub(crate) fn corpus_files(suffix: &str) -> Vec<std::path::PathBuf> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../pkg-tests/producers/corpus"
    );
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// `count` of `pieces` drawn by a fixed-seed generator (`state` carries it from call to
/// call): made-up texts mixing the pieces a scanner must tell apart, the same every run.
pub(crate) fn mixed(pieces: &[&str], count: usize, state: &mut u64) -> String {
    let mut s = String::new();
    for _ in 0..count {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.push_str(pieces[(*state >> 33) as usize % pieces.len()]);
    }
    s
}
