//! The cache seen from the client API: TTL, scopes and credentials, stale
//! fallback, pages.

use super::fake::{FakeHttp, FakeStdio, error, plain_tool, result, tools_page};
use crate::client::ClientBuilder;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn tools_list_is_served_from_cache_until_ttl_expires() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        vec![result(req, tools_page(json!([plain_tool("t")]), 1_000))]
    });
    let c = &fake.client;
    c.list_tools().await.expect("list");
    tokio::time::advance(Duration::from_millis(900)).await;
    c.list_tools().await.expect("cached");
    assert_eq!(fake.requests("tools/list").len(), 1);
    tokio::time::advance(Duration::from_millis(101)).await;
    c.list_tools().await.expect("refetched");
    assert_eq!(fake.requests("tools/list").len(), 2);
}

#[tokio::test]
async fn zero_or_missing_ttl_means_always_refetch() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        vec![result(req, json!({"tools": []}))]
    });
    fake.client.list_tools().await.expect("list");
    fake.client.list_tools().await.expect("list");
    assert_eq!(fake.requests("tools/list").len(), 2);
}

#[tokio::test]
async fn a_refetch_that_gets_no_answer_serves_the_stale_result() {
    let fail = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&fail);
    let fake = FakeStdio::start(
        ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(100))),
        move |req| {
            if flag.load(Ordering::SeqCst) {
                // The server is stuck: no answer.
                Vec::new()
            } else {
                vec![result(req, tools_page(json!([plain_tool("t")]), 0))]
            }
        },
    );
    fake.client.list_tools().await.expect("list");
    fail.store(true, Ordering::SeqCst);
    let tools = fake.client.list_tools().await.expect("stale");
    assert_eq!(tools[0].name, "t");
    assert_eq!(fake.requests("tools/list").len(), 2);
    fake.client.clear_cache();
    assert!(fake.client.list_tools().await.is_err());
}

#[tokio::test]
async fn a_definite_error_drops_the_entry_instead_of_serving_it() {
    // 0: answer; 1: a JSON-RPC error; 2: no answer.
    let mode = Arc::new(AtomicUsize::new(0));
    let m = Arc::clone(&mode);
    let fake = FakeStdio::start(
        ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(100))),
        move |req| match m.load(Ordering::SeqCst) {
            0 => vec![result(
                req,
                json!({"contents": [{"uri": "a://x", "text": "x"}], "ttlMs": 0}),
            )],
            1 => vec![error(
                req,
                -32602,
                "Resource not found",
                Some(json!({"uri": "a://x"})),
            )],
            _ => Vec::new(),
        },
    );
    fake.client.read_resource("a://x").await.expect("read");
    mode.store(1, Ordering::SeqCst);
    let err = fake.client.read_resource("a://x").await.expect_err("gone");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32602), "{err}");
    // The entry went with the definite answer: nothing stale is left to
    // stand in when the server then stops answering.
    mode.store(2, Ordering::SeqCst);
    let err = fake
        .client
        .read_resource("a://x")
        .await
        .expect_err("no stale");
    assert!(
        matches!(err, crate::client::ClientError::Timeout(_)),
        "{err}"
    );
}

#[tokio::test]
async fn a_cursor_that_stops_working_restarts_the_walk_without_one() {
    // Before the change the list is [a] -> c1 -> [b]; after it, c1 is
    // unknown and the list is [a2] -> c2 -> [b2].
    let changed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&changed);
    let fake = FakeStdio::start(ClientBuilder::new(), move |req| {
        let after = flag.load(Ordering::SeqCst);
        let page = |tools: Value, next: Option<&str>| {
            let mut p = tools_page(tools, 60_000);
            if let Some(n) = next {
                p["nextCursor"] = json!(n);
            }
            p
        };
        match (req["params"]["cursor"].as_str(), after) {
            (None, false) => vec![result(req, page(json!([plain_tool("a")]), Some("c1")))],
            (Some("c1"), false) => vec![result(req, page(json!([plain_tool("b")]), None))],
            (None, true) => vec![result(req, page(json!([plain_tool("a2")]), Some("c2")))],
            (Some("c2"), true) => vec![result(req, page(json!([plain_tool("b2")]), None))],
            _ => vec![error(req, -32602, "Invalid cursor", None)],
        }
    });
    let names = |tools: Vec<toolwire_proto::types::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name).collect()
    };
    assert_eq!(
        names(fake.client.list_tools().await.expect("list")),
        ["a", "b"]
    );
    changed.store(true, Ordering::SeqCst);
    // The first page is still fresh in the cache and names c1; the
    // second is expired by hand so that c1 is asked for again.
    fake.client.inner.cache.remove(
        crate::client::method::MethodInfo::of::<toolwire_proto::types::ListToolsRequest>(),
        &serde_json::from_value(json!({"cursor": "c1"})).expect("params"),
        None,
    );
    assert_eq!(
        names(fake.client.list_tools().await.expect("restarted")),
        ["a2", "b2"]
    );
    let cursors: Vec<Value> = fake
        .requests("tools/list")
        .iter()
        .map(|r| r["params"]["cursor"].clone())
        .collect();
    assert_eq!(
        cursors,
        [
            Value::Null,
            json!("c1"),
            json!("c1"),
            Value::Null,
            json!("c2")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn stale_entries_are_evicted_after_a_while() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let uri = req["params"]["uri"].clone();
        vec![result(
            req,
            json!({"contents": [{"uri": uri, "text": "x"}], "ttlMs": 1000}),
        )]
    });
    fake.client.read_resource("a://1").await.expect("read");
    fake.client.read_resource("a://2").await.expect("read");
    assert_eq!(fake.client.inner.cache.len(), 2);
    tokio::time::advance(crate::client::cache::STALE_KEEP + Duration::from_secs(2)).await;
    // Storing a new entry sweeps out the long-stale ones.
    fake.client.read_resource("a://3").await.expect("read");
    assert_eq!(fake.client.inner.cache.len(), 1);
}

