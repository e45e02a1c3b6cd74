//! Helpers shared by the native integration tests: proptest's configuration for the property
//! tests, a tiny deterministic PRNG for the differential tests' inputs (the same generated
//! input is fed to our code and to the reference Python scripts, so it is a fixed
//! generator, not a property), and the location of the seeds' reference scripts.
#![allow(dead_code)]

use std::path::PathBuf;

/// The draws a generator makes, from either source: the xorshift [`Rng`] (a fixed input, for
/// a differential test that feeds the same input to our code and to the reference scripts)
/// or proptest-generated [`Choices`] (a property, whose failing input proptest shrinks by
/// shrinking the choices: fewer of them, and smaller, which pick the earlier branches).
pub trait Draw {
    fn next_u64(&mut self) -> u64;
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// xorshift64*: fast, deterministic, good enough to generate test inputs. For inputs that are
/// not properties (differential tests against the reference scripts, one large fixed input,
/// a fixed corpus); a property test draws from proptest instead, which shrinks a failure.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
}

impl Draw for Rng {
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A proptest-generated list of choices, read in turn; past its end every draw is 0 (the
/// first branch, the shortest length), so any list, however shrunk, generates an input.
/// For a domain generator shared with the differential tests (`json_gen`).
pub struct Choices {
    list: Vec<u64>,
    at: usize,
}

impl Choices {
    pub fn new(list: Vec<u64>) -> Self {
        Choices { list, at: 0 }
    }
}

impl Draw for Choices {
    fn next_u64(&mut self) -> u64 {
        let x = self.list.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        x
    }
}

/// Up to `max` choices for [`Choices`].
#[cfg(not(target_arch = "wasm32"))]
pub fn choices(max: usize) -> impl proptest::strategy::Strategy<Value = Vec<u64>> {
    proptest::collection::vec(proptest::prelude::any::<u64>(), 0..max)
}

/// Number of cases for property tests: `TOOLSLICE_PROPTEST_CASES` or the given default.
pub fn cases(default: usize) -> usize {
    std::env::var("TOOLSLICE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The seed every property test starts from unless `PROPTEST_RNG_SEED` names another.
pub const PROPTEST_SEED: u64 = 0x7001_5011_CE00_0020;

/// proptest's configuration for a property with `default_cases` cases (scaled by
/// `TOOLSLICE_PROPTEST_CASES`). The seed is fixed, so every machine (CI's fresh clone
/// included) runs the same cases and a failure reproduces by running the test again;
/// `PROPTEST_RNG_SEED=N` explores other cases. A failure's shrunk case is also persisted
/// beside the test (`tests/NAME.proptest-regressions`): commit that file with the fix, and
/// the case is replayed first on every run from then on, even after the seed or the
/// generators change.
#[cfg(not(target_arch = "wasm32"))]
pub fn proptest_config(default_cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
    let mut config = Config::with_cases(cases(default_cases as usize) as u32);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(PROPTEST_SEED);
    }
    config.failure_persistence = Some(Box::new(FileFailurePersistence::WithSource(
        "proptest-regressions",
    )));
    config
}

/// Chunk sizes for a streamed push (see [`chunked`]): a third of them 1 byte, so splits land
/// inside UTF-8 sequences and CRLF pairs, the others up to `max`. Shrinks towards fewer,
/// smaller chunks; no sizes at all is one push of the whole input.
#[cfg(not(target_arch = "wasm32"))]
pub fn chunk_sizes(max: usize) -> impl proptest::strategy::Strategy<Value = Vec<usize>> {
    use proptest::prelude::*;
    prop::collection::vec(prop_oneof![1 => Just(1usize), 2 => 1..=max.max(1)], 0..64)
}

/// `input` cut into chunks of `sizes`, used in turn (cycling); no sizes: one chunk.
pub fn chunked<'a>(input: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = input;
    let mut sizes = sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let take = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        chunks.push(&rest[..take]);
        rest = &rest[take..];
    }
    chunks
}

/// The seeds' reference scripts (`shared/reference`), when present: `TOOLSLICE_REFERENCE`,
/// else `<repo>/../shared/reference` (the user's layout: the repository beside `shared/`);
/// no machine-specific path. Differential tests skip
/// (saying so on stderr) when this is `None` or python3 is missing.
pub fn reference_dir() -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let candidates = [
        std::env::var_os("TOOLSLICE_REFERENCE").map(PathBuf::from),
        Some(repo.join("../shared/reference")),
    ];
    let dir = candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("clip_check.py").is_file())?;
    let python_ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    python_ok.then_some(dir)
}

/// Runs python3 with `args`, feeding `stdin` from a thread (python answers while we are still
/// writing, and both pipes would fill), and returns stdout and the exit code.
pub fn python(args: &[&str], stdin: &[u8]) -> (String, i32) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("python3")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

/// The repository's trace corpora, as directories relative to this crate: the format
/// fixtures, the producers' traces (line layouts) and the package tests' span files.
pub const FORMAT_FIXTURES: &str = "tests/fixtures/formats";
pub const PRODUCER_TRACES: &str = "../../pkg-tests/producers/corpus";
pub const PACKAGE_SPAN_FILES: &str = "../../pkg-tests/fixtures";

/// The files of `dirs` (relative to this crate) whose names `keep` accepts, in name order
/// within each directory, with their bytes.
pub fn corpus_files(dirs: &[&str], keep: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if keep(&name) {
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}
