//! What kind of body a tool's raw output is, when the caller does not say: the decision the
//! CLI (`toolslice pack` on stdin) and the page used to make apiece in JavaScript, where
//! `JSON.parse` rounds integers above 2^53. Here serde_json reads the text, so every
//! 64-bit integer survives exactly, and every front end takes the same path for the same text.

use super::Body;

impl Body {
    /// `Json` when the whole text is one JSON value (surrounding whitespace allowed), else
    /// `Text`, unchanged.
    pub fn sniff(text: String) -> Body {
        match serde_json::from_str(&text) {
            Ok(value) => Body::Json(value),
            Err(_) => Body::Text(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_when_the_whole_text_is_json() {
        assert_eq!(
            Body::sniff(" {\"a\": [1, 2]}\n".into()),
            Body::Json(json!({"a": [1, 2]}))
        );
        assert_eq!(Body::sniff("42".into()), Body::Json(json!(42)));
        // Above 2^53: JSON.parse would give 9007199254740992.
        match Body::sniff("{\"id\": 9007199254740993}".into()) {
            Body::Json(v) => assert_eq!(v["id"].as_u64(), Some(9_007_199_254_740_993)),
            other => panic!("{other:?}"),
        }
        for text in ["", "ok\n", "{\"a\": 1} trailing", "[1,"] {
            assert_eq!(
                Body::sniff(text.into()),
                Body::Text(text.into()),
                "{text:?}"
            );
        }
    }
}
