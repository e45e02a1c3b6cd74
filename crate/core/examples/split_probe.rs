use toolslice::pipeline::{split_export_for, Encoding};
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let input = std::fs::read(&args[0]).unwrap();
    let rounds: usize = args[1].parse().unwrap();
    let mut tools = 0;
    let (mut same, mut n, mut pbytes, mut held, mut hbytes, mut traces) = (0, 0, 0, 0, 0, 0);
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let (s, _) = split_export_for(line, Encoding::Json, false).unwrap();
            tools += s.tools;
            n += 1;
            if s.passthrough.as_deref() == Some(line) {
                same += 1;
            }
            pbytes += s.passthrough.as_ref().map_or(0, |p| p.len());
            traces += s.traces.len();
            for t in &s.traces {
                held += t.held.len();
                hbytes += t.held.iter().map(|h| h.body.len()).sum::<usize>();
            }
        }
        eprintln!("{:?}", t.elapsed());
    }
    println!("tools {tools} requests {n} whole-body passthrough {same} passthrough bytes {pbytes} traces {traces} held {held} held bytes {hbytes} input {}", input.len() * rounds);
}
