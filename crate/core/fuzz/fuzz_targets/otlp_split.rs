//! The OTLP endpoint's JSON split on hostile requests: the input spliced into a request
//! holding a tool span, a model call and an agent span, at a place the first byte picks
//! (and the input alone). No panic, and whenever a request is accepted: every tool span is
//! held once, the forwarded rest holds exactly the spans not held, each held request is one
//! tool span that annotates and merges into requests that read the same way. The
//! protobuf writer (`--upstream-protobuf`) runs on every input too: no panic, and what it
//! writes for an accepted request splits as protobuf into the same counts.
#![no_main]

#[path = "../common/split.rs"]
mod split;

use libfuzzer_sys::fuzz_target;
use split::{holds, REQUEST};
use toolslice::pipeline::{json_to_protobuf, split_export, Encoding};

/// The split's invariants, and the protobuf writer's: what it writes for an accepted request
/// splits as protobuf into the same counts.
fn both(body: &[u8]) {
    let written = json_to_protobuf(body);
    let Some(split) = holds(body, Encoding::Json) else {
        return;
    };
    if let Ok(pb) = written {
        let again = split_export(&pb, Encoding::Protobuf).expect("the protobuf written reads");
        assert_eq!((again.spans, again.tools, again.models), (split.spans, split.tools, split.models));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&at, input)) = data.split_first() else {
        return;
    };
    // A place after a structural byte of the request, so the input lands between tokens.
    let places: Vec<usize> = REQUEST
        .bytes()
        .enumerate()
        .filter(|(_, b)| matches!(b, b'{' | b'[' | b','))
        .map(|(i, _)| i + 1)
        .collect();
    let cut = places[usize::from(at) % places.len()];
    let mut body = REQUEST.as_bytes()[..cut].to_vec();
    body.extend_from_slice(input);
    body.extend_from_slice(&REQUEST.as_bytes()[cut..]);
    both(&body);
    both(input);
});
