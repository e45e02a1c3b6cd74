//! The OTLP endpoint's protobuf split on hostile requests: the input spliced into a valid
//! protobuf request (written from a JSON request holding a tool span, a model call and an
//! agent span) at a byte the first input byte picks, and the input alone. No panic, and
//! whenever a request is accepted: every tool span is held once, the forwarded rest holds
//! exactly the spans not held, each held request is one tool span that annotates and merges
//! into requests that read the same way.
#![no_main]

#[path = "../common/split.rs"]
mod split;

use libfuzzer_sys::fuzz_target;
use split::{holds, REQUEST};
use std::sync::OnceLock;
use toolslice::pipeline::{json_to_protobuf, Encoding};

fn request() -> &'static [u8] {
    static PB: OnceLock<Vec<u8>> = OnceLock::new();
    PB.get_or_init(|| json_to_protobuf(REQUEST.as_bytes()).expect("the request writes as protobuf"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&at, input)) = data.split_first() else {
        return;
    };
    let request = request();
    // Any byte position of the valid request, its end included: the input may land inside a
    // tag, a length or a nested message, which then reads it as its own bytes.
    let cut = usize::from(at) * request.len() / 255;
    let mut body = request[..cut].to_vec();
    body.extend_from_slice(input);
    body.extend_from_slice(&request[cut..]);
    holds(&body, Encoding::Protobuf);
    holds(input, Encoding::Protobuf);
});
