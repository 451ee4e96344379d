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
async fn a_failed_refetch_serves_the_stale_result() {
    let fail = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&fail);
    let fake = FakeStdio::start(ClientBuilder::new(), move |req| {
        if flag.load(Ordering::SeqCst) {
            vec![error(req, -32603, "down", None)]
        } else {
            vec![result(req, tools_page(json!([plain_tool("t")]), 0))]
        }
    });
    fake.client.list_tools().await.expect("list");
    fail.store(true, Ordering::SeqCst);
    let tools = fake.client.list_tools().await.expect("stale");
    assert_eq!(tools[0].name, "t");
    assert_eq!(fake.requests("tools/list").len(), 2);
    fake.client.clear_cache();
    assert!(fake.client.list_tools().await.is_err());
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
