//! OAuth 2.1 resource server, end to end: a real authorization server (the
//! pinned npm `oidc-provider`, on Node 22, started from
//! `tests/oidc/provider.mjs`) issues tokens with the client-credentials
//! grant and resource indicators; the real `toolwire serve --http` checks
//! them. Every refusal is checked with its exact status and
//! `WWW-Authenticate` challenge. `client.rs`: the OAuth client
//! (`toolwire auth login`, `toolwire::oauth`) against the same two;
//! `hostile.rs`: hostile tokens and floods, and a key set that is down.
//!
//! Node and `node_modules` come from `scripts/conformance-install`, which
//! the first test here runs (it does nothing when they match the
//! lockfile); a failed install fails the tests, never skips them.

mod client;
pub(crate) mod harness;
mod hostile;
mod tasks;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use harness::{AuthServer, Toolwire, claims, echo, free_port, now, pair, request};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

#[tokio::test]
async fn metadata_is_served_at_both_well_known_forms_from_the_public_url() {
    let (auth, tw) = pair(&[], &[]).await;
    let expected = json!({
        "resource": tw.resource,
        "authorization_servers": [auth.issuer],
        "scopes_supported": ["mcp:tools"],
        "bearer_methods_supported": ["header"],
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = request(&tw.base, "GET", path, &[], b"").await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.json(), expected, "{path}");
    }
}

#[tokio::test]
async fn missing_and_invalid_tokens_get_401_with_the_exact_challenge() {
    let (auth, tw) = pair(&[], &[]).await;
    let base_challenge = format!(
        "Bearer resource_metadata=\"{}\", scope=\"mcp:tools\"",
        tw.metadata_url()
    );

    // No token at all: no error code (RFC 6750 §3.1), no id (the body was
    // not read).
    let r = tw.call(None, 1, "tools/call", echo("hi")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(r.challenge(), base_challenge);
    let body = r.json();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["error"]["code"], -32600);
    assert!(body.get("id").is_none(), "{body}");

    // A valid token works.
    let good = auth.token("client-a", "mcp:tools", &tw.resource).await;
    let r = tw.call(Some(&good), 2, "tools/call", echo("hi")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "hi");

    let iss = auth.issuer.as_str();
    let res = tw.resource.as_str();
    let mut expired = claims(iss, res);
    expired["iat"] = json!(now() - 600);
    expired["exp"] = json!(now() - 300);
    let mut early = claims(iss, res);
    early["nbf"] = json!(now() + 300);
    let mut wrong_iss = claims(iss, res);
    wrong_iss["iss"] = json!("http://127.0.0.1:1/evil");
    let other_as = AuthServer::start(res).await;
    // A token as the provider issues it, with one claim changed after
    // signing.
    let tampered = {
        let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
        let mut payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).expect("b64")).expect("json");
        payload["scope"] = json!("mcp:tools mcp:define");
        parts[1] = URL_SAFE_NO_PAD.encode(payload.to_string());
        parts.join(".")
    };
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"at+jwt"}"#),
        URL_SAFE_NO_PAD.encode(claims(iss, res).to_string())
    );
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "expired",
            auth.sign("current", json!({}), expired).await,
            "the token has expired",
        ),
        (
            "not yet valid",
            auth.sign("current", json!({}), early).await,
            "the token is not valid yet",
        ),
        (
            "wrong audience",
            auth.token("client-a", "mcp:tools", "http://other.example/mcp")
                .await,
            "the token is not for this resource",
        ),
        (
            "wrong issuer",
            auth.sign("current", json!({}), wrong_iss).await,
            "the token is from another issuer",
        ),
        (
            "tampered signature",
            tampered,
            "the token's signature does not verify",
        ),
        (
            "alg none",
            none,
            "the token is not a JWT signed with an accepted algorithm",
        ),
        (
            "HS256 keyed with the public key",
            auth.sign("hs-public", json!({}), claims(iss, res)).await,
            "the token's signature algorithm is not accepted",
        ),
        (
            "unknown kid",
            auth.sign("rogue", json!({}), claims(iss, res)).await,
            "the token is signed with an unknown key",
        ),
        (
            "another authorization server",
            other_as.token("client-a", "mcp:tools", res).await,
            "the token is signed with an unknown key",
        ),
    ];
    for (id, (case, token, why)) in (10..).zip(cases) {
        let r = tw.call(Some(&token), id, "tools/call", echo("x")).await;
        assert_eq!(r.status, 401, "{case}: {}", r.text());
        assert_eq!(r.challenge(), tw.invalid(why), "{case}");
        assert_eq!(r.json()["error"]["code"], -32600, "{case}");
    }

    // Another server's token, for its own issuer, signed by a key it
    // publishes: still refused here, by issuer.
    let mut theirs = claims(&other_as.issuer, res);
    theirs["sub"] = json!("client-b");
    let theirs = other_as.sign("current", json!({}), theirs).await;
    let r = tw.call(Some(&theirs), 30, "tools/call", echo("x")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.challenge(),
        tw.invalid("the token is signed with an unknown key")
    );

    // A token in the query string: 400, whatever else the request has.
    let r = request(
        &tw.base,
        "POST",
        &format!("/mcp?access_token={good}"),
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.challenge(),
        format!(
            "{base_challenge}, error=\"invalid_request\", error_description=\"access tokens must not be sent in the query string\""
        )
    );

    // Tokens are never logged, not even at trace level.
    let log = tw.log();
    assert!(
        log.contains("bearer token refused"),
        "trace logging is on: {log}"
    );
    for (what, token) in [("good", &good), ("theirs", &theirs)] {
        let signature = token.rsplit('.').next().expect("signature");
        assert!(!log.contains(signature), "the {what} token is in the log");
    }
}

