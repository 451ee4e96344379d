//! `resources/read` of templated resources over a real socket: what a
//! template variable can hand a handler (issue 14: path traversal through a
//! percent-decoded `/`).

use super::TestServer;
use super::client::{Req, meta};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolwire::{ResourceTemplate, UriVariables};

fn read(uri: &str) -> Req {
    Req::post(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": { "uri": uri, "_meta": meta() }
    }))
}

/// Serves `test://template/{id}/data` and `test://files/{+path}`, recording
/// every value their handlers receive.
async fn start() -> (TestServer, Arc<Mutex<Vec<String>>>) {
    let s = TestServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let ids = Arc::clone(&seen);
    s.server
        .add_resource_template(
            ResourceTemplate::builder("test://template/{id}/data", "data")
                .handler(move |v: UriVariables, _| {
                    let id = v.get("id").unwrap_or_default().to_owned();
                    ids.lock().expect("lock").push(format!("id={id}"));
                    async move { format!("data of {id}") }
                })
                .expect("valid template"),
        )
        .expect("registered");
    let paths = Arc::clone(&seen);
    s.server
        .add_resource_template(
            ResourceTemplate::builder("test://files/{+path}", "files")
                .handler(move |v: UriVariables, _| {
                    let path = v.get("path").unwrap_or_default().to_owned();
                    paths.lock().expect("lock").push(format!("path={path}"));
                    async move { format!("file {path}") }
                })
                .expect("valid template"),
        )
        .expect("registered");
    (s, seen)
}

fn text(v: &Value) -> &str {
    v["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decoded_slash_or_dot_segment_never_reaches_a_simple_variable() {
    let (s, seen) = start().await;
    let ok = read("test://template/abc%20d/data").send(s.addr).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(text(&ok.json()), "data of abc d");

    for uri in [
        "test://template/..%2F..%2Fetc/data",
        "test://template/..%2f..%2fetc/data",
        "test://template/%2E%2E/data",
        "test://template/../data",
    ] {
        let resp = read(uri).send(s.addr).await;
        // A JSON-RPC error on HTTP: 400 with the error in the body.
        assert_eq!(resp.status, 400, "{}", resp.text());
        let v = resp.json();
        assert_eq!(v["error"]["code"], -32602, "{uri}: {v}");
        assert_eq!(v["error"]["data"]["uri"], uri, "{v}");
    }
    assert_eq!(*seen.lock().expect("lock"), ["id=abc d"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reserved_variable_gets_the_text_as_written() {
    let (s, seen) = start().await;
    let resp = read("test://files/a/..%2Fb").send(s.addr).await;
    assert_eq!(text(&resp.json()), "file a/..%2Fb", "{}", resp.text());
    assert_eq!(*seen.lock().expect("lock"), ["path=a/..%2Fb"]);
}
