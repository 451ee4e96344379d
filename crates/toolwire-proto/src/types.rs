//! The protocol types of MCP 2026-07-28: serde mappings of the schema's
//! parameters, results, content and capabilities, plus method markers that
//! tie each method name to its types.
//!
//! Field names follow the schema (`camelCase` on the wire, `snake_case` in
//! Rust); `_meta` is the `meta` field. Optional members are `Option`s that are
//! omitted when `None`, so values round-trip.

mod capabilities;
mod common;
mod completion;
mod content;
mod discover;
mod elicitation;
mod error_data;
mod methods;
mod mrtr;
mod notifications;
mod number;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod subscriptions;
mod tasks;
mod tools;

pub use capabilities::{
    CapabilityMap, ClientCapabilities, ElicitationCapability, PromptsCapability,
    ResourcesCapability, RootsCapability, SamplingCapability, ServerCapabilities, ToolsCapability,
};
pub use common::{
    Annotations, CacheScope, Cursor, EmptyResult, Icon, IconTheme, Implementation, JsonObject,
    Meta, PaginatedRequestParams, ProgressToken, RequestMeta, RequestParams, ResultType, Role,
};
pub use completion::{
    CompleteRequestParams, CompleteResult, Completion, CompletionArgument, CompletionContext,
    CompletionReference, PromptReference, ResourceTemplateReference,
};
pub use content::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent,
    ResourceContents, ResourceLink, TextContent, TextResourceContents,
};
pub use discover::DiscoverResult;
pub use elicitation::{
    ArrayType, BooleanSchema, BooleanType, ElicitAction, ElicitRequestFormParams,
    ElicitRequestParams, ElicitRequestUrlParams, ElicitRequestedSchema, ElicitResult, EnumOption,
    FormMode, LegacyTitledEnumSchema, NumberSchema, NumberType, ObjectType,
    PrimitiveSchemaDefinition, StringFormat, StringSchema, StringType, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema, UrlMode,
};
pub use error_data::{MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData};
pub use methods::{
    CallToolRequest, CancelledNotification, ClientNotification, CompleteRequest,
    CreateMessageRequest, DiscoverRequest, ElicitRequest, GetPromptRequest, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, ListRootsRequest, ListToolsRequest,
    LoggingMessageNotification, Method, NotificationMethod, ProgressNotification,
    PromptListChangedNotification, ReadResourceRequest, RequestMethod,
    ResourceListChangedNotification, ResourceUpdatedNotification,
    SubscriptionsAcknowledgedNotification, SubscriptionsListenRequest, TaskStatusNotification,
    TasksCancelRequest, TasksGetRequest, TasksUpdateRequest, ToolListChangedNotification, removed,
};
pub use mrtr::{
    InputRequest, InputRequests, InputRequiredResult, InputResponseRequestParams, InputResponses,
    ResultOrInputRequired, parse_input_response,
};
pub use notifications::{
    CancelledNotificationParams, LoggingLevel, LoggingMessageNotificationParams,
    NotificationParams, ProgressNotificationParams,
};
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, ResourceUpdatedNotificationParams,
};
pub use roots::{ListRootsRequestParams, ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingContent, SamplingMessage, SamplingMessageContentBlock, ToolChoice, ToolChoiceMode,
    ToolResultContent, ToolUseContent,
};
pub use subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult, SubscriptionsListenResultMeta,
};
pub use tasks::{
    CreateTaskResult, DetailedTask, GetTaskResult, TASKS_EXTENSION, Task, TaskAck, TaskIdParams,
    TaskInfo, TaskState, TaskStatus, TaskStatusNotificationParams, UpdateTaskRequestParams,
};
pub use tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations};