#[tokio::test]
async fn scopes_gate_calls_and_lists_with_one_403_challenge() {
    let (auth, tw) = pair(&["--scope-for", "add=mcp:define"], &[]).await;
    let narrow = auth.token("client-a", "mcp:tools", &tw.resource).await;
    let broad = auth
        .token("client-b", "mcp:tools mcp:define", &tw.resource)
        .await;

    // The narrow token sees neither the define tools nor `add`, and the
    // list is private.
    let r = tw.call(Some(&narrow), 1, "tools/list", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let list = r.json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    for hidden in ["define_tool", "undefine_tool", "add"] {
        assert!(!names.contains(&hidden), "{hidden} listed: {names:?}");
    }
    assert_eq!(list["result"]["cacheScope"], "private");
    let r = tw.call(Some(&broad), 2, "tools/list", json!({})).await;
    let list = r.json();
    let all: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for shown in ["define_tool", "undefine_tool", "add", "echo"] {
        assert!(all.contains(&shown), "{shown} not listed: {all:?}");
    }
    assert_eq!(list["result"]["cacheScope"], "private");

    // Calling without the scope: 403, every needed scope in one challenge,
    // and the request's id in the error.
    let define = json!({"name": "define_tool", "arguments": {"name": "hello", "text": "hi"}});
    let r = tw
        .call(Some(&narrow), 3, "tools/call", define.clone())
        .await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        r.challenge(),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"mcp:define mcp:tools\", resource_metadata=\"{}\", error_description=\"the access token lacks a scope this operation needs\"",
            tw.metadata_url()
        )
    );
    assert_eq!(r.json()["id"], 3);
    let r = tw.call(Some(&broad), 4, "tools/call", define).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["isError"], Value::Null, "{}", r.text());

    // A token without the server-wide scope is refused from the head.
    let other = auth.token("client-a", "mcp:define", &tw.resource).await;
    let r = tw.call(Some(&other), 5, "tools/call", echo("x")).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        r.challenge()
            .starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp:tools\", "),
        "{}",
        r.challenge()
    );
}

#[tokio::test]
async fn a_rotated_signing_key_is_fetched_on_its_first_token() {
    let (auth, tw) = pair(&[], &[]).await;
    let before = auth.token("client-a", "mcp:tools", &tw.resource).await;
    let r = tw.call(Some(&before), 1, "tools/call", echo("a")).await;
    assert_eq!(r.status, 200, "{}", r.text());

    auth.rotate().await;
    let after = auth.token("client-a", "mcp:tools", &tw.resource).await;
    let kid = |t: &str| -> Value {
        let header = t.split('.').next().expect("header");
        serde_json::from_slice::<Value>(&URL_SAFE_NO_PAD.decode(header).expect("b64"))
            .expect("json")["kid"]
            .clone()
    };
    assert_ne!(
        kid(&before),
        kid(&after),
        "the provider signs with the new key"
    );
    // The key set is refetched at most once a second (--auth-jwks-refresh 1).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = tw.call(Some(&after), 2, "tools/call", echo("b")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "b");
}

