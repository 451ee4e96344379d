//! Server validation of the request-metadata headers: every failure is
//! `400` with `-32020` naming the header.

use super::TestServer;
use super::client::{Req, Resp, call_body, meta};
use serde_json::{Value, json};

fn assert_mismatch(resp: &Resp, header: &str) {
    assert_eq!(resp.status, 400, "{}", resp.text());
    let v = resp.json();
    assert_eq!(v["error"]["code"], -32020, "{v}");
    assert_eq!(v["id"], 1, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(header),
        "message does not name {header}: {message}"
    );
}

fn assert_ok(resp: &Resp) {
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(resp.json().get("result").is_some(), "{}", resp.text());
}

fn echo() -> Req {
    Req::call("echo", json!({ "text": "x" }))
}

fn regional(args: Value) -> Req {
    Req::call("regional_echo", args)
}

#[tokio::test(flavor = "multi_thread")]
async fn protocol_version_header_is_required_and_must_match_meta() {
    let s = TestServer::start().await;
    assert_mismatch(
        &echo().without("MCP-Protocol-Version").send(s.addr).await,
        "MCP-Protocol-Version",
    );
    assert_mismatch(
        &echo()
            .set("MCP-Protocol-Version", "2025-11-25")
            .send(s.addr)
            .await,
        "MCP-Protocol-Version",
    );
    // The conformance probe: header 2026-07-28, `_meta` v999.0.0 is a
    // mismatch (-32020), not an unsupported version (-32022).
    let mut body = call_body(json!(1), "echo", json!({ "text": "x" }));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    assert_mismatch(&Req::post(&body).send(s.addr).await, "MCP-Protocol-Version");
}

#[tokio::test(flavor = "multi_thread")]
async fn meta_checks_come_before_header_checks() {
    let s = TestServer::start().await;
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {} });
    let resp = Req::post(&body)
        .without("MCP-Protocol-Version")
        .without("Mcp-Method")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32602);
}

