//! Number formatting against Python itself: `repr(float)` for the python form and the
//! `rfc8785` package (ECMAScript `Number::toString`) for jcs, over hundreds of thousands of
//! doubles: random bit patterns, short decimals, integers around 2^53, and exact binary
//! fractions, where round-half-even ties live.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{cases, reference_dir, Draw, Rng};
use toolslice::canonical::{es_number, python_float_repr};

fn doubles(n: usize) -> Vec<f64> {
    let mut rng = Rng::new(8785);
    let mut out = Vec::with_capacity(n);
    // Hand-picked edges first.
    for x in [
        5e-324,
        2.2250738585072014e-308,
        1.7976931348623157e308,
        1e-7,
        1e-6,
        1e-5,
        1e-4,
        1e15,
        1e16,
        1e17,
        1e21,
        1e22,
        1e23,
        0.1,
        0.3,
        2.0f64.powi(53),
        2.0f64.powi(53) + 2.0,
        // RFC 8785's round-to-even vector: exactly 1424953923781206.25.
        f64::from_bits(0x43143ff3c1cb0959),
        -f64::from_bits(0x43143ff3c1cb0959),
    ] {
        out.push(x);
    }
    while out.len() < n {
        let x = match rng.below(6) {
            0 => f64::from_bits(rng.next_u64()),
            1 => {
                // A short decimal: up to 6 digits and a modest exponent.
                let m = rng.below(1_000_000) as f64;
                m * 10f64.powi(rng.below(40) as i32 - 20)
            }
            2 => (rng.below(1 << 20) as f64) + (2.0f64.powi(53) - 1e6),
            3 => {
                // m × 2^-k with a 53-bit m: exact binary fractions (tie candidates).
                let m = (rng.next_u64() >> 11) | (1 << 52);
                m as f64 * 2.0f64.powi(-(rng.below(60) as i32))
            }
            4 => (rng.next_u64() >> rng.below(64)) as f64,
            _ => {
                rng.next_u64() as f64 / (1u64 << rng.below(63)) as f64
                    * if rng.chance(1, 2) { -1.0 } else { 1.0 }
            }
        };
        if x.is_finite() {
            out.push(x);
        }
    }
    out
}

/// Runs python over one line of hex bit patterns per double; returns one line per double.
fn python_lines(script: &str, xs: &[f64]) -> Option<Vec<String>> {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut input = String::with_capacity(xs.len() * 17);
    for x in xs {
        input.push_str(&format!("{:016x}\n", x.to_bits()));
    }
    let mut stdin = child.stdin.take()?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("ModuleNotFoundError") {
            return None;
        }
        panic!("python failed: {err}");
    }
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn python_repr_matches_python() {
    if reference_dir().is_none() {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    }
    let xs = doubles(cases(200_000));
    let script = "import sys, struct\nfor line in sys.stdin:\n    x = struct.unpack('>d', bytes.fromhex(line.strip()))[0]\n    sys.stdout.write(repr(x) + '\\n')\n";
    let want = python_lines(script, &xs).expect("python3 runs");
    assert_eq!(want.len(), xs.len());
    let mut got = String::new();
    for (x, want) in xs.iter().zip(&want) {
        got.clear();
        python_float_repr(*x, &mut got);
        assert_eq!(&got, want, "bits {:016x}", x.to_bits());
    }
}

#[test]
fn es_form_matches_rfc8785_package() {
    if reference_dir().is_none() {
        eprintln!("skipping: python3 or the reference scripts are missing");
        return;
    }
    let xs = doubles(cases(200_000));
    let script = "import sys, struct, rfc8785\nfor line in sys.stdin:\n    x = struct.unpack('>d', bytes.fromhex(line.strip()))[0]\n    sys.stdout.write(rfc8785.dumps(x).decode() + '\\n')\n";
    let Some(want) = python_lines(script, &xs) else {
        eprintln!("skipping: the python module rfc8785 is missing (pip install rfc8785)");
        return;
    };
    let mut got = String::new();
    for (x, want) in xs.iter().zip(&want) {
        got.clear();
        assert!(es_number(*x, &mut got));
        assert_eq!(&got, want, "bits {:016x}", x.to_bits());
    }
}
