//! The pager's schema: the `get_more` tool definition an agent registers as it is.
//!
//! Seed 004: "If get_logs can exceed the cap, get_more or get_page must exist on the same
//! allowlist". The packer's hint names `get_more(id="...", offset=N)`; this module is the
//! one place that says what that tool takes, in the three shapes agents register tools in:
//! an MCP tool (`tools/list`), an OpenAI function tool (Chat Completions `tools`) and an
//! Anthropic tool (Messages API `tools`). The arguments are the hint's arguments, so a model
//! that copies the hint makes a valid call.

use serde_json::{json, Value};

use super::GET_MORE;

/// The tool's description, as the model reads it.
pub const DESCRIPTION: &str = "Read the next page of a tool result that was cut to fit the \
context. A cut result ends with a marker or hint naming get_more(id=\"...\", offset=N): call \
this tool with exactly that id and offset. Each page ends by naming the offset of the next \
one; the last page names none.";

/// The shapes [`definition`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{name, description, inputSchema}`: an entry of MCP's `tools/list` result.
    Mcp,
    /// `{type: "function", function: {name, description, parameters, strict}}`.
    OpenAi,
    /// `{name, description, input_schema}`.
    Anthropic,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Mcp, Format::OpenAi, Format::Anthropic];

    pub fn name(self) -> &'static str {
        match self {
            Format::Mcp => "mcp",
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// The JSON Schema of the arguments: both required, no others (so OpenAI's strict mode
/// accepts it unchanged).
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "description": "The id named in the hint of the cut result (the tool call's id)."
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "The byte offset named in the hint or in the previous page's last line."
            }
        },
        "required": ["id", "offset"],
        "additionalProperties": false
    })
}

/// The `get_more` tool definition in `format`.
pub fn definition(format: Format) -> Value {
    match format {
        Format::Mcp => json!({
            "name": GET_MORE,
            "title": "Read the next page of a cut tool result",
            "description": DESCRIPTION,
            "inputSchema": input_schema(),
            "annotations": {
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false
            }
        }),
        Format::OpenAi => json!({
            "type": "function",
            "function": {
                "name": GET_MORE,
                "description": DESCRIPTION,
                "parameters": input_schema(),
                "strict": true
            }
        }),
        Format::Anthropic => json!({
            "name": GET_MORE,
            "description": DESCRIPTION,
            "input_schema": input_schema()
        }),
    }
}

/// The arguments of a `get_more` call, checked: `(id, offset)`, or a message naming the
/// argument that is missing or wrong (the model reads it as the tool's error).
pub fn arguments(args: Option<&Value>) -> Result<(String, u64), String> {
    let obj = match args {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => {
            return Err(format!(
                "{GET_MORE} needs arguments {{\"id\": string, \"offset\": integer >= 0}}"
            ))
        }
        Some(_) => return Err(format!("{GET_MORE}: arguments must be an object")),
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(format!("{GET_MORE}: id must not be empty")),
        Some(_) => return Err(format!("{GET_MORE}: id must be a string")),
        None => return Err(format!("{GET_MORE}: missing argument id")),
    };
    let offset = match obj.get("offset") {
        Some(v) => v
            .as_u64()
            .or_else(|| {
                // Models sometimes write 4096.0 or "4096"; both name the same offset.
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                    .map(|f| f as u64)
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            })
            .ok_or_else(|| format!("{GET_MORE}: offset must be an integer >= 0, got {v}"))?,
        None => return Err(format!("{GET_MORE}: missing argument offset")),
    };
    if let Some(extra) = obj.keys().find(|k| *k != "id" && *k != "offset") {
        return Err(format!("{GET_MORE}: unknown argument {extra:?}"));
    }
    Ok((id, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_shapes_share_one_schema() {
        let mcp = definition(Format::Mcp);
        let openai = definition(Format::OpenAi);
        let anthropic = definition(Format::Anthropic);
        assert_eq!(mcp["name"], "get_more");
        assert_eq!(mcp["inputSchema"], input_schema());
        assert_eq!(openai["type"], "function");
        assert_eq!(openai["function"]["name"], "get_more");
        assert_eq!(openai["function"]["parameters"], input_schema());
        assert_eq!(anthropic["input_schema"], input_schema());
        assert_eq!(anthropic["name"], "get_more");
        // OpenAI strict mode: every property required, no additional ones.
        let schema = input_schema();
        let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(props.len(), required.len());
        assert_eq!(schema["additionalProperties"], false);
        for f in Format::ALL {
            assert_eq!(Format::parse(f.name()), Some(f));
        }
        assert_eq!(Format::parse("gemini"), None);
    }

    #[test]
    fn the_hint_arguments_parse() {
        let ok = |v: Value| arguments(Some(&v));
        assert_eq!(
            ok(json!({"id": "c1", "offset": 4096})),
            Ok(("c1".into(), 4096))
        );
        assert_eq!(
            ok(json!({"id": "c1", "offset": 4096.0})),
            Ok(("c1".into(), 4096))
        );
        assert_eq!(
            ok(json!({"id": "c1", "offset": "12"})),
            Ok(("c1".into(), 12))
        );
        assert!(ok(json!({"id": "c1"})).unwrap_err().contains("offset"));
        assert!(ok(json!({"offset": 1})).unwrap_err().contains("id"));
        assert!(ok(json!({"id": 3, "offset": 1}))
            .unwrap_err()
            .contains("id must be a string"));
        assert!(ok(json!({"id": "c", "offset": -1}))
            .unwrap_err()
            .contains("offset"));
        assert!(ok(json!({"id": "c", "offset": 1, "x": 2}))
            .unwrap_err()
            .contains("\"x\""));
        assert!(arguments(None).unwrap_err().contains("needs arguments"));
    }
}