#[tokio::test(flavor = "multi_thread")]
async fn method_header_is_required_and_case_sensitive() {
    let s = TestServer::start().await;
    assert_mismatch(
        &echo().without("Mcp-Method").send(s.addr).await,
        "Mcp-Method",
    );
    assert_mismatch(
        &echo().set("Mcp-Method", "tools/list").send(s.addr).await,
        "Mcp-Method",
    );
    assert_mismatch(
        &echo().set("Mcp-Method", "Tools/Call").send(s.addr).await,
        "Mcp-Method",
    );
    // Also required on other methods.
    let body =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": meta() } });
    assert_mismatch(
        &Req::post(&body).without("Mcp-Method").send(s.addr).await,
        "Mcp-Method",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn header_names_ignore_case_and_values_are_trimmed() {
    let s = TestServer::start().await;
    let resp = echo()
        .without("Mcp-Method")
        .add("MCP-METHOD", "  tools/call\t")
        .without("Mcp-Name")
        .add("mcp-name", "echo ")
        .without("MCP-Protocol-Version")
        .add("mcp-protocol-version", "2026-07-28")
        .send(s.addr)
        .await;
    assert_ok(&resp);
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicated_standard_header_is_rejected() {
    let s = TestServer::start().await;
    assert_mismatch(
        &echo().add("mcp-method", "tools/call").send(s.addr).await,
        "Mcp-Method",
    );
    assert_mismatch(
        &echo().add("Mcp-Name", "echo").send(s.addr).await,
        "Mcp-Name",
    );
    assert_mismatch(
        &echo()
            .add("MCP-Protocol-Version", "2026-07-28")
            .send(s.addr)
            .await,
        "MCP-Protocol-Version",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn name_header_is_required_and_must_match() {
    let s = TestServer::start().await;
    assert_mismatch(&echo().without("Mcp-Name").send(s.addr).await, "Mcp-Name");
    assert_mismatch(
        &echo().set("Mcp-Name", "countdown").send(s.addr).await,
        "Mcp-Name",
    );
    assert_mismatch(
        &echo().set("Mcp-Name", "ECHO").send(s.addr).await,
        "Mcp-Name",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn name_header_may_be_base64_encoded() {
    let s = TestServer::start().await;
    // base64("echo") = ZWNobw==
    assert_ok(
        &echo()
            .set("Mcp-Name", "=?base64?ZWNobw==?=")
            .send(s.addr)
            .await,
    );
    assert_mismatch(
        &echo()
            .set("Mcp-Name", "=?base64?ZWNobw?=")
            .send(s.addr)
            .await,
        "Mcp-Name",
    );
    assert_mismatch(
        &echo().set("Mcp-Name", "=?base64?!!!?=").send(s.addr).await,
        "Mcp-Name",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn name_header_is_checked_on_prompts_and_resources_too() {
    let s = TestServer::start().await;
    let get = json!({ "jsonrpc": "2.0", "id": 1, "method": "prompts/get",
        "params": { "name": "p", "_meta": meta() } });
    assert_mismatch(
        &Req::post(&get).set("Mcp-Name", "q").send(s.addr).await,
        "Mcp-Name",
    );
    let read = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": { "uri": "file:///a b", "_meta": meta() } });
    assert_mismatch(
        &Req::post(&read).without("Mcp-Name").send(s.addr).await,
        "Mcp-Name",
    );
    // A matching header gets through validation (to whatever the method does).
    // base64("file:///a b") = ZmlsZTovLy9hIGI=
    let resp = Req::post(&read)
        .set("Mcp-Name", "=?base64?ZmlsZTovLy9hIGI=?=")
        .send(s.addr)
        .await;
    assert_ne!(resp.json()["error"]["code"], -32020, "{}", resp.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn param_header_is_required_when_the_body_has_the_value() {
    let s = TestServer::start().await;
    let resp = regional(json!({ "region": "us-west1", "text": "t" }))
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Region");
    let resp = regional(json!({ "region": "us-west1", "text": "t" }))
        .add("Mcp-Param-Region", "us-west1")
        .send(s.addr)
        .await;
    assert_ok(&resp);
    assert_eq!(resp.json()["result"]["content"][0]["text"], "us-west1: t");
}

#[tokio::test(flavor = "multi_thread")]
async fn param_header_must_match_exactly() {
    let s = TestServer::start().await;
    let args = json!({ "region": "us-west1", "text": "t" });
    for value in ["us-east1", "US-WEST1", ""] {
        let resp = regional(args.clone())
            .add("Mcp-Param-Region", value)
            .send(s.addr)
            .await;
        assert_mismatch(&resp, "Mcp-Param-Region");
    }
    // Header names ignore case.
    assert_ok(
        &regional(args)
            .add("mcp-param-region", "us-west1")
            .send(s.addr)
            .await,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn param_header_base64_is_decoded_and_bad_base64_rejected() {
    let s = TestServer::start().await;
    // base64("Hello, 世界") = SGVsbG8sIOS4lueVjA==
    let args = json!({ "region": "Hello, 世界", "text": "t" });
    let ok = regional(args.clone()).add("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?=");
    assert_ok(&ok.send(s.addr).await);
    let bad = regional(args).add("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA?=");
    assert_mismatch(&bad.send(s.addr).await, "Mcp-Param-Region");
}

#[tokio::test(flavor = "multi_thread")]
async fn param_header_with_invalid_characters_is_rejected() {
    let s = TestServer::start().await;
    // A raw non-ASCII byte sequence in the header value.
    let resp = regional(json!({ "region": "é", "text": "t" }))
        .add("Mcp-Param-Region", "é")
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Region");
}

#[tokio::test(flavor = "multi_thread")]
async fn integer_params_compare_numerically() {
    let s = TestServer::start().await;
    for (header, body) in [
        ("42", json!(42)),
        ("42.0", json!(42)),
        ("42", json!(42.0)),
        ("4.2e1", json!(42)),
        // Issue 14: numerically equal both ways, so a sign and leading
        // zeros are fine too (always decimal: 042 is not octal 34).
        ("042", json!(42)),
        ("+42", json!(42)),
        ("+042", json!(42.0)),
        ("-07", json!(-7)),
    ] {
        let resp = regional(json!({ "priority": body, "text": "t" }))
            .add("Mcp-Param-Priority", header)
            .send(s.addr)
            .await;
        assert_ok(&resp);
    }
    for header in [
        "43",
        "forty-two",
        "42.5",
        "=?base64?NDM=?=",
        "052",
        "0x2A",
        "++42",
    ] {
        let resp = regional(json!({ "priority": 42, "text": "t" }))
            .add("Mcp-Param-Priority", header)
            .send(s.addr)
            .await;
        assert_mismatch(&resp, "Mcp-Param-Priority");
    }
    // The body says "42" (a string) for an integer parameter: the header
    // cannot match it.
    let resp = regional(json!({ "priority": "42", "text": "t" }))
        .add("Mcp-Param-Priority", "42")
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Priority");
}

#[tokio::test(flavor = "multi_thread")]
async fn boolean_params_are_lowercase_only() {
    let s = TestServer::start().await;
    let call =
        |h: &str| regional(json!({ "urgent": true, "text": "t" })).add("Mcp-Param-Urgent", h);
    assert_ok(&call("true").send(s.addr).await);
    for header in ["True", "TRUE", "1", "false"] {
        assert_mismatch(&call(header).send(s.addr).await, "Mcp-Param-Urgent");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn nested_param_header_is_checked() {
    let s = TestServer::start().await;
    let args = json!({ "target": { "tenant": "acme" }, "text": "t" });
    assert_mismatch(
        &regional(args.clone()).send(s.addr).await,
        "Mcp-Param-Tenant",
    );
    assert_ok(
        &regional(args)
            .add("Mcp-Param-Tenant", "acme")
            .send(s.addr)
            .await,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicated_param_header_is_rejected() {
    let s = TestServer::start().await;
    let resp = regional(json!({ "region": "eu", "text": "t" }))
        .add("Mcp-Param-Region", "eu")
        .add("mcp-param-region", "eu")
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Region");
}

#[tokio::test(flavor = "multi_thread")]
async fn absent_or_null_value_needs_no_header_but_rejects_one() {
    let s = TestServer::start().await;
    // Spec: no value, or null → the server must not expect the header.
    assert_ok(&regional(json!({ "text": "t" })).send(s.addr).await);
    let resp = regional(json!({ "priority": null, "text": "t" }))
        .send(s.addr)
        .await;
    assert_eq!(
        resp.status,
        200,
        "a null value passes header validation: {}",
        resp.text()
    );
    // A header the body does not back is a mismatch.
    let resp = regional(json!({ "text": "t" }))
        .add("Mcp-Param-Region", "us-west1")
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Region");
    let resp = regional(json!({ "priority": null, "text": "t" }))
        .add("Mcp-Param-Priority", "1")
        .send(s.addr)
        .await;
    assert_mismatch(&resp, "Mcp-Param-Priority");
}

#[tokio::test(flavor = "multi_thread")]
async fn unrecognised_param_headers_are_ignored() {
    let s = TestServer::start().await;
    assert_ok(
        &echo()
            .add("Mcp-Param-Region", "anything")
            .send(s.addr)
            .await,
    );
    // An unknown tool is the pipeline's error, not a header error.
    let resp = Req::call("no_such_tool", json!({}))
        .add("Mcp-Param-X", "y")
        .send(s.addr)
        .await;
    assert_eq!(resp.code(), -32602);
}
