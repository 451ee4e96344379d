//! What the client knows about the server's tools: the `x-mcp-header`
//! parameters to mirror, the compiled output schema, and which tools were
//! rejected and why.
//!
//! Every `tools/list` page the client fetches passes through
//! [`ToolIndex::admit`], which drops tools whose `x-mcp-header` annotations
//! break a rule, or whose `outputSchema` the client cannot use (another
//! dialect, a network `$ref`, which is never fetched), with a `tracing`
//! warning naming the tool and the reason, and remembers the others. A
//! dropped tool is never called: deciding at list time keeps a tool with
//! side effects from running only for its result to be refused.
//! Spec: basic/index.mdx#ref-resolution — a schema with an unresolved
//! external `$ref` SHOULD be rejected rather than treated as permissive.
//!
//! Spec: server/tools.mdx#x-mcp-header

use crate::schema::CompiledSchema;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use toolwire_proto::header::{
    HeaderParam, ParamValueError, lookup_path, param_header_value, validate_x_mcp_headers,
};
use toolwire_proto::types::Tool;

/// One admitted tool.
#[derive(Debug)]
pub(crate) struct KnownTool {
    pub(crate) definition: Tool,
    pub(crate) headers: Vec<HeaderParam>,
    /// Compiled when the tool is admitted (always `Ok`: a tool whose schema
    /// cannot be used is not admitted).
    output: OnceLock<Result<CompiledSchema, String>>,
}

impl KnownTool {
    /// The compiled output schema, if the tool has one.
    pub(crate) fn output_schema(&self) -> Option<&Result<CompiledSchema, String>> {
        let schema = self.definition.output_schema.as_ref()?;
        Some(self.output.get_or_init(|| {
            CompiledSchema::compile(&Value::Object(schema.clone())).map_err(|e| e.to_string())
        }))
    }

    /// Refuses arguments whose annotated integer is outside ±(2^53 − 1):
    /// such a value cannot be mirrored, and the server would refuse the
    /// call. Returns the parameter's path and why.
    // Spec: basic/transports/streamable-http.mdx#schema-extension — integer
    // values MUST be within the safe range for JavaScript.
    pub(crate) fn check_arguments(&self, arguments: &Value) -> Result<(), (String, String)> {
        for param in &self.headers {
            let Some(value) = lookup_path(arguments, &param.path) else {
                continue;
            };
            if let Err(e @ ParamValueError::IntegerOutOfRange { .. }) =
                param_header_value(value, param.kind)
            {
                return Err((param.path.join("."), e.to_string()));
            }
        }
        Ok(())
    }

    /// The `Mcp-Param-*` headers for a call with `arguments`: one per
    /// annotated parameter whose value is present and not `null`.
    ///
    /// A value of the wrong type for its annotation cannot be mirrored; it
    /// is sent without a header and the server judges the call.
    // Spec: basic/transports/streamable-http.mdx#client-behavior
    pub(crate) fn param_headers(&self, arguments: &Value) -> Vec<(String, String)> {
        self.headers
            .iter()
            .filter_map(|param| {
                let value = lookup_path(arguments, &param.path)?;
                match param_header_value(value, param.kind) {
                    Ok(Some(text)) => Some((param.header_name(), text)),
                    Ok(None) => None,
                    Err(e) => {
                        tracing::warn!(
                            "not mirroring {} of tool {:?}: {e}",
                            param.header_name(),
                            self.definition.name
                        );
                        None
                    }
                }
            })
            .collect()
    }
}

#[derive(Debug, Default)]
struct State {
    known: HashMap<String, Arc<KnownTool>>,
    rejected: HashMap<String, String>,
}

/// Tools seen in `tools/list` results.
#[derive(Debug, Default)]
pub(crate) struct ToolIndex {
    state: Mutex<State>,
}

/// What the index says about a tool name.
pub(crate) enum Lookup {
    Known(Arc<KnownTool>),
    Rejected(String),
    Unknown,
}

