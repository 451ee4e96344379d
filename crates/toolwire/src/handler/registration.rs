//! [`RegistrationError`]: why a tool, prompt, resource or resource template
//! was refused, by its builder or by the server it was added to. A taken
//! name is reported one way for every kind: [`RegistrationError::Duplicate`].

use crate::schema::SchemaError;
use crate::uri_template::UriTemplateError;
use std::fmt;
use toolwire_proto::ToolNameError;
use toolwire_proto::header::XMcpHeaderError;

/// The kind of entry a [`RegistrationError::Duplicate`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A tool, by name.
    Tool,
    /// A prompt, by name.
    Prompt,
    /// A resource, by URI.
    Resource,
    /// A resource template, by URI template.
    ResourceTemplate,
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Tool => "a tool named",
            Self::Prompt => "a prompt named",
            Self::Resource => "a resource at",
            Self::ResourceTemplate => "a resource template",
        })
    }
}

/// Why a tool, prompt, resource or resource template was refused at
/// registration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The name (for a resource, the URI; for a template, the URI template)
    /// is already registered on this server.
    #[error("{kind} {name:?} is already registered")]
    Duplicate {
        /// What kind of entry.
        kind: EntryKind,
        /// The name, URI or URI template that is taken.
        name: String,
    },
    /// The name breaks the tool-name rule.
    #[error("invalid tool name {name:?}: {source}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule it broke.
        source: ToolNameError,
    },
    /// The input schema is unusable.
    #[error("tool {name:?}: invalid inputSchema: {source}")]
    InputSchema {
        /// The tool.
        name: String,
        /// Why.
        source: SchemaError,
    },
    /// The input schema does not describe an object.
    #[error("tool {name:?}: inputSchema must have \"type\": \"object\" at its root")]
    InputNotObject {
        /// The tool.
        name: String,
    },
    /// The output schema is unusable.
    #[error("tool {name:?}: invalid outputSchema: {source}")]
    OutputSchema {
        /// The tool.
        name: String,
        /// Why.
        source: SchemaError,
    },
    /// An `x-mcp-header` annotation breaks a rule.
    #[error("tool {name:?}: invalid x-mcp-header: {source}")]
    Header {
        /// The tool.
        name: String,
        /// The rule broken.
        source: XMcpHeaderError,
    },
    /// The handler has no input description.
    #[error("tool {0:?} has no input schema: call .input::<T>() or .input_schema(..)")]
    NoInputSchema(String),
    /// A prompt breaks a rule.
    #[error("prompt {name:?}: {problem}")]
    Prompt {
        /// The prompt.
        name: String,
        /// What is wrong.
        problem: PromptProblem,
    },
    /// A resource or resource template breaks a rule.
    #[error("resource {uri:?}: {problem}")]
    Resource {
        /// The URI or URI template.
        uri: String,
        /// What is wrong.
        problem: ResourceProblem,
    },
    /// A tool's interface (`_meta.ui.resourceUri`) is not a `ui://` URI,
    /// or names no registered app resource.
    #[error(
        "tool {tool:?}: its interface {uri:?} {problem}; register it first with Resource::app({uri:?}, ...)"
    )]
    ToolUi {
        /// The tool.
        tool: String,
        /// The URI it names.
        uri: String,
        /// What is wrong.
        problem: &'static str,
    },
}

/// What is wrong with a prompt refused by its builder (inside
/// [`RegistrationError::Prompt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptProblem {
    /// The name breaks the naming rule toolwire applies to prompts: the
    /// tool-name rule, so that a name is always safe in an `Mcp-Name` header.
    #[error("the name breaks the naming rule: {0}")]
    Name(ToolNameError),
    /// An argument name breaks the same rule.
    #[error("argument {argument:?} breaks the naming rule: {reason}")]
    ArgumentName {
        /// The argument.
        argument: String,
        /// The rule it broke.
        reason: ToolNameError,
    },
    /// Two arguments have the same name.
    #[error("argument {0:?} is declared twice")]
    DuplicateArgument(String),
    /// The type given to [`PromptBuilder::arguments`](crate::PromptBuilder::arguments)
    /// is not a struct whose fields are all strings (or optional strings).
    #[error(
        "the arguments type {type_name} must be a struct of String or Option<String> fields: {reason}"
    )]
    ArgumentsType {
        /// The Rust type.
        type_name: &'static str,
        /// What does not fit.
        reason: String,
    },
    /// A completion provider names an argument the prompt does not declare.
    #[error("a completion is registered for {0:?}, which is not a declared argument")]
    UnknownCompletionArgument(String),
}

/// What is wrong with a resource or resource template refused by its
/// builder (inside [`RegistrationError::Resource`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceProblem {
    /// The URI is not an absolute RFC 3986 URI.
    #[error("not a valid URI: {0}")]
    InvalidUri(&'static str),
    /// The name is empty.
    #[error("the name is empty")]
    EmptyName,
    /// The URI template does not parse.
    #[error("invalid URI template: {0}")]
    Template(UriTemplateError),
    /// A completion provider names a variable the template does not have.
    #[error("a completion is registered for {0:?}, which is not a variable of the template")]
    UnknownCompletionVariable(String),
    /// An app's interface is not at a `ui://` URI.
    #[error("an app's interface must be at a ui:// URI, such as ui://my-server/view")]
    NotUiUri,
    /// An app's interface is not an HTML5 document.
    #[error("not an HTML5 document: {0}")]
    NotHtml(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_reads_the_same_way_for_every_kind() {
        let cases = [
            (
                EntryKind::Tool,
                "echo",
                "a tool named \"echo\" is already registered",
            ),
            (
                EntryKind::Prompt,
                "p",
                "a prompt named \"p\" is already registered",
            ),
            (
                EntryKind::Resource,
                "test://x",
                "a resource at \"test://x\" is already registered",
            ),
            (
                EntryKind::ResourceTemplate,
                "test://{id}",
                "a resource template \"test://{id}\" is already registered",
            ),
        ];
        for (kind, name, text) in cases {
            let e = RegistrationError::Duplicate {
                kind,
                name: name.to_owned(),
            };
            assert_eq!(e.to_string(), text);
        }
    }
}
