//! JSON Schema handling: dialect selection, bounds, and compiled validators.
//!
//! Spec: basic/index.mdx#json-schema-usage — schemas without `$schema` are
//! 2020-12; draft-07 is honoured when declared; other dialects are refused
//! when a tool is registered. A `$ref` is never fetched over the network.

mod simple;

use jsonschema::{Draft, Retrieve, Uri, Validator};
use serde_json::Value;
use simple::{At, Dialect, Failure, FirstFailure, Flow, Simple, Sink};
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// Largest schema accepted, in bytes of compact JSON (named in
/// [`SchemaError::TooLarge`]'s docs: keep them in step).
pub(crate) const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Deepest schema accepted, in nested arrays and objects (named in
/// [`SchemaError::TooDeep`]'s docs: keep them in step).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;
/// At most this many validation errors are reported back to the model.
const MAX_REPORTED_ERRORS: usize = 8;

/// Why a schema could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not a JSON object.
    #[error("schema must be a JSON object")]
    NotAnObject,
    /// `$schema` names a dialect other than 2020-12 or draft-07.
    #[error("unsupported JSON Schema dialect {0:?}: use 2020-12 (the default) or draft-07")]
    UnsupportedDialect(String),
    /// The schema is larger than 256 KiB of compact JSON (the field is its
    /// size in bytes).
    #[error("schema is {0} bytes, more than the limit of {MAX_SCHEMA_BYTES}")]
    TooLarge(usize),
    /// The schema nests deeper than 64 levels of arrays and objects.
    #[error("schema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
    /// The schema does not compile (invalid keyword values, unresolvable `$ref`, ...).
    #[error("invalid schema: {0}")]
    Invalid(String),
}

/// Refuses every external reference: schemas are resolved only against themselves.
struct NoRemoteRefs;

impl Retrieve for NoRemoteRefs {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external $ref {uri} is never fetched").into())
    }
}

fn depth(v: &Value) -> usize {
    // Iterative, so a hostile schema cannot exhaust the stack here.
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if d > MAX_SCHEMA_DEPTH {
            return d;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

fn dialect(schema: &serde_json::Map<String, Value>) -> Result<Draft, SchemaError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let Some(uri) = uri.as_str() else {
        return Err(SchemaError::UnsupportedDialect(uri.to_string()));
    };
    let bare = uri.trim_end_matches('#');
    let bare = bare
        .strip_prefix("https://")
        .or_else(|| bare.strip_prefix("http://"))
        .unwrap_or(bare);
    match bare {
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        _ => Err(SchemaError::UnsupportedDialect(uri.to_owned())),
    }
}

/// A schema compiled once, used for every call.
///
/// Schemas that stay within the small keyword subset plain schemars types use
/// run on the built-in validator (`simple`), which gives the same verdicts and
/// the same error text as jsonschema; everything else runs on jsonschema. Most
/// servers then never touch jsonschema's (large) code at all.
pub(crate) struct CompiledSchema {
    engine: Engine,
}

enum Engine {
    Builtin(Simple),
    Jsonschema(Box<Validator>),
}

/// Which engine a [`CompiledSchema`] runs on.
#[cfg(any(test, feature = "fuzzing"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineKind {
    Builtin,
    Jsonschema,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    /// Checks bounds and dialect, then compiles `schema`: with the built-in
    /// validator if it can take the whole schema, otherwise with jsonschema
    /// (which also reports invalid schemas).
    pub(crate) fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let draft = admit(schema)?;
        let dialect = match draft {
            Draft::Draft7 => Dialect::Draft7,
            _ => Dialect::Draft202012,
        };
        if let Some(simple) = Simple::compile(schema, dialect) {
            return Ok(Self {
                engine: Engine::Builtin(simple),
            });
        }
        Self::with_jsonschema(schema, draft)
    }

    fn with_jsonschema(schema: &Value, draft: Draft) -> Result<Self, SchemaError> {
        let validator = jsonschema::options()
            .with_draft(draft)
            .with_retriever(NoRemoteRefs)
            .build(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self {
            engine: Engine::Jsonschema(Box::new(validator)),
        })
    }

    /// Compiles like [`compile`](Self::compile), but always with jsonschema:
    /// the reference the built-in validator is compared against.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn compile_with_jsonschema(schema: &Value) -> Result<Self, SchemaError> {
        let draft = admit(schema)?;
        Self::with_jsonschema(schema, draft)
    }

    /// The engine this schema runs on.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn engine(&self) -> EngineKind {
        match self.engine {
            Engine::Builtin(_) => EngineKind::Builtin,
            Engine::Jsonschema(_) => EngineKind::Jsonschema,
        }
    }

    /// `Ok` when `instance` is valid; otherwise a description of what is wrong,
    /// written for the model that produced the instance.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        match &self.engine {
            Engine::Builtin(simple) => {
                if simple::walk(simple.root(), instance, &At::Root, &mut FirstFailure).is_continue()
                {
                    return Ok(());
                }
                let mut report = Report::default();
                let _ = simple::walk(simple.root(), instance, &At::Root, &mut report);
                Err(report.out)
            }
            Engine::Jsonschema(validator) => {
                if validator.is_valid(instance) {
                    return Ok(());
                }
                let mut report = Report::default();
                for e in validator.iter_errors(instance) {
                    if report.push(e.instance_path(), &e).is_break() {
                        break;
                    }
                }
                Err(report.out)
            }
        }
    }
}

/// The bounds and dialect checks every schema passes first.
fn admit(schema: &Value) -> Result<Draft, SchemaError> {
    let obj = schema.as_object().ok_or(SchemaError::NotAnObject)?;
    let size = serde_json::to_vec(schema)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_SCHEMA_BYTES {
        return Err(SchemaError::TooLarge(size));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    dialect(obj)
}

/// The error text both engines produce: one `\n- at {path}: {message}` line
/// per error (`(root)` for the root), at most [`MAX_REPORTED_ERRORS`], then a
/// line saying more were left out.
#[derive(Default)]
struct Report {
    out: String,
    count: usize,
}

impl Report {
    /// Adds one error; `Break` once the report is full.
    fn push(&mut self, path: impl std::fmt::Display, message: impl std::fmt::Display) -> Flow {
        if self.count == MAX_REPORTED_ERRORS {
            self.out.push_str("\n- (more errors omitted)");
            return ControlFlow::Break(());
        }
        self.count += 1;
        self.out.push_str("\n- at ");
        let before = self.out.len();
        let _ = write!(self.out, "{path}");
        if self.out.len() == before {
            self.out.push_str("(root)");
        }
        let _ = write!(self.out, ": {message}");
        ControlFlow::Continue(())
    }
}

impl Sink for Report {
    const REPORT: bool = true;

    fn fail(&mut self, at: &At<'_>, failure: Failure<'_>) -> Flow {
        self.push(at, failure)
    }
}

#[cfg(test)]
mod tests;
