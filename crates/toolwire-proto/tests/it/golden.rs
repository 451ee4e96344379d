//! Golden tests: every example message of the 2026-07-28 schema parses into
//! the type its folder names and serialises back to the same JSON value.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolwire_proto::types::{
    self as t, NotificationMethod, PrimitiveSchemaDefinition as Field, RequestMethod,
};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

/// A full JSON-RPC result response.
#[derive(Serialize, Deserialize)]
struct ResultResponse<R> {
    jsonrpc: String,
    id: RequestId,
    result: R,
}

/// A full JSON-RPC error response.
#[derive(Serialize, Deserialize)]
struct ErrorResponse {
    jsonrpc: String,
    id: Option<RequestId>,
    error: ErrorObject,
}

/// A request or notification. `jsonrpc` and `id` are optional because input
/// requests (`elicitation/create` etc.) are embedded in results, not sent.
/// (Missing `Option` members are `None` without `#[serde(default)]`, which
/// would demand `P: Default`.)
#[derive(Serialize, Deserialize)]
struct Envelope<P> {
    #[serde(skip_serializing_if = "Option::is_none")]
    jsonrpc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<RequestId>,
    method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

type Check = Result<(), String>;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spec-2026-07-28/examples")
}

/// Parses `v` as `T`, serialises it back and compares; returns the parsed value.
fn round_trip<T: Serialize + DeserializeOwned>(v: &Value) -> Result<T, String> {
    let parsed: T = serde_json::from_value(v.clone())
        .map_err(|e| format!("does not parse as {}: {e}", std::any::type_name::<T>()))?;
    let back = serde_json::to_value(&parsed).map_err(|e| format!("does not serialise: {e}"))?;
    if &back != v {
        return Err(format!(
            "round trip through {} changed the value\n  original: {v}\n  back:     {back}",
            std::any::type_name::<T>()
        ));
    }
    Ok(parsed)
}

fn ensure(cond: bool, what: &str) -> Check {
    if cond { Ok(()) } else { Err(what.to_owned()) }
}

fn request<M: RequestMethod>(v: &Value) -> Check {
    let e: Envelope<M::Params> = round_trip(v)?;
    ensure(
        e.method == M::METHOD,
        &format!("method is {}, not {}", e.method, M::METHOD),
    )?;
    // Client requests are full JSON-RPC requests with params; input requests
    // (embedded in results) have neither `jsonrpc` nor required params.
    if e.jsonrpc.is_some() {
        ensure(e.jsonrpc.as_deref() == Some("2.0"), "jsonrpc is not 2.0")?;
        ensure(e.id.is_some(), "a request needs an id")?;
        ensure(e.params.is_some(), "params missing")?;
    }
    Ok(())
}

fn notification<M: NotificationMethod>(v: &Value) -> Check {
    let e: Envelope<M::Params> = round_trip(v)?;
    ensure(e.id.is_none(), "a notification has no id")?;
    ensure(e.jsonrpc.as_deref() == Some("2.0"), "jsonrpc is not 2.0")?;
    ensure(
        e.method == M::METHOD,
        &format!("method is {}, not {}", e.method, M::METHOD),
    )
}

fn response<R: Serialize + DeserializeOwned>(v: &Value) -> Check {
    let r: ResultResponse<R> = round_trip(v)?;
    ensure(r.jsonrpc == "2.0", "jsonrpc is not 2.0")
}

/// A response of a method that may answer `input_required`.
fn mrtr_response<R: Serialize + DeserializeOwned>(v: &Value) -> Check {
    response::<t::ResultOrInputRequired<R>>(v)
}

/// An input request as it appears inside `inputRequests`.
fn input_request<M: RequestMethod>(v: &Value) -> Check {
    request::<M>(v)?;
    let mut v = v.clone();
    // Deviation: examples/ListRootsRequest/list-roots-request.json carries an
    // `id`, but schema `ListRootsRequest` has only `method` and `params` (an
    // input request is keyed by its `inputRequests` key, not by an id). The
    // envelope above keeps it; `InputRequest` has no place for it.
    if let Some(obj) = v.as_object_mut() {
        obj.remove("id");
    }
    let r: t::InputRequest = round_trip(&v)?;
    ensure(
        r.method() == M::METHOD,
        "InputRequest has the wrong variant",
    )
}

fn content_block(v: &Value, is: fn(&t::ContentBlock) -> bool) -> Check {
    let c: t::ContentBlock = round_trip(v)?;
    ensure(is(&c), &format!("wrong ContentBlock variant: {c:?}"))
}

