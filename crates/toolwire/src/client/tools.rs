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
    /// The input's property names in the order the server wrote them.
    pub(crate) property_order: Option<Box<[String]>>,
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
    pub(crate) fn admit(&self, tools: Vec<Tool>, mut orders: PropertyOrders) -> Vec<Tool> {
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
                        property_order: orders.remove(&tool.name),
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

/// The order of each listed tool's `inputSchema.properties`, by tool name.
pub(crate) type PropertyOrders = HashMap<String, Box<[String]>>;

/// Reads the order the server wrote each tool's input properties in from a
/// `tools/list` result as sent (a parsed `Value` has them sorted). Best
/// effort: a result this cannot read gives no orders.
pub(crate) fn property_orders(result: &str) -> PropertyOrders {
    use serde::Deserialize;
    use serde::de::{IgnoredAny, MapAccess, Visitor};

    #[derive(Deserialize)]
    struct Page {
        #[serde(default)]
        tools: Vec<Entry>,
    }
    #[derive(Deserialize)]
    struct Entry {
        name: String,
        #[serde(rename = "inputSchema")]
        input_schema: Option<Schema>,
    }
    #[derive(Deserialize)]
    struct Schema {
        properties: Option<Keys>,
    }
    struct Keys(Vec<String>);
    impl<'de> Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Names;
            impl<'de> Visitor<'de> for Names {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                    let mut names = Vec::new();
                    while let Some(name) = map.next_key::<String>()? {
                        map.next_value::<IgnoredAny>()?;
                        names.push(name);
                    }
                    Ok(Keys(names))
                }
            }
            d.deserialize_map(Names)
        }
    }

    let Ok(page) = serde_json::from_str::<Page>(result) else {
        return PropertyOrders::new();
    };
    page.tools
        .into_iter()
        .filter_map(|t| Some((t.name, t.input_schema?.properties?.0.into_boxed_slice())))
        .collect()
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
        ], PropertyOrders::new());
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
        )], PropertyOrders::new());
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

    #[test]
    fn property_orders_are_read_as_the_server_wrote_them() {
        let orders = property_orders(
            r#"{"tools": [
                {"name": "t", "inputSchema": {"properties": {"z": {"type": "string"}, "a": {"properties": {"y": 1, "b": 2}}}}},
                {"name": "u", "inputSchema": {"type": "object"}},
                {"name": "v", "inputSchema": {"properties": {}}}
            ], "nextCursor": "c"}"#,
        );
        assert_eq!(orders.len(), 2);
        assert_eq!(&*orders["t"], ["z", "a"]);
        assert!(orders["v"].is_empty());
        assert!(property_orders(r#"{"tools": [1]}"#).is_empty());
        assert!(property_orders("not json").is_empty());
    }
}
