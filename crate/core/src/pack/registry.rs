//! The tool registry: each tool declares its kind and its maximum observation size
//! (seed 004: "When you add a tool, declare its max observation size. Logs tools are the
//! usual offenders. Default small. Raise with a pager, not with a hope.").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The kind of output a tool produces; it chooses the cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Command output with an exit code.
    Terminal,
    /// Ranked results or a listing.
    Search,
    /// A file read.
    File,
    /// Structured output.
    Json,
    /// Anything else: head and tail.
    Text,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Terminal => "terminal",
            Kind::Search => "search",
            Kind::File => "file",
            Kind::Json => "json",
            Kind::Text => "text",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        [
            Kind::Terminal,
            Kind::Search,
            Kind::File,
            Kind::Json,
            Kind::Text,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// The observation budget of tools nobody registered: small, on purpose.
pub const DEFAULT_MAX_BYTES: usize = 4096;

/// What a tool declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolSpec {
    /// `None`: chosen from the tool's name, else by sniffing the content.
    pub kind: Option<Kind>,
    /// The largest observation, in bytes, marker and header included.
    pub max_bytes: usize,
    /// Page size for `get_more`; defaults to `max_bytes`.
    pub page_bytes: Option<usize>,
    /// Whether `get_more` is on the agent's allowlist. When it is not, a result that does
    /// not fit is an error ("result too large, narrow the query"), never a silent prefix.
    pub pageable: bool,
}

impl Default for ToolSpec {
    fn default() -> Self {
        ToolSpec {
            kind: None,
            max_bytes: DEFAULT_MAX_BYTES,
            page_bytes: None,
            pageable: true,
        }
    }
}

impl ToolSpec {
    pub fn page_bytes(&self) -> usize {
        self.page_bytes.unwrap_or(self.max_bytes).max(1)
    }
}

/// Tools by name, and the spec of every other tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Registry {
    pub tools: BTreeMap<String, ToolSpec>,
    /// For tools not in `tools`.
    pub default: ToolSpec,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Declares (or redeclares) a tool.
    pub fn register(&mut self, name: &str, spec: ToolSpec) -> &mut Registry {
        self.tools.insert(name.to_string(), spec);
        self
    }

    /// The spec of `name`: its own, or the default.
    pub fn spec(&self, name: &str) -> &ToolSpec {
        self.tools.get(name).unwrap_or(&self.default)
    }

    pub fn is_registered(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tools_get_the_small_default() {
        let mut r = Registry::new();
        r.register(
            "get_logs",
            ToolSpec {
                kind: Some(Kind::Terminal),
                max_bytes: 8192,
                page_bytes: Some(4096),
                pageable: true,
            },
        );
        assert_eq!(r.spec("get_logs").max_bytes, 8192);
        assert_eq!(r.spec("get_logs").page_bytes(), 4096);
        assert_eq!(r.spec("whatever").max_bytes, DEFAULT_MAX_BYTES);
        assert!(!r.is_registered("whatever"));
        let json =
            r#"{"tools":{"ls":{"kind":"search","max_bytes":2000}},"default":{"max_bytes":1000}}"#;
        let r: Registry = serde_json::from_str(json).unwrap();
        assert_eq!(r.spec("ls").kind, Some(Kind::Search));
        assert_eq!(r.spec("cat").max_bytes, 1000);
        assert_eq!(Kind::parse("terminal"), Some(Kind::Terminal));
    }
}
