//! Both eras: the `auto` probe and its fallback against scripted servers,
//! and legacy sessions against the real server in process over a pipe.

use super::fake::{FakeStdio, error, plain_tool, result};
use super::server::{accept_all, server, text};
use crate::client::{
    ChangeNotification, Client, ClientBuilder, ClientError, InputError, ProtocolEra, ProtocolMode,
    RequestOptions, ToolCall,
};
use crate::{Resource, Server, Tool};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use toolwire_proto::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ListRootsRequestParams, ListRootsResult, Root,
    SubscriptionFilter,
};

/// A scripted legacy server: `server/discover` is unknown, `initialize`
/// answers `version`, and `tools/list` lists one tool (no `resultType`).
fn legacy_script(version: &'static str) -> impl Fn(&Value) -> Vec<Value> + Send + Sync {
    move |req| match req["method"].as_str().unwrap_or_default() {
        "initialize" => vec![result(
            req,
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "old", "version": "1"},
                "instructions": "be nice"
            }),
        )],
        "tools/list" => vec![result(req, json!({"tools": [plain_tool("ping")]}))],
        "tools/call" => vec![result(
            req,
            json!({"content": [{"type": "text", "text": "pong"}]}),
        )],
        _ => vec![error(req, -32601, "Method not found", None)],
    }
}

fn methods(fake: &FakeStdio) -> Vec<String> {
    fake.all()
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn auto_falls_back_to_initialize_on_a_method_not_found_probe() {
    let fake = FakeStdio::start_in_mode(ClientBuilder::new(), legacy_script("2025-11-25"));
    assert_eq!(fake.client.era(), None);
    let tools = fake.client.list_tools().await.expect("list");
    assert_eq!(tools[0].name, "ping");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Legacy));
    assert_eq!(fake.client.protocol_version(), "2025-11-25");
    let r = fake
        .client
        .call_tool("ping", json!({}))
        .await
        .expect("call");
    assert_eq!(text(&r), "pong");
    assert_eq!(
        methods(&fake),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    let all = fake.all();
    // The probe speaks modern; the session's requests do not.
    assert_eq!(
        all[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(all[1]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(all[1]["params"]["capabilities"], json!({}));
    assert_eq!(all[1]["params"]["clientInfo"]["name"], "toolwire-client");
    for m in &all[3..] {
        assert!(m["params"].get("_meta").is_none(), "{m}");
    }
    // discover answers from the initialize result.
    let d = fake.client.discover().await.expect("discover");
    assert_eq!(d.supported_versions, ["2025-11-25"]);
    assert_eq!(d.instructions.as_deref(), Some("be nice"));
    assert!(d.capabilities.tools.is_some());
    assert_eq!(fake.requests("initialize").len(), 1);
}

#[tokio::test]
async fn a_2025_only_unsupported_version_answer_means_legacy() {
    let legacy = legacy_script("2025-06-18");
    let fake = FakeStdio::start_in_mode(ClientBuilder::new(), move |req| {
        if req["method"] == "server/discover" {
            let data =
                json!({"supported": ["2025-06-18", "2025-03-26"], "requested": "2026-07-28"});
            return vec![error(req, -32022, "Unsupported", Some(data))];
        }
        legacy(req)
    });
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Legacy));
    assert_eq!(fake.client.protocol_version(), "2025-06-18");
}

#[tokio::test]
async fn auto_never_falls_back_on_a_modern_answer() {
    // A modern server that wants another modern version: retried, modern.
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_versions(["2099-01-01", "2026-07-28"]),
        |req| {
            let v = &req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
            match req["method"].as_str().unwrap_or_default() {
                _ if v != "2026-07-28" => {
                    let data = json!({"supported": ["2025-11-25", "2026-07-28"]});
                    vec![error(req, -32022, "Unsupported", Some(data))]
                }
                "server/discover" => vec![result(
                    req,
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                           "capabilities": {}, "ttlMs": 60000, "cacheScope": "public"}),
                )],
                _ => vec![result(req, super::fake::tools_page(json!([]), 0))],
            }
        },
    );
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Modern));
    fake.client.discover().await.expect("discover");
    assert!(fake.requests("initialize").is_empty());
    // The probe's answer was kept: discover was asked twice (the -32022 and
    // the retry), never again.
    assert_eq!(fake.requests("server/discover").len(), 2);

    // A recognised modern error keeps the client modern and is reported.
    let fake = FakeStdio::start_in_mode(ClientBuilder::new(), |req| {
        vec![error(req, -32021, "Missing capability", None)]
    });
    let err = fake.client.list_tools().await.expect_err("refused");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32021), "{err}");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Modern));
    assert!(fake.requests("initialize").is_empty());
}

