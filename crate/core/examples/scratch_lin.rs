use std::time::Instant;
use toolslice::redact::{RedactStream, Redactor};
fn main() {
    let r = Redactor::default();
    let pats = [
        "Cookie: ",
        "Authorization: ",
        "password=",
        "\"password\": {",
        "password: [",
        "-p",
        "--password ",
        "data:;base64,",
        "PGPASSWORD=",
        ":password => ",
    ];
    for p in pats {
        let mut line = vec![];
        for n in [100_000usize, 200_000, 400_000] {
            let t = p.repeat(n / p.len());
            let s = Instant::now();
            let o = r.text(&t);
            let a = s.elapsed();
            let s2 = Instant::now();
            let mut st = RedactStream::new(r.clone());
            let mut out = vec![];
            for c in t.as_bytes().chunks(65536) {
                st.push(c, &mut out);
            }
            st.finish(&mut out);
            line.push(format!(
                "{n}: {:?} stream {:?} ({})",
                a,
                s2.elapsed(),
                o.receipts.len()
            ));
        }
        println!("{p:?} {}", line.join(" | "));
    }
}