/// The authorization server, and `toolwire serve` checking its tokens by
/// introspection (as the client `toolwire`), with the resource's URL.
async fn introspecting() -> (AuthServer, Toolwire, String) {
    let envs = [
        ("TOOLWIRE_AUTH_CLIENT_ID", "toolwire"),
        ("TOOLWIRE_AUTH_CLIENT_SECRET", "toolwire-secret"),
    ];
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = AuthServer::start(&resource).await;
    let introspection = format!("{}/token/introspection", auth.issuer);
    let tw = Toolwire::start(
        port,
        &auth.issuer,
        &["--auth-introspection", &introspection],
        &envs,
    )
    .await;
    (auth, tw, resource)
}

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection() {
    let (auth, tw, resource) = introspecting().await;
    let opaque = auth.token("client-opaque", "mcp:tools", &resource).await;
    assert_eq!(opaque.matches('.').count(), 0, "an opaque token: {opaque}");
    let r = tw.call(Some(&opaque), 1, "tools/call", echo("o")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // For another resource: refused by audience.
    let elsewhere = auth
        .token("client-opaque", "mcp:tools", "http://other.example/mcp")
        .await;
    let r = tw.call(Some(&elsewhere), 2, "tools/call", echo("o")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.challenge(),
        tw.invalid("the token is not for this resource")
    );
    let r = tw
        .call(Some("not-a-token-at-all"), 3, "tools/call", echo("o"))
        .await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(r.challenge(), tw.invalid("the token is not active"));
    assert!(
        !tw.log().contains(&opaque),
        "the opaque token is in the log"
    );
}

#[tokio::test]
async fn a_flood_of_one_bad_opaque_token_is_introspected_once() {
    let (auth, tw, _) = introspecting().await;
    let tw = std::sync::Arc::new(tw);
    assert_eq!(auth.introspections().await, 0);
    let bad = "revoked-or-made-up-opaque-token";
    // Ten at once, then ten one after another.
    let mut flood = tokio::task::JoinSet::new();
    for i in 0..10 {
        let tw = std::sync::Arc::clone(&tw);
        flood.spawn(async move { tw.call(Some(bad), i, "tools/call", echo("x")).await });
    }
    while let Some(r) = flood.join_next().await {
        let r = r.expect("request task");
        assert_eq!(r.status, 401, "{}", r.text());
        assert_eq!(r.challenge(), tw.invalid("the token is not active"));
    }
    for i in 10..20 {
        let r = tw.call(Some(bad), i, "tools/call", echo("x")).await;
        assert_eq!(r.status, 401, "{}", r.text());
    }
    assert_eq!(
        auth.introspections().await,
        1,
        "the authorization server saw one introspection for 20 identical bad tokens"
    );
    // Another bad token is asked about on its own.
    let r = tw
        .call(Some("another-bad-token"), 21, "tools/call", echo("x"))
        .await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(auth.introspections().await, 2);
}

#[tokio::test]
async fn request_state_and_legacy_sessions_belong_to_their_principal() {
    let (auth, tw) = pair(&[], &[]).await;
    let a = auth.token("client-a", "mcp:tools", &tw.resource).await;
    let b = auth.token("client-b", "mcp:tools", &tw.resource).await;

    // A's sealed requestState, retried with B's token, fails verification.
    let confirm = json!({"name": "confirm_action", "arguments": {"action": "deploy"}});
    let r = tw.call(Some(&a), 1, "tools/call", confirm.clone()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let first = r.json();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().expect("state");
    let mut retry = confirm;
    retry["requestState"] = json!(state);
    retry["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let r = tw.call(Some(&b), 2, "tools/call", retry.clone()).await;
    let refused = r.json();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("requestState failed verification")),
        "{refused}"
    );
    let r = tw.call(Some(&a), 3, "tools/call", retry).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "confirmed: deploy"
    );

    // A legacy session opened by A is not found with B's token.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "0"}}});
    let r = tw.post(Some(&a), &init, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let sid = r.header("mcp-session-id").expect("session id").to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let session = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = tw.post(Some(&b), &list, &session).await;
    assert_eq!(r.status, 404, "{}", r.text());
    let r = request(
        &tw.base,
        "DELETE",
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {b}")),
            ("Mcp-Session-Id", &sid),
        ],
        b"",
    )
    .await;
    assert_eq!(r.status, 404, "B cannot end A's session: {}", r.text());
    let r = tw.post(Some(&a), &list, &session).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["result"]["tools"].is_array(), "{}", r.text());
}

#[tokio::test]
async fn a_non_loopback_address_needs_auth_or_no_auth() {
    let out = Command::new(BIN)
        .args(["serve", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run toolwire");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("without authentication")
            && err.contains("--auth-issuer")
            && err.contains("--no-auth"),
        "{err}"
    );
    let mut open = Command::new(BIN)
        .args(["serve", "--http", "0.0.0.0:0", "--no-auth"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(open.stderr.take().expect("stderr")).lines();
    let started = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving MCP at") {
                return true;
            }
        }
        false
    })
    .await
    .expect("in time");
    assert!(started, "--no-auth serves");
}
