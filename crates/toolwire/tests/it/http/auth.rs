//! The resource server in the library (feature `auth`), on a real socket:
//! per-entry scopes for tools, prompts and resources (calls and lists),
//! scope hierarchies, the principal in the request context, and the
//! verified-token cache. The verifier is a [`TokenVerifier`] of the test's
//! own (a table of tokens), as a user would write one for another scheme;
//! the JWT and introspection verifiers are tested against a real
//! authorization server in the CLI's tests.

use super::client::{Req, meta};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpListener;
use toolwire::{
    AuthConfig, HttpConfig, Prompt, PromptArguments, Resource, ResourceTemplate, Server,
    ServerConfig, TokenError, TokenVerifier, Tool, UriVariables, VerifiedToken, VerifyFuture,
};

/// Tokens `a` (scope `read`), `b` (`read admin`) and `root` (`read root`).
struct Table {
    calls: Arc<AtomicUsize>,
}

impl TokenVerifier for Table {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "a" => &["read"],
                "b" => &["read", "admin"],
                "root" => &["read", "root"],
                _ => return Err(TokenError::Invalid("unknown token".into())),
            };
            Ok(VerifiedToken {
                issuer: "https://as.test".into(),
                subject: format!("user-{token}"),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                expires_at: Some(std::time::SystemTime::now() + std::time::Duration::from_secs(60)),
                client_id: None,
                audiences: vec!["https://mcp.test/mcp".into()],
            })
        })
    }
}

const RESOURCE: &str = "http://127.0.0.1/mcp";

fn server() -> Server {
    let server = Server::new(ServerConfig::new("auth-it", "0").with_page_size(2));
    for (name, scopes) in [("echo", vec![]), ("secret", vec!["admin"])] {
        let tool = Tool::builder(name)
            .input_schema(json!({"type": "object"}))
            .scopes(scopes)
            .handler(|_: Value, cx: toolwire::RequestContext| async move {
                cx.principal().unwrap_or("nobody").to_owned()
            })
            .expect("tool");
        server.add_tool(tool).expect("add");
    }
    for (name, scopes) in [("open", vec![]), ("closed", vec!["admin"])] {
        let prompt = Prompt::builder(name)
            .scopes(scopes)
            .handler(|_: PromptArguments, _| async { "hi" })
            .expect("prompt");
        server.add_prompt(prompt).expect("add");
    }
    for (uri, scopes) in [("test://open", vec![]), ("test://closed", vec!["admin"])] {
        let r = Resource::builder(uri, uri)
            .scopes(scopes)
            .text("x")
            .expect("resource");
        server.add_resource(r).expect("add");
    }
    let t = ResourceTemplate::builder("test://vault/{id}", "vault")
        .scopes(["admin"])
        .handler(|v: UriVariables, _| async move { v.uri().to_owned() })
        .expect("template");
    server.add_resource_template(t).expect("add");
    server
}

async fn start(with_auth: bool) -> (SocketAddr, Arc<AtomicUsize>) {
    start_with(server(), with_auth).await
}