fn sampling_block(v: &Value, is: fn(&t::SamplingMessageContentBlock) -> bool) -> Check {
    let c: t::SamplingMessageContentBlock = round_trip(v)?;
    ensure(
        is(&c),
        &format!("wrong SamplingMessageContentBlock variant: {c:?}"),
    )
}

fn form_field<T: Serialize + DeserializeOwned>(v: &Value, is: fn(&Field) -> bool) -> Check {
    round_trip::<T>(v)?;
    let f: Field = round_trip(v)?;
    ensure(
        is(&f),
        &format!("wrong PrimitiveSchemaDefinition variant: {f:?}"),
    )
}

fn error_object(v: &Value, code: ErrorCode) -> Check {
    let e: ErrorObject = round_trip(v)?;
    ensure(e.code == code, &format!("code is {}, not {code}", e.code))
}

fn error_response(v: &Value, code: ErrorCode) -> Result<Option<Value>, String> {
    let r: ErrorResponse = round_trip(v)?;
    ensure(r.jsonrpc == "2.0", "jsonrpc is not 2.0")?;
    ensure(
        r.error.code == code,
        &format!("code is {}, not {code}", r.error.code),
    )?;
    Ok(r.error.data)
}

fn input_responses(v: &Value) -> Check {
    let responses: t::InputResponses = round_trip(v)?;
    for (key, r) in &responses {
        if r.get("action").is_some() {
            round_trip::<t::ElicitResult>(r)?;
        } else if r.get("model").is_some() {
            round_trip::<t::CreateMessageResult>(r)?;
        } else if r.get("roots").is_some() {
            round_trip::<t::ListRootsResult>(r)?;
        } else {
            return Err(format!("input response {key} is of no known kind"));
        }
    }
    Ok(())
}

/// Deviation: examples/ReadResourceResultResponse/read-resource-result-response.json
/// omits `ttlMs` and `cacheScope`, which schema `ReadResourceResult` (a
/// `CacheableResult`) requires. The types follow the schema, so the example must
/// be rejected for exactly that reason; with the two members supplied it must
/// round-trip. If the example is ever fixed, this check fails: drop it then.
fn read_resource_response_without_cache_hints(v: &Value) -> Check {
    let err = match serde_json::from_value::<ResultResponse<t::ReadResourceResult>>(v.clone()) {
        Ok(_) => return Err("example now has cache hints: remove this deviation".into()),
        Err(e) => e.to_string(),
    };
    ensure(
        err.contains("ttlMs"),
        &format!("rejected for another reason: {err}"),
    )?;
    let mut fixed = v.clone();
    let result = fixed
        .get_mut("result")
        .and_then(Value::as_object_mut)
        .ok_or("no result object")?;
    result.insert("ttlMs".into(), 0.into());
    result.insert("cacheScope".into(), "private".into());
    mrtr_response::<t::ReadResourceResult>(&fixed)
}

