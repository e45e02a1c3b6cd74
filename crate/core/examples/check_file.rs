// scratch: prints the JSON report of a file (not committed)
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&path).unwrap();
    let r = toolslice::check::check_bytes(&data, toolslice::check::CheckOptions::default());
    println!("{}", toolslice::check::render::json(&r));
}