async fn start_with(server: Server, with_auth: bool) -> (SocketAddr, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut config = HttpConfig::new();
    if with_auth {
        let auth = AuthConfig::new(
            RESOURCE,
            Table {
                calls: Arc::clone(&calls),
            },
        )
        .expect("auth")
        .with_authorization_server("https://as.test")
        .with_required_scopes(["read"])
        .with_scope_implies("root", ["admin"]);
        config = config.with_auth(auth);
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(toolwire::serve_http_on(
        server,
        listener,
        config,
        std::future::pending::<()>(),
    ));
    (addr, calls)
}

fn body(id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn send(addr: SocketAddr, token: Option<&str>, b: &Value) -> super::client::Resp {
    let mut req = Req::post(b);
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    req.send(addr).await
}

/// Every name in a list, following cursors; and the cache scopes seen.
async fn list_all(
    addr: SocketAddr,
    token: Option<&str>,
    method: &str,
    member: &str,
    key: &str,
) -> (Vec<String>, Vec<Value>) {
    let (mut names, mut scopes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    for id in 1..20 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = send(addr, token, &body(id, method, params)).await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        let v = r.json();
        names.extend(
            v["result"][member]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i[key].as_str().expect("name").to_owned()),
        );
        scopes.push(v["result"]["cacheScope"].clone());
        match v["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (names, scopes),
        }
    }
    panic!("{method}: the pages never ended")
}

#[tokio::test]
async fn lists_show_each_caller_what_it_may_use_as_private_pages() {
    let (addr, _) = start(true).await;
    let lists = [
        ("tools/list", "tools", "name"),
        ("prompts/list", "prompts", "name"),
        ("resources/list", "resources", "uri"),
        (
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
        ),
    ];
    let narrow: [&[&str]; 4] = [&["echo"], &["open"], &["test://open"], &[]];
    let wide: [&[&str]; 4] = [
        &["echo", "secret"],
        &["open", "closed"],
        &["test://open", "test://closed"],
        &["test://vault/{id}"],
    ];
    for ((method, member, key), (narrow, wide)) in
        lists.into_iter().zip(narrow.into_iter().zip(wide))
    {
        let (names, scopes) = list_all(addr, Some("a"), method, member, key).await;
        assert_eq!(names, narrow, "{method} for a");
        assert!(
            scopes.iter().all(|s| s == "private"),
            "{method}: {scopes:?}"
        );
        for token in ["b", "root"] {
            let (names, _) = list_all(addr, Some(token), method, member, key).await;
            assert_eq!(names, wide, "{method} for {token}");
        }
    }
}

#[tokio::test]
async fn without_the_resource_server_scopes_are_ignored_and_lists_are_shared() {
    let (addr, _) = start(false).await;
    let (names, scopes) = list_all(addr, None, "tools/list", "tools", "name").await;
    assert_eq!(names, ["echo", "secret"]);
    assert!(scopes.iter().all(|s| s == "public"), "{scopes:?}");
    let r = send(
        addr,
        None,
        &body(1, "tools/call", json!({"name": "secret"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "nobody");
}

#[tokio::test]
async fn every_kind_of_entry_is_gated_by_its_scopes() {
    let (addr, _) = start(true).await;
    let metadata =
        "resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\"";
    let gated = [
        ("tools/call", json!({"name": "secret"})),
        ("prompts/get", json!({"name": "closed"})),
        ("resources/read", json!({"uri": "test://closed"})),
        ("resources/read", json!({"uri": "test://vault/7"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "closed"},
                   "argument": {"name": "x", "value": ""}}),
        ),
    ];
    for (id, (method, params)) in (1..).zip(gated) {
        let r = send(addr, Some("a"), &body(id, method, params.clone())).await;
        assert_eq!(r.status, 403, "{method} {params}: {}", r.text());
        let challenge = r.header("www-authenticate").expect("challenge");
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"admin read\", ")
                && challenge.contains(metadata),
            "{challenge}"
        );
        assert_eq!(r.json()["id"], id, "the request's id");
        // The broader scope implies `admin`.
        for token in ["b", "root"] {
            let r = send(addr, Some(token), &body(id, method, params.clone())).await;
            assert_ne!(
                r.status,
                403,
                "{method} {params} with {token}: {}",
                r.text()
            );
        }
    }
}

#[tokio::test]
async fn the_principal_reaches_the_handler_and_verified_tokens_are_cached() {
    let (addr, calls) = start(true).await;
    for id in 1..=3 {
        let r = send(
            addr,
            Some("b"),
            &body(id, "tools/call", json!({"name": "secret"})),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            r.json()["result"]["content"][0]["text"],
            "https://as.test user-b"
        );
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "verified once, then cached"
    );
    // An unknown token is refused each time (never cached).
    for _ in 0..2 {
        let r = send(
            addr,
            Some("zzz"),
            &body(9, "tools/call", json!({"name": "echo"})),
        )
        .await;
        assert_eq!(r.status, 401, "{}", r.text());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // No token: the challenge names the server-wide scope.
    let r = send(addr, None, &body(9, "tools/call", json!({"name": "echo"}))).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some(
            "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\", scope=\"read\""
        )
    );
}

#[tokio::test]
async fn a_listen_for_updates_of_a_resource_the_caller_may_not_read_is_refused() {
    let (addr, _) = start(true).await;
    let listen = |id: u64, uris: &[&str]| {
        body(
            id,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": uris}}),
        )
    };
    // Like a read of the resource: 403 with every scope needed, at once.
    for (id, uris) in (1..).zip([&["test://closed"][..], &["test://open", "test://vault/7"]]) {
        let r = send(addr, Some("a"), &listen(id, uris)).await;
        assert_eq!(r.status, 403, "{uris:?}: {}", r.text());
        let challenge = r.header("www-authenticate").expect("challenge");
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"admin read\", "),
            "{challenge}"
        );
        assert_eq!(r.json()["id"], id);
    }
    // What the caller may read, or a caller that may read it: the stream opens.
    for (token, uris) in [("a", &["test://open"][..]), ("b", &["test://closed"])] {
        let req = Req::post(&listen(9, uris)).set("Authorization", &format!("Bearer {token}"));
        let mut open = super::client::Open::send(addr, &req).await;
        open.read_until(
            b"notifications/subscriptions/acknowledged",
            std::time::Duration::from_secs(5),
        )
        .await;
    }
}