impl ToolIndex {
    /// Checks a page of tools: keeps the valid ones (and remembers them),
    /// drops and reports the invalid ones.
    pub(crate) fn admit(&self, tools: Vec<Tool>) -> Vec<Tool> {
        let Ok(mut state) = self.state.lock() else {
            return tools;
        };
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            let schema = Value::Object(tool.input_schema.clone());
            // Spec: basic/transports/streamable-http.mdx#schema-extension —
            // exclude the tool and log a warning naming it and the reason.
            let admitted = validate_x_mcp_headers(&schema)
                .map_err(|e| e.to_string())
                .and_then(|headers| {
                    let known = KnownTool {
                        definition: tool.clone(),
                        headers,
                        output: OnceLock::new(),
                    };
                    match known.output_schema() {
                        Some(Err(e)) => Err(format!("its outputSchema cannot be used: {e}")),
                        _ => Ok(known),
                    }
                });
            match admitted {
                Ok(known) => {
                    state.rejected.remove(&tool.name);
                    state.known.insert(tool.name.clone(), Arc::new(known));
                    kept.push(tool);
                }
                Err(reason) => {
                    tracing::warn!("rejecting tool {:?}: {reason}", tool.name);
                    state.known.remove(&tool.name);
                    state.rejected.insert(tool.name, reason);
                }
            }
        }
        kept
    }

    pub(crate) fn lookup(&self, name: &str) -> Lookup {
        let Ok(state) = self.state.lock() else {
            return Lookup::Unknown;
        };
        if let Some(t) = state.known.get(name) {
            Lookup::Known(Arc::clone(t))
        } else if let Some(reason) = state.rejected.get(name) {
            Lookup::Rejected(reason.clone())
        } else {
            Lookup::Unknown
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": schema})).expect("tool")
    }

    #[test]
    fn invalid_annotations_are_dropped_and_valid_ones_kept() {
        let index = ToolIndex::default();
        let kept = index.admit(vec![
            tool(
                "ok",
                json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
            ),
            tool(
                "bad",
                json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
            ),
        ]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name, "ok");
        assert!(matches!(index.lookup("ok"), Lookup::Known(_)));
        let Lookup::Rejected(reason) = index.lookup("bad") else {
            panic!("bad must be rejected")
        };
        assert!(reason.contains("number"), "{reason}");
        assert!(matches!(index.lookup("other"), Lookup::Unknown));
    }

    #[test]
    fn param_headers_follow_the_encoding_rules() {
        let index = ToolIndex::default();
        index.admit(vec![tool(
            "t",
            json!({"type": "object", "properties": {
                "s": {"type": "string", "x-mcp-header": "S"},
                "i": {"type": "integer", "x-mcp-header": "I"},
                "b": {"type": "boolean", "x-mcp-header": "B"},
                "e": {"type": "string", "x-mcp-header": "E"},
                "n": {"type": "string", "x-mcp-header": "N"},
                "u": {"type": "string", "x-mcp-header": "U"},
                "nested": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
                "plain": {"type": "string"}
            }}),
        )]);
        let Lookup::Known(t) = index.lookup("t") else {
            panic!("known")
        };
        let mut headers = t.param_headers(&json!({
            "s": "Hello, 世界", "i": -7, "b": false, "e": "", "n": null,
            "nested": {"deep": "=?base64?x?="}, "plain": "p"
        }));
        headers.sort();
        assert_eq!(
            headers,
            [
                ("Mcp-Param-B".to_owned(), "false".to_owned()),
                (
                    "Mcp-Param-Deep".to_owned(),
                    "=?base64?PT9iYXNlNjQ/eD89?=".to_owned()
                ),
                ("Mcp-Param-E".to_owned(), String::new()),
                ("Mcp-Param-I".to_owned(), "-7".to_owned()),
                (
                    "Mcp-Param-S".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                ),
            ]
        );
    }
}
