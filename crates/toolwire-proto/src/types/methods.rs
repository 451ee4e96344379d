//! Method markers: one uninhabited type per request and notification of the
//! 2026-07-28 revision, tying its method name to its parameter and result
//! types. Each method name string appears once in the code base, here.

use super::common::{PaginatedRequestParams, RequestParams};
use super::completion::{CompleteRequestParams, CompleteResult};
use super::discover::DiscoverResult;
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::notifications::{
    CancelledNotificationParams, LoggingMessageNotificationParams, NotificationParams,
    ProgressNotificationParams,
};
use super::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use super::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, ResourceUpdatedNotificationParams,
};
use super::roots::{ListRootsRequestParams, ListRootsResult};
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::subscriptions::{
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use super::tasks::{
    GetTaskResult, TaskAck, TaskIdParams, TaskStatusNotificationParams, UpdateTaskRequestParams,
};
use super::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request method: its name and the types of its `params` and `result`.
pub trait RequestMethod {
    /// The method name.
    const METHOD: &'static str;
    /// Whether the method may answer with an
    /// [`InputRequiredResult`](super::InputRequiredResult) instead of
    /// [`Self::Result`] (multi round-trip requests).
    const MAY_REQUIRE_INPUT: bool = false;
    /// Whether a result may be cached, by the `ttlMs` and `cacheScope` it
    /// carries.
    // Spec: server/utilities/caching.mdx
    const CACHEABLE: bool = false;
    /// The `params` field whose value the `Mcp-Name` HTTP header carries.
    // Spec: basic/transports/streamable-http.mdx#request-metadata
    const NAME_PARAM: Option<&'static str> = None;
    /// Whether the request calls a tool: its arguments meet the tool's
    /// input schema and are mirrored in the `Mcp-Param-*` headers its
    /// `x-mcp-header` annotations ask for.
    const CALLS_TOOL: bool = false;
    /// Whether the result is a page of tool definitions.
    const LISTS_TOOLS: bool = false;
    /// Whether the request reads the resource its `uri` names.
    const READS_RESOURCE: bool = false;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
    /// The type of the final `result`.
    type Result: Serialize + DeserializeOwned;
}

/// A notification method: its name and the type of its `params`.
pub trait NotificationMethod {
    /// The method name.
    const METHOD: &'static str;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
}

macro_rules! request {
    (@set mrtr) => { const MAY_REQUIRE_INPUT: bool = true; };
    (@set cacheable) => { const CACHEABLE: bool = true; };
    (@set name = $field:literal) => { const NAME_PARAM: Option<&'static str> = Some($field); };
    (@set calls_tool) => { const CALLS_TOOL: bool = true; };
    (@set lists_tools) => { const LISTS_TOOLS: bool = true; };
    (@set reads_resource) => { const READS_RESOURCE: bool = true; };
    (
        $(#[$doc:meta])* $name:ident, $method:literal, $params:ty, $result:ty
        $(, $flag:ident $(= $value:literal)?)* $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {}

        impl RequestMethod for $name {
            const METHOD: &'static str = $method;
            $(request!(@set $flag $(= $value)?);)*
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {}

        impl NotificationMethod for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}

request!(
    /// `server/discover`: versions, capabilities and instructions of the server.
    DiscoverRequest, "server/discover", RequestParams, DiscoverResult, cacheable
);
request!(
    /// `tools/list`: a page of tools.
    ListToolsRequest, "tools/list", PaginatedRequestParams, ListToolsResult, cacheable,
    lists_tools
);
request!(
    /// `tools/call`: calls a tool; may answer `input_required`.
    CallToolRequest, "tools/call", CallToolRequestParams, CallToolResult, mrtr, name = "name",
    calls_tool
);
request!(
    /// `resources/list`: a page of resources.
    ListResourcesRequest, "resources/list", PaginatedRequestParams, ListResourcesResult,
    cacheable
);
request!(
    /// `resources/templates/list`: a page of resource templates.
    ListResourceTemplatesRequest,
    "resources/templates/list",
    PaginatedRequestParams,
    ListResourceTemplatesResult,
    cacheable
);
request!(
    /// `resources/read`: reads a resource; may answer `input_required`.
    ReadResourceRequest, "resources/read", ReadResourceRequestParams, ReadResourceResult,
    mrtr, cacheable, name = "uri", reads_resource
);
request!(
    /// `prompts/list`: a page of prompts.
    ListPromptsRequest, "prompts/list", PaginatedRequestParams, ListPromptsResult, cacheable
);
request!(
    /// `prompts/get`: renders a prompt; may answer `input_required`.
    GetPromptRequest, "prompts/get", GetPromptRequestParams, GetPromptResult, mrtr,
    name = "name"
);
request!(
    /// `completion/complete`: completes an argument value.
    CompleteRequest, "completion/complete", CompleteRequestParams, CompleteResult
);
request!(
    /// `subscriptions/listen`: opens a stream of change notifications.
    SubscriptionsListenRequest,
    "subscriptions/listen",
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult
);
request!(
    /// `elicitation/create`: an input request asking the user.
    ElicitRequest, "elicitation/create", ElicitRequestParams, ElicitResult
);
request!(
    /// `sampling/createMessage`: an input request asking the client's model.
    CreateMessageRequest, "sampling/createMessage", CreateMessageRequestParams, CreateMessageResult
);
request!(
    /// `roots/list`: an input request asking for the client's roots.
    ListRootsRequest, "roots/list", ListRootsRequestParams, ListRootsResult
);

// The Tasks extension (`io.modelcontextprotocol/tasks`).
// Spec: extensions/tasks#streamable-http-routing-headers — each names its
// task in `Mcp-Name`.
request!(
    /// `tasks/get`: a task's status with its details (Tasks extension).
    TasksGetRequest, "tasks/get", TaskIdParams, GetTaskResult, name = "taskId"
);
request!(
    /// `tasks/update`: answers to a task's input requests (Tasks extension).
    TasksUpdateRequest, "tasks/update", UpdateTaskRequestParams, TaskAck, name = "taskId"
);
request!(
    /// `tasks/cancel`: asks for a task to stop (Tasks extension).
    TasksCancelRequest, "tasks/cancel", TaskIdParams, TaskAck, name = "taskId"
);

notification!(
    /// `notifications/progress`: progress of a request.
    ProgressNotification, "notifications/progress", ProgressNotificationParams
);
notification!(
    /// `notifications/cancelled`: the sender cancels a request.
    CancelledNotification, "notifications/cancelled", CancelledNotificationParams
);
notification!(
    /// `notifications/message`: a log message for a request that opted in.
    LoggingMessageNotification, "notifications/message", LoggingMessageNotificationParams
);
notification!(
    /// `notifications/tools/list_changed`: the tool list changed.
    ToolListChangedNotification, "notifications/tools/list_changed", NotificationParams
);
notification!(
    /// `notifications/prompts/list_changed`: the prompt list changed.
    PromptListChangedNotification, "notifications/prompts/list_changed", NotificationParams
);
notification!(
    /// `notifications/resources/list_changed`: the resource list changed.
    ResourceListChangedNotification, "notifications/resources/list_changed", NotificationParams
);
notification!(
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdatedNotification,
    "notifications/resources/updated",
    ResourceUpdatedNotificationParams
);
notification!(
    /// `notifications/tasks`: a task's status changed (Tasks extension).
    TaskStatusNotification, "notifications/tasks", TaskStatusNotificationParams
);
notification!(
    /// `notifications/subscriptions/acknowledged`: the server accepted a `subscriptions/listen`.
    SubscriptionsAcknowledgedNotification,
    "notifications/subscriptions/acknowledged",
    SubscriptionsAcknowledgedNotificationParams
);

/// Methods that earlier revisions had and 2026-07-28 removed, so a peer can
/// recognise them (for example to answer "method not found" with a helpful
/// message).
///
/// Spec: changelog.mdx (major changes 2, 4 and 5, minor change 11).
pub mod removed {
    /// `initialize`: the handshake is gone; every request carries its version and capabilities.
    pub const INITIALIZE: &str = "initialize";
    /// `notifications/initialized`: went with the handshake.
    pub const INITIALIZED_NOTIFICATION: &str = "notifications/initialized";
    /// `ping`: removed.
    pub const PING: &str = "ping";
    /// `logging/setLevel`: the level is now set per request in `_meta`.
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `resources/subscribe`: replaced by `subscriptions/listen`.
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe`: replaced by closing the `subscriptions/listen` stream.
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// `notifications/roots/list_changed`: removed with server-initiated requests.
    pub const ROOTS_LIST_CHANGED_NOTIFICATION: &str = "notifications/roots/list_changed";
    /// `notifications/elicitation/complete`: removed; the client retries instead.
    pub const ELICITATION_COMPLETE_NOTIFICATION: &str = "notifications/elicitation/complete";

    /// Every removed method name.
    pub const ALL: &[&str] = &[
        INITIALIZE,
        INITIALIZED_NOTIFICATION,
        PING,
        LOGGING_SET_LEVEL,
        RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE,
        ROOTS_LIST_CHANGED_NOTIFICATION,
        ELICITATION_COMPLETE_NOTIFICATION,
    ];
}

/// A request method, decoded once from its name: every method of
/// 2026-07-28, the request methods of the initialize-based revisions that
/// 2026-07-28 removed (a server that also serves those revisions answers them
/// in legacy sessions), and any other name.
///
/// Built from the `METHOD` constants above and [`removed`], so the names stay
/// written once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Method {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ListTools,
    /// `tools/call`.
    CallTool,
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource,
    /// `completion/complete`.
    Complete,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `tasks/get` (Tasks extension).
    TasksGet,
    /// `tasks/update` (Tasks extension).
    TasksUpdate,
    /// `tasks/cancel` (Tasks extension).
    TasksCancel,
    /// `initialize` (removed).
    Initialize,
    /// `ping` (removed).
    Ping,
    /// `logging/setLevel` (removed).
    SetLoggingLevel,
    /// `resources/subscribe` (removed).
    SubscribeResource,
    /// `resources/unsubscribe` (removed).
    UnsubscribeResource,
    /// Any other method name.
    Other(Box<str>),
}

impl Method {
    /// The method named `name`.
    pub fn parse(name: &str) -> Self {
        match name {
            DiscoverRequest::METHOD => Self::Discover,
            ListToolsRequest::METHOD => Self::ListTools,
            CallToolRequest::METHOD => Self::CallTool,
            ListPromptsRequest::METHOD => Self::ListPrompts,
            GetPromptRequest::METHOD => Self::GetPrompt,
            ListResourcesRequest::METHOD => Self::ListResources,
            ListResourceTemplatesRequest::METHOD => Self::ListResourceTemplates,
            ReadResourceRequest::METHOD => Self::ReadResource,
            CompleteRequest::METHOD => Self::Complete,
            SubscriptionsListenRequest::METHOD => Self::SubscriptionsListen,
            TasksGetRequest::METHOD => Self::TasksGet,
            TasksUpdateRequest::METHOD => Self::TasksUpdate,
            TasksCancelRequest::METHOD => Self::TasksCancel,
            removed::INITIALIZE => Self::Initialize,
            removed::PING => Self::Ping,
            removed::LOGGING_SET_LEVEL => Self::SetLoggingLevel,
            removed::RESOURCES_SUBSCRIBE => Self::SubscribeResource,
            removed::RESOURCES_UNSUBSCRIBE => Self::UnsubscribeResource,
            other => Self::Other(other.into()),
        }
    }

    /// The method name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Discover => DiscoverRequest::METHOD,
            Self::ListTools => ListToolsRequest::METHOD,
            Self::CallTool => CallToolRequest::METHOD,
            Self::ListPrompts => ListPromptsRequest::METHOD,
            Self::GetPrompt => GetPromptRequest::METHOD,
            Self::ListResources => ListResourcesRequest::METHOD,
            Self::ListResourceTemplates => ListResourceTemplatesRequest::METHOD,
            Self::ReadResource => ReadResourceRequest::METHOD,
            Self::Complete => CompleteRequest::METHOD,
            Self::SubscriptionsListen => SubscriptionsListenRequest::METHOD,
            Self::TasksGet => TasksGetRequest::METHOD,
            Self::TasksUpdate => TasksUpdateRequest::METHOD,
            Self::TasksCancel => TasksCancelRequest::METHOD,
            Self::Initialize => removed::INITIALIZE,
            Self::Ping => removed::PING,
            Self::SetLoggingLevel => removed::LOGGING_SET_LEVEL,
            Self::SubscribeResource => removed::RESOURCES_SUBSCRIBE,
            Self::UnsubscribeResource => removed::RESOURCES_UNSUBSCRIBE,
            Self::Other(name) => name,
        }
    }

    /// Whether the method is one of the Tasks extension's (`tasks/get`,
    /// `tasks/update`, `tasks/cancel`).
    pub fn is_task_method(&self) -> bool {
        matches!(self, Self::TasksGet | Self::TasksUpdate | Self::TasksCancel)
    }

    /// Whether 2026-07-28 removed this method (it exists only in the
    /// initialize-based revisions).
    pub fn is_removed(&self) -> bool {
        matches!(
            self,
            Self::Initialize
                | Self::Ping
                | Self::SetLoggingLevel
                | Self::SubscribeResource
                | Self::UnsubscribeResource
        )
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A notification a client sends, decoded once from its method name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientNotification {
    /// `notifications/cancelled`.
    Cancelled,
    /// `notifications/initialized` (removed: the legacy handshake's last step).
    Initialized,
    /// Anything else (progress, roots changes, unknown names).
    Other,
}

impl ClientNotification {
    /// The notification named `name`.
    pub fn parse(name: &str) -> Self {
        match name {
            CancelledNotification::METHOD => Self::Cancelled,
            removed::INITIALIZED_NOTIFICATION => Self::Initialized,
            _ => Self::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Only the methods whose responses the schema types as
    // `InputRequiredResult | ...` may require input.
    const _: () = {
        assert!(CallToolRequest::MAY_REQUIRE_INPUT);
        assert!(GetPromptRequest::MAY_REQUIRE_INPUT);
        assert!(ReadResourceRequest::MAY_REQUIRE_INPUT);
        assert!(!ListToolsRequest::MAY_REQUIRE_INPUT);
        assert!(!DiscoverRequest::MAY_REQUIRE_INPUT);
    };

    // Spec: server/utilities/caching.mdx — discover, the lists and
    // resources/read carry cache hints; calls and prompts do not.
    const _: () = {
        assert!(DiscoverRequest::CACHEABLE);
        assert!(ListToolsRequest::CACHEABLE);
        assert!(ListPromptsRequest::CACHEABLE);
        assert!(ListResourcesRequest::CACHEABLE);
        assert!(ListResourceTemplatesRequest::CACHEABLE);
        assert!(ReadResourceRequest::CACHEABLE);
        assert!(!CallToolRequest::CACHEABLE);
        assert!(!GetPromptRequest::CACHEABLE);
        assert!(!CompleteRequest::CACHEABLE);
        assert!(!SubscriptionsListenRequest::CACHEABLE);
    };

    const _: () = {
        assert!(CallToolRequest::CALLS_TOOL && !GetPromptRequest::CALLS_TOOL);
        assert!(ListToolsRequest::LISTS_TOOLS && !ListPromptsRequest::LISTS_TOOLS);
        assert!(ReadResourceRequest::READS_RESOURCE && !ListResourcesRequest::READS_RESOURCE);
    };

    // Spec: basic/transports/streamable-http.mdx#request-metadata — the
    // three methods that name a target carry it in `Mcp-Name`.
    #[test]
    fn targets_of_mcp_name_are_the_name_or_the_uri() {
        assert_eq!(CallToolRequest::NAME_PARAM, Some("name"));
        assert_eq!(GetPromptRequest::NAME_PARAM, Some("name"));
        assert_eq!(ReadResourceRequest::NAME_PARAM, Some("uri"));
        assert_eq!(ListToolsRequest::NAME_PARAM, None);
        assert_eq!(CompleteRequest::NAME_PARAM, None);
        // Spec: extensions/tasks#streamable-http-routing-headers.
        assert_eq!(TasksGetRequest::NAME_PARAM, Some("taskId"));
        assert_eq!(TasksUpdateRequest::NAME_PARAM, Some("taskId"));
        assert_eq!(TasksCancelRequest::NAME_PARAM, Some("taskId"));
    }

    #[test]
    fn removed_methods_are_not_current_methods() {
        let current = [
            DiscoverRequest::METHOD,
            ListToolsRequest::METHOD,
            CallToolRequest::METHOD,
            ListResourcesRequest::METHOD,
            ListResourceTemplatesRequest::METHOD,
            ReadResourceRequest::METHOD,
            ListPromptsRequest::METHOD,
            GetPromptRequest::METHOD,
            CompleteRequest::METHOD,
            SubscriptionsListenRequest::METHOD,
            ElicitRequest::METHOD,
            CreateMessageRequest::METHOD,
            ListRootsRequest::METHOD,
            TasksGetRequest::METHOD,
            TasksUpdateRequest::METHOD,
            TasksCancelRequest::METHOD,
            TaskStatusNotification::METHOD,
            ProgressNotification::METHOD,
            CancelledNotification::METHOD,
            LoggingMessageNotification::METHOD,
            ToolListChangedNotification::METHOD,
            PromptListChangedNotification::METHOD,
            ResourceListChangedNotification::METHOD,
            ResourceUpdatedNotification::METHOD,
            SubscriptionsAcknowledgedNotification::METHOD,
        ];
        for m in removed::ALL {
            assert!(!current.contains(m), "{m} is both current and removed");
        }
        let mut sorted = current.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), current.len(), "duplicate method name");
    }

    #[test]
    fn method_names_round_trip_through_the_enum() {
        let names = [
            DiscoverRequest::METHOD,
            ListToolsRequest::METHOD,
            CallToolRequest::METHOD,
            ListPromptsRequest::METHOD,
            GetPromptRequest::METHOD,
            ListResourcesRequest::METHOD,
            ListResourceTemplatesRequest::METHOD,
            ReadResourceRequest::METHOD,
            CompleteRequest::METHOD,
            SubscriptionsListenRequest::METHOD,
            removed::INITIALIZE,
            removed::PING,
            removed::LOGGING_SET_LEVEL,
            removed::RESOURCES_SUBSCRIBE,
            removed::RESOURCES_UNSUBSCRIBE,
            "x/unknown",
        ];
        for name in names {
            let m = Method::parse(name);
            assert_eq!(m.as_str(), name);
            assert_eq!(matches!(m, Method::Other(_)), name == "x/unknown", "{name}");
            assert_eq!(m.is_removed(), removed::ALL.contains(&name), "{name}");
        }
    }
}