#[tokio::test]
async fn initialize_tries_older_versions_and_refuses_unknown_ones() {
    let legacy = legacy_script("2025-03-26");
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        move |req| {
            if req["method"] == "initialize" && req["params"]["protocolVersion"] != "2025-03-26" {
                return vec![error(req, -32602, "Unsupported protocol version", None)];
            }
            legacy(req)
        },
    );
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.client.protocol_version(), "2025-03-26");
    let asked: Vec<Value> = fake
        .requests("initialize")
        .iter()
        .map(|r| r["params"]["protocolVersion"].clone())
        .collect();
    assert_eq!(
        asked,
        [
            json!("2025-11-25"),
            json!("2025-06-18"),
            json!("2025-03-26")
        ]
    );
    // Legacy mode never probes.
    assert!(fake.requests("server/discover").is_empty());

    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        legacy_script("2024-11-05"),
    );
    let err = fake.client.list_tools().await.expect_err("too old");
    assert!(
        matches!(err, ClientError::UnsupportedVersion { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_silent_stdio_server_is_taken_for_legacy() {
    let legacy = legacy_script("2025-11-25");
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(200))),
        move |req| {
            if req["method"] == "server/discover" {
                return Vec::new();
            }
            legacy(req)
        },
    );
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Legacy));
}

#[tokio::test]
async fn legacy_server_requests_are_answered_by_the_input_handlers() {
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new()
            .with_protocol_mode(ProtocolMode::Legacy)
            .with_roots(|_k: String, _p: ListRootsRequestParams| async {
                Ok::<_, InputError>(ListRootsResult {
                    roots: vec![Root::new("file:///work")],
                })
            }),
        legacy_script("2025-11-25"),
    );
    fake.client.list_tools().await.expect("list");
    let init = &fake.requests("initialize")[0];
    // Exactly the registered handlers' capabilities.
    assert_eq!(init["params"]["capabilities"], json!({"roots": {}}));
    for (id, method) in [(7, "roots/list"), (8, "elicitation/create"), (9, "ping")] {
        fake.inject
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}))
            .expect("inject");
    }
    let mut answers = Vec::new();
    for _ in 0..200 {
        answers = fake
            .all()
            .into_iter()
            .filter(|m| m.get("method").is_none())
            .collect();
        if answers.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["result"]["roots"][0]["uri"], "file:///work");
    // No elicitation handler: refused, not ignored.
    assert_eq!(answers[1]["error"]["code"], -32601);
    assert_eq!(answers[2]["result"], json!({}));
}

#[tokio::test]
async fn legacy_list_changes_feed_subscriptions_and_the_cache() {
    let legacy = legacy_script("2025-11-25");
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        move |req| {
            if req["method"] == "tools/list" {
                // Cacheable, so that the invalidation shows.
                let page = json!({"tools": [plain_tool("ping")], "ttlMs": 600_000, "cacheScope": "public"});
                return vec![result(req, page)];
            }
            legacy(req)
        },
    );
    fake.client.list_tools().await.expect("list");
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.requests("tools/list").len(), 1, "the second is cached");
    let mut sub = fake
        .client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    fake.inject
        .send(json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}))
        .expect("inject");
    fake.inject
        .send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
        .expect("inject");
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    // The prompts change was not asked for.
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    fake.client.list_tools().await.expect("list");
    assert_eq!(
        fake.requests("tools/list").len(),
        2,
        "the change dropped the entry"
    );
}