#[tokio::test]
async fn every_page_is_fetched_and_cached_by_cursor() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let mut page = match req["params"]["cursor"].as_str() {
            None => tools_page(json!([plain_tool("a")]), 60_000),
            Some("2") => tools_page(json!([plain_tool("b")]), 60_000),
            Some(_) => tools_page(json!([]), 60_000),
        };
        if req["params"].get("cursor").is_none() {
            page["nextCursor"] = Value::from("2");
        }
        vec![result(req, page)]
    });
    let names: Vec<String> = fake
        .client
        .list_tools()
        .await
        .expect("all")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    fake.client.list_tools().await.expect("cached");
    assert_eq!(fake.requests("tools/list").len(), 2);
}

#[tokio::test]
async fn private_results_are_not_shared_across_credentials() {
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (c2, s2) = (Arc::clone(&count), Arc::clone(&seen));
    let (client, _log) = FakeHttp::client(
        ClientBuilder::new().with_bearer_token("alice"),
        move |req| {
            c2.fetch_add(1, Ordering::SeqCst);
            s2.lock().expect("seen").push(req["params"]["uri"].clone());
            vec![result(
                req,
                json!({"contents": [], "ttlMs": 60_000, "cacheScope": "private"}),
            )]
        },
    );
    client.read_resource("file:///a").await.expect("read");
    client
        .read_resource("file:///a")
        .await
        .expect("cached for alice");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    client.set_bearer_token(Some("bob".into()));
    client
        .read_resource("file:///a")
        .await
        .expect("bob fetches his own");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    client.set_bearer_token(Some("alice".into()));
    client
        .read_resource("file:///a")
        .await
        .expect("alice's entry is still there");
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

/// Credentials that change when the test says: an `AuthProvider` whose
/// token is whatever `token` holds.
#[cfg(feature = "oauth")]
struct Switching(Arc<Mutex<Option<String>>>);

#[cfg(feature = "oauth")]
impl crate::oauth::AuthProvider for Switching {
    fn authorization(
        &self,
    ) -> futures_util::future::BoxFuture<'_, Result<Option<String>, crate::oauth::AuthError>> {
        let token = self.0.lock().expect("token").clone();
        Box::pin(async move { Ok(token.map(|t| format!("Bearer {t}"))) })
    }

    fn refused<'a>(
        &'a self,
        _status: u16,
        _challenge: &'a crate::oauth::Challenge,
        _sent: Option<&'a str>,
        _attempt: u32,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::oauth::AuthError>> {
        Box::pin(async { Ok(false) })
    }
}

#[cfg(feature = "oauth")]
#[tokio::test]
async fn private_results_belong_to_the_auth_providers_principal() {
    let token = Arc::new(Mutex::new(Some("alice".to_owned())));
    let switch_once = Arc::new(AtomicBool::new(true));
    let (t2, s2) = (Arc::clone(&token), Arc::clone(&switch_once));
    let (client, log) = FakeHttp::client(
        ClientBuilder::new().with_auth(Switching(Arc::clone(&token))),
        move |req| {
            // The first list is answered after the provider moved on to
            // bob (a login while the request was out).
            if s2.swap(false, Ordering::SeqCst) {
                *t2.lock().expect("token") = Some("bob".into());
            }
            vec![result(
                req,
                json!({"tools": [plain_tool("t")], "ttlMs": 60_000, "cacheScope": "private"}),
            )]
        },
    );
    let lists = || super::fake::requests(&log, "tools/list").len();
    // The first answer is cached under no one.
    client.list_tools().await.expect("list");
    client.list_tools().await.expect("bob's own");
    assert_eq!(lists(), 2);
    client.list_tools().await.expect("cached for bob");
    assert_eq!(lists(), 2);
    *token.lock().expect("token") = Some("alice".into());
    client.list_tools().await.expect("alice fetches hers");
    assert_eq!(lists(), 3, "alice was served a list fetched as bob");
    *token.lock().expect("token") = None;
    client.list_tools().await.expect("no credentials");
    assert_eq!(lists(), 4);
}
