//! Hash keys an input cannot know, for the maps the core builds from its input.
//!
//! std's `RandomState` has no entropy source on wasm32-unknown-unknown: every instance of
//! the module starts from the same SipHash keys (the same key hashes the same in every
//! process), and each `RandomState::new()` on the thread takes the next key (k0 + 1).
//! serde_json's objects (indexmap, keyed by std's `RandomState`) hash the keys the input
//! brings: a request from the network at the OTLP endpoint, the JSON a tool fetched from a
//! page, a message list inside a span attribute. Keys chosen offline to fall into one bucket
//! would make each insert walk the ones before it, so one object of n such members costs n²
//! probes. Taking a random number of states at start (below 65,536, from JS's
//! `Math.random`; 0.2 ms) puts every later map on keys that no input can be prepared for.
//! Bounds the core keeps where it reads untrusted requests (the OTLP pipeline's members per
//! object) hold regardless.

use std::collections::hash_map::RandomState;

/// Moves std's hash keys on by a random number of steps. Called once, at instantiation.
pub(crate) fn unpredictable_hash_keys() {
    advance((js_sys::Math::random() * 65536.0) as u32);
}

fn advance(steps: u32) {
    for _ in 0..steps {
        // Each new state takes the thread's next keys; the state itself is not needed.
        let _ = RandomState::new();
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use wasm_bindgen_test::wasm_bindgen_test;

    use super::*;

    fn hash() -> u64 {
        RandomState::new().hash_one("resourceSpans")
    }

    /// The mechanism the seeding relies on: each step gives later maps other keys. Were std
    /// to stop moving its keys on (or to seed them itself), this says so.
    #[wasm_bindgen_test]
    fn each_step_gives_later_maps_other_keys() {
        let (a, b) = (hash(), hash());
        advance(1000);
        let c = hash();
        unpredictable_hash_keys();
        let d = hash();
        assert!(a != b && b != c && a != c, "{a:x} {b:x} {c:x}");
        assert!(d != c, "{c:x} {d:x}");
    }
}
