//! Multi-line and long secrets through the bounded-memory stream (issue 13, item 3): a key
//! block longer than the stream holds is redacted whole, wherever the chunks fall, exactly
//! as whole-text redaction does; and every secret split at every byte offset stays hidden.

mod common;

use common::{Draw, Rng};
use toolslice::redact::{RedactStream, Redactor};

/// A PGP private key block of about `bytes` bytes: 64-character base64 lines.
fn pgp_block(bytes: usize, rng: &mut Rng) -> (String, Vec<String>) {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut lines = Vec::new();
    let mut t = String::from("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n");
    while t.len() < bytes {
        let line: String = (0..64)
            .map(|_| B64[rng.below(64) as usize] as char)
            .collect();
        t.push_str(&line);
        t.push('\n');
        lines.push(line);
    }
    t.push_str("=Qx9A\n-----END PGP PRIVATE KEY BLOCK-----\n");
    (t, lines)
}

fn stream(text: &[u8], cuts: &[usize]) -> String {
    let mut s = RedactStream::new(Redactor::default());
    let mut out = Vec::new();
    let mut at = 0;
    for &c in cuts.iter().chain([text.len()].iter()) {
        s.push(&text[at..c], &mut out);
        at = c;
    }
    s.finish(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn a_long_key_block_is_redacted_whole_wherever_the_chunks_fall() {
    let mut rng = Rng::new(13);
    let (block, lines) = pgp_block(1_300_000, &mut rng);
    let text = format!("gpg --export-secret-keys\n{block}done\nnext line\n");
    let whole = Redactor::default().text(&text).text;
    assert_eq!(
        whole,
        "gpg --export-secret-keys\n[REDACTED:private_key]\ndone\nnext line\n"
    );
    let end = text.find("-----END").unwrap();
    let begin = text.find("-----BEGIN").unwrap();
    // One cut at every offset around the BEGIN and END markers, and fixed chunk sizes.
    let mut cut_sets: Vec<Vec<usize>> = Vec::new();
    for at in (begin.saturating_sub(3)..begin + 12).chain(end - 12..end + 48) {
        cut_sets.push(vec![at]);
    }
    for size in [1usize << 10, 4093, 65536, 1 << 20] {
        cut_sets.push(
            (1..text.len() / size + 1)
                .map(|k| k * size)
                .filter(|&c| c < text.len())
                .collect(),
        );
    }
    for cuts in cut_sets {
        let out = stream(text.as_bytes(), &cuts);
        assert_eq!(out, whole, "cuts {:?}", &cuts[..cuts.len().min(3)]);
        for l in lines.iter().step_by(97) {
            assert!(!out.contains(l.as_str()));
        }
    }
}

#[test]
fn a_key_block_without_its_end_is_redacted_to_the_end() {
    let mut rng = Rng::new(14);
    let (block, lines) = pgp_block(1_200_000, &mut rng);
    let cut = &block[..block.find("=Qx9A").unwrap()];
    let text = format!("key:\n{cut}");
    let out = stream(text.as_bytes(), &[100, 70_000, 1_100_000]);
    assert_eq!(out, "key:\n[REDACTED:private_key]");
    assert!(!out.contains(&lines[lines.len() - 1]));
}

#[test]
fn every_secret_split_at_every_offset_stays_hidden() {
    let secrets = [
        ("export GITHUB_TOKEN=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\n", "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
        ("curl -H \"Authorization: Bearer ya29.A0ARrdaM-k9Xq2Lm7Pz\" x\n", "ya29.A0ARrdaM-k9Xq2Lm7Pz"),
        ("git push https://deploy:ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8@github.com/a/b\n", "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"),
        ("PGPASSWORD=Zq8mW2vR7 psql\n", "Zq8mW2vR7"),
        ("mysql -uroot -pS3cr3tPw app\n", "S3cr3tPw"),
        ("{\"password\": [\"hunter22xyz\"]}\n", "hunter22xyz"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\nQk9xZ\n-----END RSA PRIVATE KEY-----\n", "MIIEpAIBAAKCAQEA7bq"),
    ];
    for (line, secret) in secrets {
        let text = format!("first line\n{line}last line\n");
        let whole = Redactor::default().text(&text).text;
        assert!(!whole.contains(secret), "{whole}");
        for at in 0..=text.len() {
            assert_eq!(
                stream(text.as_bytes(), &[at]),
                whole,
                "{line:?} cut at {at}"
            );
        }
    }
}