/// Picks the type by the example's folder (and, for deviations, its file name).
fn check(folder: &str, file: &str, v: &Value) -> Check {
    use t::ContentBlock as C;
    use t::SamplingMessageContentBlock as S;
    match folder {
        // Content.
        "TextContent" => content_block(v, |c| matches!(c, C::Text(_))),
        "ImageContent" => content_block(v, |c| matches!(c, C::Image(_))),
        "AudioContent" => content_block(v, |c| matches!(c, C::Audio(_))),
        "ResourceLink" => content_block(v, |c| matches!(c, C::ResourceLink(_))),
        "EmbeddedResource" => content_block(v, |c| matches!(c, C::Resource(_))),
        "ToolUseContent" => sampling_block(v, |c| matches!(c, S::ToolUse(_))),
        "ToolResultContent" => sampling_block(v, |c| matches!(c, S::ToolResult(_))),
        "TextResourceContents" => {
            round_trip::<t::TextResourceContents>(v)?;
            let c: t::ResourceContents = round_trip(v)?;
            ensure(
                matches!(c, t::ResourceContents::Text(_)),
                "not text contents",
            )
        }
        "BlobResourceContents" => {
            round_trip::<t::BlobResourceContents>(v)?;
            let c: t::ResourceContents = round_trip(v)?;
            ensure(
                matches!(c, t::ResourceContents::Blob(_)),
                "not blob contents",
            )
        }

        // Capabilities and discovery.
        "ClientCapabilities" => round_trip::<t::ClientCapabilities>(v).map(drop),
        "ServerCapabilities" => round_trip::<t::ServerCapabilities>(v).map(drop),
        "DiscoverRequest" => request::<t::DiscoverRequest>(v),
        "DiscoverResult" => round_trip::<t::DiscoverResult>(v).map(drop),
        "DiscoverResultResponse" => response::<t::DiscoverResult>(v),
        "PaginatedRequestParams" => round_trip::<t::PaginatedRequestParams>(v).map(drop),

        // Tools.
        "Tool" => round_trip::<t::Tool>(v).map(drop),
        "ListToolsRequest" => request::<t::ListToolsRequest>(v),
        "ListToolsResult" => round_trip::<t::ListToolsResult>(v).map(drop),
        "ListToolsResultResponse" => response::<t::ListToolsResult>(v),
        "CallToolRequest" => request::<t::CallToolRequest>(v),
        "CallToolRequestParams" => round_trip::<t::CallToolRequestParams>(v).map(drop),
        "CallToolResult" => round_trip::<t::CallToolResult>(v).map(drop),
        "CallToolResultResponse" => mrtr_response::<t::CallToolResult>(v),

        // Resources.
        "Resource" => round_trip::<t::Resource>(v).map(drop),
        "ListResourcesRequest" => request::<t::ListResourcesRequest>(v),
        "ListResourcesResult" => round_trip::<t::ListResourcesResult>(v).map(drop),
        "ListResourcesResultResponse" => response::<t::ListResourcesResult>(v),
        "ListResourceTemplatesRequest" => request::<t::ListResourceTemplatesRequest>(v),
        "ListResourceTemplatesResult" => round_trip::<t::ListResourceTemplatesResult>(v).map(drop),
        "ListResourceTemplatesResultResponse" => response::<t::ListResourceTemplatesResult>(v),
        "ReadResourceRequest" => request::<t::ReadResourceRequest>(v),
        "ReadResourceResult" => round_trip::<t::ReadResourceResult>(v).map(drop),
        "ReadResourceResultResponse" if file == "read-resource-result-response.json" => {
            read_resource_response_without_cache_hints(v)
        }
        "ReadResourceResultResponse" => mrtr_response::<t::ReadResourceResult>(v),
        "ResourceListChangedNotification" => notification::<t::ResourceListChangedNotification>(v),
        "ResourceUpdatedNotification" => notification::<t::ResourceUpdatedNotification>(v),
        "ResourceUpdatedNotificationParams" => {
            round_trip::<t::ResourceUpdatedNotificationParams>(v).map(drop)
        }

        // Prompts.
        "ListPromptsRequest" => request::<t::ListPromptsRequest>(v),
        "ListPromptsResult" => round_trip::<t::ListPromptsResult>(v).map(drop),
        "ListPromptsResultResponse" => response::<t::ListPromptsResult>(v),
        "GetPromptRequest" => request::<t::GetPromptRequest>(v),
        "GetPromptRequestParams" => round_trip::<t::GetPromptRequestParams>(v).map(drop),
        "GetPromptResult" => round_trip::<t::GetPromptResult>(v).map(drop),
        "GetPromptResultResponse" => mrtr_response::<t::GetPromptResult>(v),
        "PromptListChangedNotification" => notification::<t::PromptListChangedNotification>(v),

        // Completion.
        "CompleteRequest" => request::<t::CompleteRequest>(v),
        "CompleteRequestParams" => round_trip::<t::CompleteRequestParams>(v).map(drop),
        "CompleteResult" => round_trip::<t::CompleteResult>(v).map(drop),
        "CompleteResultResponse" => response::<t::CompleteResult>(v),

        // Multi round-trip requests.
        "InputRequests" => round_trip::<t::InputRequests>(v).map(drop),
        "InputResponses" => input_responses(v),
        "InputRequiredResult" => {
            let r: t::InputRequiredResult = round_trip(v)?;
            ensure(
                r.result_type == t::ResultType::InputRequired,
                "wrong resultType",
            )
        }

        // Elicitation.
        "ElicitRequest" => input_request::<t::ElicitRequest>(v),
        "ElicitRequestFormParams" => {
            round_trip::<t::ElicitRequestFormParams>(v)?;
            let p: t::ElicitRequestParams = round_trip(v)?;
            ensure(
                matches!(p, t::ElicitRequestParams::Form(_)),
                "not form mode",
            )
        }
        "ElicitRequestURLParams" => {
            round_trip::<t::ElicitRequestUrlParams>(v)?;
            let p: t::ElicitRequestParams = round_trip(v)?;
            ensure(matches!(p, t::ElicitRequestParams::Url(_)), "not URL mode")
        }
        "ElicitResult" => round_trip::<t::ElicitResult>(v).map(drop),
        "StringSchema" => form_field::<t::StringSchema>(v, |f| matches!(f, Field::String(_))),
        "NumberSchema" => form_field::<t::NumberSchema>(v, |f| matches!(f, Field::Number(_))),
        "BooleanSchema" => form_field::<t::BooleanSchema>(v, |f| matches!(f, Field::Boolean(_))),
        "UntitledSingleSelectEnumSchema" => {
            form_field::<t::UntitledSingleSelectEnumSchema>(v, |f| {
                matches!(f, Field::UntitledSingleSelectEnum(_))
            })
        }
        "TitledSingleSelectEnumSchema" => form_field::<t::TitledSingleSelectEnumSchema>(v, |f| {
            matches!(f, Field::TitledSingleSelectEnum(_))
        }),
        "UntitledMultiSelectEnumSchema" => form_field::<t::UntitledMultiSelectEnumSchema>(v, |f| {
            matches!(f, Field::UntitledMultiSelectEnum(_))
        }),
        "TitledMultiSelectEnumSchema" => form_field::<t::TitledMultiSelectEnumSchema>(v, |f| {
            matches!(f, Field::TitledMultiSelectEnum(_))
        }),

        // Sampling.
        "CreateMessageRequest" => input_request::<t::CreateMessageRequest>(v),
        "CreateMessageRequestParams" => round_trip::<t::CreateMessageRequestParams>(v).map(drop),
        "CreateMessageResult" => round_trip::<t::CreateMessageResult>(v).map(drop),
        "SamplingMessage" => round_trip::<t::SamplingMessage>(v).map(drop),
        "ModelPreferences" => round_trip::<t::ModelPreferences>(v).map(drop),

        // Roots.
        "ListRootsRequest" => input_request::<t::ListRootsRequest>(v),
        "ListRootsResult" => round_trip::<t::ListRootsResult>(v).map(drop),
        "Root" => round_trip::<t::Root>(v).map(drop),

        // Subscriptions.
        "SubscriptionsListenRequest" => request::<t::SubscriptionsListenRequest>(v),
        "SubscriptionsListenResult" => round_trip::<t::SubscriptionsListenResult>(v).map(drop),
        "SubscriptionsListenResultResponse" => response::<t::SubscriptionsListenResult>(v),
        "SubscriptionsAcknowledgedNotification" => {
            notification::<t::SubscriptionsAcknowledgedNotification>(v)
        }
        "ToolListChangedNotification" => notification::<t::ToolListChangedNotification>(v),

        // Progress, cancellation, logging.
        "ProgressNotification" => notification::<t::ProgressNotification>(v),
        "ProgressNotificationParams" => round_trip::<t::ProgressNotificationParams>(v).map(drop),
        "CancelledNotification" => notification::<t::CancelledNotification>(v),
        "CancelledNotificationParams" => round_trip::<t::CancelledNotificationParams>(v).map(drop),
        "LoggingMessageNotification" => notification::<t::LoggingMessageNotification>(v),
        "LoggingMessageNotificationParams" => {
            round_trip::<t::LoggingMessageNotificationParams>(v).map(drop)
        }

        // Errors: bare error objects.
        "ParseError" => error_object(v, ErrorCode::PARSE_ERROR),
        "InvalidParamsError" => error_object(v, ErrorCode::INVALID_PARAMS),
        "MethodNotFoundError" => error_object(v, ErrorCode::METHOD_NOT_FOUND),
        "InternalError" => error_object(v, ErrorCode::INTERNAL_ERROR),
        // Errors: full error responses.
        "HeaderMismatchError" => error_response(v, ErrorCode::HEADER_MISMATCH).map(drop),
        "MissingRequiredClientCapabilityError" => {
            let data = error_response(v, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)?;
            round_trip::<t::MissingRequiredClientCapabilityData>(&data.ok_or("no data")?).map(drop)
        }
        "UnsupportedProtocolVersionError" => {
            let data = error_response(v, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)?;
            round_trip::<t::UnsupportedProtocolVersionData>(&data.ok_or("no data")?).map(drop)
        }

        _ => Err(format!(
            "no Rust type mapped for example folder `{folder}`: add it to golden.rs"
        )),
    }
}

#[test]
fn every_schema_example_round_trips() {
    let dir = examples_dir();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    assert!(
        !folders.is_empty(),
        "no example folders in {}",
        dir.display()
    );

    let mut checked = 0;
    let mut failures = Vec::new();
    for folder in &folders {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name");
        let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
            .expect("readable folder")
            .map(|entry| entry.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            failures.push(format!("{name}/: no example files"));
        }
        for path in files {
            let file = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("utf-8 name");
            let text = std::fs::read_to_string(&path).expect("readable example");
            let result = serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("not JSON: {e}"))
                .and_then(|v| check(name, file, &v));
            match result {
                Ok(()) => checked += 1,
                Err(e) => failures.push(format!("{name}/{file}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        checked + failures.len(),
        failures.join("\n")
    );
    assert!(checked > 100, "only {checked} examples checked");
}
