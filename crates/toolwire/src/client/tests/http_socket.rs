//! The HTTP transport against the real Streamable HTTP server on a
//! loopback socket: JSON and SSE replies, header validation by the server,
//! MRTR, listen, version retry, and cancellation by closing the stream.

use super::server::{accept_all, server, text};
use crate::client::{
    ChangeNotification, Client, ClientBuilder, ClientError, RequestOptions, ToolCall,
};
use crate::{HttpConfig, Server, Tool};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use toolwire_proto::types::SubscriptionFilter;

/// Serves `server` on 127.0.0.1:0 and returns the endpoint URL.
async fn serve(server: &Server) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let srv = server.clone();
    tokio::spawn(async move {
        crate::serve_http_on(srv, listener, HttpConfig::new(), std::future::pending()).await
    });
    format!("http://{addr}/mcp")
}

async fn client(server: &Server, builder: ClientBuilder) -> Client {
    let url = serve(server).await;
    builder.connect_http(&url).expect("client")
}

#[tokio::test]
async fn lists_and_calls_with_headers_the_server_accepts() {
    let server = server(60_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    assert_eq!(c.list_tools().await.expect("list").len(), 5);
    let r = c
        .call_tool("echo", json!({"text": "héllo"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "héllo");
    // The server checks Mcp-Param-Region and Mcp-Param-Priority against the body.
    for args in [
        json!({"region": "us-west1", "priority": 7, "text": "a"}),
        json!({"region": "Zürich ", "text": "b"}),
        json!({"region": "=?base64?abc?=", "text": "c"}),
    ] {
        let r = c
            .call_tool("regional_echo", args.clone())
            .await
            .expect("regional");
        assert!(!r.is_error(), "{args}: {r:?}");
        assert!(text(&r).ends_with(args["text"].as_str().expect("text")));
    }
    c.discover().await.expect("discover");
}

#[tokio::test]
async fn progress_arrives_on_the_requests_own_stream() {
    let server = server(60_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let call = ToolCall::new("steps")
        .with_argument("steps", json!(3))
        .with_options(
            RequestOptions::new().with_progress(move |p| s.lock().expect("s").push(p.progress)),
        );
    let r = c.call_tool_with(call).await.expect("call");
    assert_eq!(text(&r), "done");
    assert_eq!(*seen.lock().expect("s"), [1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn mrtr_over_http() {
    let server = server(60_000, Arc::default());
    let c = client(&server, accept_all()).await;
    let r = c
        .call_tool("confirm", json!({"text": "ship"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "confirmed: ship");
}

#[tokio::test]
async fn an_unsupported_first_choice_is_negotiated_down() {
    let server = server(60_000, Arc::default());
    let c = client(
        &server,
        ClientBuilder::new().with_protocol_versions(["2099-12-31", "2026-07-28"]),
    )
    .await;
    c.list_tools().await.expect("negotiated");
    assert_eq!(c.protocol_version(), "2026-07-28");
}

#[tokio::test]
async fn dropping_a_call_closes_its_stream_and_cancels_it() {
    for with_progress in [false, true] {
        let cancelled = Arc::new(AtomicBool::new(false));
        let server = server(60_000, Arc::clone(&cancelled));
        let c = client(&server, ClientBuilder::new()).await;
        let mut call = ToolCall::new("steps").with_argument("steps", json!(1000));
        if with_progress {
            // An SSE reply: progress is streamed before the result.
            call = call.with_options(RequestOptions::new().with_progress(|_| {}));
        }
        let fut = c.call_tool_with(call);
        assert!(
            tokio::time::timeout(Duration::from_millis(150), fut)
                .await
                .is_err()
        );
        for _ in 0..200 {
            if cancelled.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            cancelled.load(Ordering::SeqCst),
            "sse={with_progress}: not cancelled"
        );
        let r = c
            .call_tool("echo", json!({"text": "still"}))
            .await
            .expect("echo");
        assert_eq!(text(&r), "still");
    }
}

#[tokio::test]
async fn listen_over_http_invalidates_the_cache() {
    let server = server(600_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    assert_eq!(c.list_tools().await.expect("list").len(), 5);
    let mut sub = c
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
        .expect("add");
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    assert_eq!(c.list_tools().await.expect("refetched").len(), 6);
}

#[tokio::test]
async fn errors_are_typed() {
    let server = server(60_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    let err = c
        .call_tool("nope", json!({}))
        .await
        .expect_err("unknown tool");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32602), "{err}");
    let err = ClientBuilder::new()
        .connect_http("ftp://localhost/mcp")
        .expect_err("not HTTP");
    assert!(matches!(err, ClientError::InvalidUrl(_)), "{err}");
    let dead = ClientBuilder::new()
        .connect_http("http://127.0.0.1:9/mcp")
        .expect("builds lazily");
    let err = dead.list_tools().await.expect_err("nothing listens");
    assert!(matches!(err, ClientError::Transport(_)), "{err}");
}

#[tokio::test]
async fn a_flood_of_list_changes_waits_for_the_consumer_as_one() {
    use crate::{BusEvent, ListChanged};
    let server = server(600_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    let mut sub = c
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    // Nobody reads the subscription while the server floods it.
    for _ in 0..5_000 {
        server.publish(BusEvent::ListChanged {
            list: ListChanged::Tools,
        });
    }
    server.publish(BusEvent::ListChanged {
        list: ListChanged::Prompts,
    });
    let waiting = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let now = sub.waiting();
            if now.contains(&ChangeNotification::PromptsListChanged) {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the flood is read in time");
    assert_eq!(
        waiting,
        [
            ChangeNotification::ToolsListChanged,
            ChangeNotification::PromptsListChanged
        ],
        "five thousand list changes wait as one"
    );
    assert_eq!(
        sub.next().await.and_then(Result::ok),
        Some(ChangeNotification::ToolsListChanged)
    );
    assert_eq!(
        sub.next().await.and_then(Result::ok),
        Some(ChangeNotification::PromptsListChanged)
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), sub.next())
            .await
            .is_err(),
        "nothing more"
    );
    // The connection still serves.
    assert_eq!(c.list_tools().await.expect("list").len(), 5);
}

#[tokio::test]
async fn arguments_are_checked_here_unless_the_caller_checked_them_already() {
    let server = server(60_000, Arc::default());
    let c = client(&server, ClientBuilder::new()).await;
    // `priority` is mirrored into a header: an integer past 2^53 cannot be.
    let bad = json!({"region": "eu", "priority": 9_007_199_254_740_993_u64, "text": "x"});
    let err = c
        .call_tool_with(ToolCall::new("regional_echo").with_arguments(bad.clone()))
        .await
        .expect_err("refused before sending");
    assert!(
        matches!(&err, ClientError::InvalidArgument { parameter, .. } if parameter == "priority"),
        "checked by the client: {err}"
    );
    let err = c
        .call_tool_with(
            ToolCall::new("regional_echo")
                .with_arguments(bad)
                .without_argument_check(),
        )
        .await
        .expect_err("still wrong");
    // Sent without the header it cannot have; the server judges it.
    assert!(
        matches!(&err, ClientError::Rpc(e) if e.code.0 == -32020),
        "sent, and refused by the server: {err}"
    );
}

/// A TCP relay in front of `url`'s server that counts the connections it
/// accepts and can cut every one of them.
struct Relay {
    url: String,
    accepted: Arc<std::sync::atomic::AtomicUsize>,
    cut: Arc<tokio::sync::Notify>,
}

async fn relay(upstream: &str) -> Relay {
    let target = upstream
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cut = Arc::new(tokio::sync::Notify::new());
    let (count, cut_all) = (Arc::clone(&accepted), Arc::clone(&cut));
    tokio::spawn(async move {
        while let Ok((mut down, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let target = target.clone();
            let cut = Arc::clone(&cut_all);
            tokio::spawn(async move {
                let Ok(mut up) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut down, &mut up) => {}
                    () = cut.notified() => {}
                }
            });
        }
    });
    Relay {
        url: format!("http://{addr}/mcp"),
        accepted,
        cut,
    }
}

/// Spec: basic/transports/streamable-http.mdx — requests are independent
/// POSTs; the transport keeps its connection between them, and one the
/// server closed while it sat unused is replaced without the caller seeing
/// it.
#[tokio::test]
async fn posts_share_a_kept_connection_and_outlive_its_close() {
    let server = server(60_000, Arc::default());
    let relay = relay(&serve(&server).await).await;
    let c = ClientBuilder::new()
        .connect_http(&relay.url)
        .expect("client");
    for i in 0..5 {
        let r = c
            .call_tool("echo", json!({"text": format!("n{i}")}))
            .await
            .expect("echo");
        assert_eq!(text(&r), format!("n{i}"));
    }
    assert_eq!(
        relay.accepted.load(Ordering::SeqCst),
        1,
        "one connection for all"
    );
    relay.cut.notify_waiters();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = c
        .call_tool("echo", json!({"text": "again"}))
        .await
        .expect("after the cut");
    assert_eq!(text(&r), "again");
    assert_eq!(relay.accepted.load(Ordering::SeqCst), 2, "a new connection");
    // Calls at once each take a connection of their own, then share them.
    let calls = (0..4).map(|i| c.call_tool("echo", json!({"text": format!("c{i}")})));
    for r in futures_util::future::join_all(calls).await {
        assert!(text(&r.expect("echo")).starts_with('c'));
    }
    let opened = relay.accepted.load(Ordering::SeqCst);
    assert!((2..=6).contains(&opened), "{opened}");
    for _ in 0..4 {
        c.call_tool("echo", json!({"text": "x"}))
            .await
            .expect("echo");
    }
    assert_eq!(
        relay.accepted.load(Ordering::SeqCst),
        opened,
        "kept ones reused"
    );
}