#[tokio::test]
async fn legacy_resource_updates_feed_subscriptions_and_the_cache() {
    let legacy = legacy_script("2025-11-25");
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        move |req| match req["method"].as_str().unwrap_or_default() {
            // Cacheable, so that the invalidation shows.
            "resources/read" => vec![result(
                req,
                json!({"contents": [{"uri": req["params"]["uri"], "text": "v"}],
                       "ttlMs": 600_000, "cacheScope": "public"}),
            )],
            "resources/subscribe" => vec![result(req, json!({}))],
            _ => legacy(req),
        },
    );
    for uri in ["a://watched", "a://other", "a://still"] {
        fake.client.read_resource(uri).await.expect("read");
        fake.client.read_resource(uri).await.expect("read");
    }
    assert_eq!(fake.requests("resources/read").len(), 3, "all cached");
    let mut sub = fake
        .client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["a://watched".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    // A legacy server is asked with resources/subscribe, per URI.
    let asked: Vec<Value> = fake
        .requests("resources/subscribe")
        .iter()
        .map(|r| r["params"]["uri"].clone())
        .collect();
    assert_eq!(asked, [json!("a://watched")]);
    for uri in ["a://other", "a://watched"] {
        fake.inject
            .send(
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                         "params": {"uri": uri}}),
            )
            .expect("inject");
    }
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    // The update of a resource not subscribed to is not delivered.
    assert_eq!(
        note,
        ChangeNotification::ResourceUpdated {
            uri: "a://watched".into()
        }
    );
    // Each update dropped its own resource's entry (subscribed to or not),
    // and only that.
    for uri in ["a://watched", "a://other", "a://still"] {
        fake.client.read_resource(uri).await.expect("read");
    }
    let reads: Vec<Value> = fake
        .requests("resources/read")
        .iter()
        .map(|r| r["params"]["uri"].clone())
        .collect();
    assert_eq!(
        reads,
        [
            json!("a://watched"),
            json!("a://other"),
            json!("a://still"),
            json!("a://watched"),
            json!("a://other")
        ]
    );
}

#[tokio::test]
async fn a_legacy_subscription_ends_with_an_error_when_the_server_goes() {
    let mut fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        legacy_script("2025-11-25"),
    );
    let mut sub = fake
        .client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    // The server's output closes.
    drop(std::mem::replace(
        &mut fake.inject,
        tokio::sync::mpsc::unbounded_channel().0,
    ));
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("the subscription hears of it")
        .expect("an item");
    assert!(
        matches!(&end, Err(ClientError::Transport(m)) if m.contains("closed its output")),
        "{end:?}"
    );
}

/// Serves `server` over an in-process pipe.
fn connect(server: &Server, builder: ClientBuilder) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let srv = server.clone();
    tokio::spawn(async move { crate::serve_io(srv, server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    builder.connect_io(client_read, client_write)
}

#[tokio::test]
async fn auto_stays_modern_with_toolwire() {
    let server = server(60_000, Arc::default());
    let client = connect(&server, accept_all());
    client.list_tools().await.expect("list");
    assert_eq!(client.era(), Some(ProtocolEra::Modern));
    assert_eq!(client.protocol_version(), "2026-07-28");
}

#[tokio::test]
async fn legacy_session_with_toolwire_over_stdio() {
    let server = server(60_000, Arc::default());
    server
        .add_tool(
            Tool::builder("logger")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, cx: crate::RequestContext| async move {
                    cx.log(
                        toolwire_proto::types::LoggingLevel::Info,
                        None,
                        json!("hello"),
                    );
                    "logged"
                })
                .expect("logger"),
        )
        .expect("add logger");
    server
        .add_resource(
            Resource::builder("mem://a", "a")
                .text("A")
                .expect("resource"),
        )
        .expect("add resource");
    let client = connect(
        &server,
        accept_all().with_protocol_mode(ProtocolMode::Legacy),
    );
    assert_eq!(client.list_tools().await.expect("list").len(), 6);
    assert_eq!(client.era(), Some(ProtocolEra::Legacy));
    assert_eq!(client.protocol_version(), "2025-11-25");
    // The shim turns input_required into a real elicitation/create.
    let r = client
        .call_tool("confirm", json!({"text": "deploy"}))
        .await
        .expect("confirm");
    assert_eq!(text(&r), "confirmed: deploy");
    let declining = ClientBuilder::new()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_elicitation(|_k: String, _p: ElicitRequestParams| async {
            Ok::<_, InputError>(ElicitResult {
                action: ElicitAction::Decline,
                content: None,
            })
        });
    let other = connect(&server, declining);
    let r = other
        .call_tool("confirm", json!({"text": "deploy"}))
        .await
        .expect("confirm");
    assert!(r.is_error());
    // Progress, by token.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let call = ToolCall::new("steps")
        .with_argument("steps", json!(2))
        .with_options(
            RequestOptions::new().with_progress(move |p| s.lock().expect("s").push(p.progress)),
        );
    assert_eq!(
        text(&client.call_tool_with(call).await.expect("steps")),
        "done"
    );
    assert_eq!(*seen.lock().expect("s"), [1.0, 2.0]);
    // Logs: the session's level is set with logging/setLevel first.
    let logs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = Arc::clone(&logs);
    let call = ToolCall::new("logger").with_options(
        RequestOptions::new().with_log(toolwire_proto::types::LoggingLevel::Debug, move |m| {
            l.lock().expect("l").push(m.data.clone())
        }),
    );
    assert_eq!(
        text(&client.call_tool_with(call).await.expect("logger")),
        "logged"
    );
    assert_eq!(*logs.lock().expect("l"), [json!("hello")]);
    // Resources: read, and the legacy not-found mapped to the modern error.
    let read = client.read_resource("mem://a").await.expect("read");
    assert_eq!(read.contents.len(), 1);
    let err = client
        .read_resource("mem://nope")
        .await
        .expect_err("unknown");
    let e = err.rpc().expect("rpc");
    assert_eq!(e.code.0, -32602, "{err}");
    assert_eq!(e.data.as_ref().expect("data")["uri"], "mem://nope");
    // A list change reaches a legacy subscription.
    let mut sub = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    server
        .add_tool(
            Tool::builder("late")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "late" })
                .expect("late"),
        )
        .expect("add late");
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    assert_eq!(client.list_tools().await.expect("list").len(), 7);
    let d = client.discover().await.expect("discover");
    assert_eq!(d.supported_versions, ["2025-11-25"]);
}