/// A legacy session's subscription covers sub-resources, which may need
/// scopes the subscribed URI does not: their updates reach only a caller
/// who may read them.
#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_subscription_carries_no_update_the_caller_may_not_read() {
    use std::time::Duration;
    use toolwire::BusEvent;
    let server = server();
    let (addr, _) = start_with(server.clone(), true).await;
    let legacy = |b: &Value, sid: Option<&str>| {
        let mut req = Req::post(b)
            .without("Mcp-Method")
            .without("Mcp-Name")
            .set("MCP-Protocol-Version", "2025-11-25")
            .set("Authorization", "Bearer a");
        if let Some(sid) = sid {
            req = req.set("Mcp-Session-Id", sid);
        }
        req
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "auth-it", "version": "0"}}});
    let r = legacy(&init, None)
        .without("MCP-Protocol-Version")
        .send(addr)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let sid = r.header("mcp-session-id").expect("session").to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy(&done, Some(&sid)).send(addr).await.status, 202);
    // `test://vault` needs no scope; `test://vault/7` (the template) needs
    // `admin`, which token `a` lacks.
    let sub = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "test://vault"}});
    let r = legacy(&sub, Some(&sid)).send(addr).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let get = Req::raw("GET", "/mcp", Vec::new())
        .add("Accept", "text/event-stream")
        .add("Mcp-Session-Id", &sid)
        .add("MCP-Protocol-Version", "2025-11-25")
        .add("Authorization", "Bearer a");
    let mut stream = super::client::Open::send(addr, &get).await;
    stream
        .read_until(b"text/event-stream", Duration::from_secs(5))
        .await;
    // In order: the forwarder passes on (or drops) each update as it comes.
    for uri in ["test://vault/7", "test://vault"] {
        server.publish(BusEvent::ResourceUpdated { uri: uri.into() });
    }
    stream
        .read_until(br#""uri":"test://vault"}"#, Duration::from_secs(5))
        .await;
    let seen = String::from_utf8_lossy(&stream.buf);
    assert!(!seen.contains("test://vault/7"), "{seen}");
}

/// The scope check is a layer inside the added ones: an audit layer sees
/// each `403` refusal, in both eras, as an error of the operation it
/// refused, with the caller; and the refusal still reaches the client as
/// `403` with the challenge.
#[tokio::test]
async fn the_audit_layer_sees_scope_refusals_in_both_eras() {
    use std::sync::Mutex;
    use toolwire::middleware::AuditLayer;
    /// Method, principal, outcome kind and error code.
    type Seen = (String, Option<String>, String, Option<i32>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let server = server().with_layer(AuditLayer::with_sink(move |r| {
        sink.lock().expect("lock").push((
            r.method.clone(),
            r.principal.clone(),
            r.outcome.to_owned(),
            r.code,
        ));
    }));
    let (addr, _) = start_with(server, true).await;
    let call = body(1, "tools/call", json!({"name": "secret"}));
    let r = send(addr, Some("a"), &call).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        r.header("www-authenticate")
            .is_some_and(|c| c.contains("scope=\"admin read\""))
    );

    // A legacy session's call of the same tool.
    let legacy = |b: &Value, sid: Option<&str>| {
        let mut req = Req::post(b)
            .without("Mcp-Method")
            .without("Mcp-Name")
            .set("MCP-Protocol-Version", "2025-11-25")
            .set("Authorization", "Bearer a");
        if let Some(sid) = sid {
            req = req.set("Mcp-Session-Id", sid);
        }
        req
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "auth-it", "version": "0"}}});
    let r = legacy(&init, None)
        .without("MCP-Protocol-Version")
        .send(addr)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let sid = r.header("mcp-session-id").expect("session").to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy(&done, Some(&sid)).send(addr).await.status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "secret", "arguments": {}}});
    let r = legacy(&call, Some(&sid)).send(addr).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.json()["id"], 2);
    assert!(
        r.header("www-authenticate")
            .is_some_and(|c| c.contains("insufficient_scope"))
    );

    let seen = seen.lock().expect("lock").clone();
    let refusals: Vec<_> = seen.iter().filter(|r| r.0 == "tools/call").collect();
    assert_eq!(refusals.len(), 2, "{seen:?}");
    for r in refusals {
        assert_eq!(r.1.as_deref(), Some("https://as.test user-a"), "{seen:?}");
        assert_eq!((r.2.as_str(), r.3), ("error", Some(-32600)), "{seen:?}");
    }
}

/// A handler sees the caller's token only on a server built to show it.
#[tokio::test]
async fn the_caller_token_reaches_handlers_only_when_asked_for() {
    for shown in [false, true] {
        let server = Server::new(ServerConfig::new("caller", "0"));
        let tool = Tool::builder("token")
            .input_schema(json!({"type": "object"}))
            .handler(|_: Value, cx: toolwire::RequestContext| async move {
                match cx.caller_token() {
                    Some(t) => format!("{} for {}", t.token(), t.audiences().join(",")),
                    None => "hidden".to_owned(),
                }
            })
            .expect("tool");
        server.add_tool(tool).expect("add");
        let table = Table {
            calls: Arc::new(AtomicUsize::new(0)),
        };
        let mut auth = AuthConfig::new(RESOURCE, table).expect("auth");
        if shown {
            auth = auth.with_caller_tokens();
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(toolwire::serve_http_on(
            server,
            listener,
            HttpConfig::new().with_auth(auth),
            std::future::pending::<()>(),
        ));
        let call = body(1, "tools/call", json!({"name": "token", "arguments": {}}));
        let r = send(addr, Some("a"), &call).await;
        let text = r.json()["result"]["content"][0]["text"].clone();
        if shown {
            assert_eq!(text, "a for https://mcp.test/mcp");
        } else {
            assert_eq!(text, "hidden");
        }
    }
}
