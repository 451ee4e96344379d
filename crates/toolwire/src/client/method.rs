//! What the client knows of a request method: one `Copy` value read off its
//! marker type once, which the engine carries instead of the name, so no
//! decision along the way compares method names.

use toolwire_proto::types::RequestMethod;

/// The name of a request method and the rules of this revision that apply
/// to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MethodInfo {
    /// The name, as written on the wire.
    pub(crate) name: &'static str,
    /// Results may be cached ([`RequestMethod::CACHEABLE`]).
    pub(crate) cacheable: bool,
    /// The server may answer `input_required`
    /// ([`RequestMethod::MAY_REQUIRE_INPUT`]).
    pub(crate) may_require_input: bool,
    /// The `params` field the `Mcp-Name` header carries
    /// ([`RequestMethod::NAME_PARAM`]).
    pub(crate) name_param: Option<&'static str>,
    /// A tool call ([`RequestMethod::CALLS_TOOL`]).
    pub(crate) calls_tool: bool,
    /// A page of tools ([`RequestMethod::LISTS_TOOLS`]).
    pub(crate) lists_tools: bool,
    /// A read of the resource `uri` names
    /// ([`RequestMethod::READS_RESOURCE`]).
    pub(crate) reads_resource: bool,
}

impl MethodInfo {
    /// The method `M` marks.
    pub(crate) const fn of<M: RequestMethod>() -> Self {
        Self {
            name: M::METHOD,
            cacheable: M::CACHEABLE,
            may_require_input: M::MAY_REQUIRE_INPUT,
            name_param: M::NAME_PARAM,
            calls_tool: M::CALLS_TOOL,
            lists_tools: M::LISTS_TOOLS,
            reads_resource: M::READS_RESOURCE,
        }
    }

    /// A method of an earlier revision (`initialize`, `logging/setLevel`,
    /// `resources/subscribe`): none of this revision's rules apply to it.
    pub(crate) const fn legacy(name: &'static str) -> Self {
        Self {
            name,
            cacheable: false,
            may_require_input: false,
            name_param: None,
            calls_tool: false,
            lists_tools: false,
            reads_resource: false,
        }
    }
}