#[tokio::test]
async fn modern_mode_probes_on_stdio_and_refuses_a_legacy_server() {
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Modern),
        legacy_script("2025-11-25"),
    );
    let err = fake.client.list_tools().await.expect_err("legacy");
    assert!(matches!(err, ClientError::LegacyServer(_)), "{err}");
    // Deterministic: the era-ambiguous tools/list was never sent.
    assert_eq!(methods(&fake), ["server/discover"]);
}

#[tokio::test]
async fn a_legacy_unknown_resource_is_the_modern_error() {
    let legacy = legacy_script("2025-11-25");
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_protocol_mode(ProtocolMode::Legacy),
        move |req| {
            if req["method"] == "resources/read" {
                // Spec (2025-11-25): server/resources.mdx#error-handling
                return vec![error(req, -32002, "Resource not found", None)];
            }
            legacy(req)
        },
    );
    let err = fake
        .client
        .read_resource("demo://nope")
        .await
        .expect_err("unknown");
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code.0, -32602, "{err}");
    assert_eq!(rpc.data, Some(json!({"uri": "demo://nope"})));
}

#[tokio::test]
async fn a_modern_stdio_server_too_slow_for_the_probe_stays_modern() {
    // The probe gets no answer in time; the handshake after it is refused
    // with -32022 naming the modern version, as a modern server that was
    // still starting answers it.
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(200))),
        |req| match req["method"].as_str().unwrap_or_default() {
            "server/discover" => Vec::new(),
            "initialize" => vec![error(
                req,
                -32022,
                "connection is serving the 2026-07-28 protocol",
                Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})),
            )],
            "tools/list" => vec![result(
                req,
                json!({"resultType": "complete", "tools": [plain_tool("ping")], "ttlMs": 0, "cacheScope": "public"}),
            )],
            _ => vec![error(req, -32601, "Method not found", None)],
        },
    );
    let tools = fake.client.list_tools().await.expect("list");
    assert_eq!(tools[0].name, "ping");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Modern));
    // The list went out as a modern request.
    let list = &fake.requests("tools/list")[0];
    assert_eq!(
        list["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[tokio::test]
async fn modern_mode_waits_the_whole_request_timeout_for_a_slow_stdio_server() {
    // A modern server that answers `server/discover` after the `auto`
    // probe's limit (half the request timeout) but within the request
    // timeout: in modern mode, where nothing falls back, it is modern.
    let fake = FakeStdio::start_in_mode(
        ClientBuilder::new()
            .with_protocol_mode(ProtocolMode::Modern)
            .with_request_timeout(Some(Duration::from_millis(600))),
        |req| match req["method"].as_str().unwrap_or_default() {
            "server/discover" => Vec::new(),
            _ => vec![result(
                req,
                json!({"resultType": "complete", "tools": [plain_tool("ping")], "ttlMs": 0, "cacheScope": "public"}),
            )],
        },
    );
    let (log, inject) = (fake.log.clone(), fake.inject.clone());
    tokio::spawn(async move {
        let probe = loop {
            if let Some(p) = super::fake::requests(&log, "server/discover").pop() {
                break p;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        tokio::time::sleep(Duration::from_millis(400)).await;
        let _ = inject.send(result(
            &probe,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                   "capabilities": {}, "ttlMs": 60000, "cacheScope": "public"}),
        ));
    });
    let tools = fake.client.list_tools().await.expect("list");
    assert_eq!(tools[0].name, "ping");
    assert_eq!(fake.client.era(), Some(ProtocolEra::Modern));
    assert_eq!(fake.requests("server/discover").len(), 1);
}
