//! `toolwire gateway` with OAuth on its front: a real authorization server
//! (`oidc-provider`, as in the auth tests) issues one token for the
//! gateway and another for the upstream, a real `toolwire serve --http`
//! with its own OAuth is the upstream, and every byte the gateway sends
//! it passes through a recording relay. The downstream client's token
//! never reaches the upstream (spec: basic/authorization, token
//! passthrough MUST NOT); the upstream sees the gateway's own credential.

use super::auth::harness::{AuthServer, Toolwire, claims, free_port, request};
use super::gateway::{gateway_http_with, scratch, write_config};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A TCP relay to `target` that keeps a copy of everything its clients
/// send; its URL and the record.
async fn recording_relay(target: String) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let record = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&record);
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let Ok(outbound) = TcpStream::connect(&target).await else {
                continue;
            };
            let sink = Arc::clone(&sink);
            tokio::spawn(async move {
                let (mut in_r, mut in_w) = inbound.into_split();
                let (mut out_r, mut out_w) = outbound.into_split();
                let up = async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = in_r.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        sink.lock().expect("record").extend_from_slice(&buf[..n]);
                        if out_w.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = out_w.shutdown().await;
                };
                let down = async move {
                    let _ = tokio::io::copy(&mut out_r, &mut in_w).await;
                    let _ = in_w.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (url, record)
}

/// A modern `tools/call` or `tools/list` to the gateway with `token`.
async fn post(base: &str, token: Option<&str>, id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    let name = params["name"].as_str().map(str::to_owned);
    if let Some(n) = &name {
        headers.push(("Mcp-Name", n));
    }
    if let Some(b) = &bearer {
        headers.push(("Authorization", b));
    }
    let r = request(base, "POST", "/mcp", &headers, body.to_string().as_bytes()).await;
    let mut v = if r.status == 200 { r.json() } else { json!({}) };
    v["httpStatus"] = json!(r.status);
    v
}

#[tokio::test]
async fn the_downstream_token_never_reaches_the_upstream_and_lists_are_private() {
    let up_port = free_port();
    let up_resource = format!("http://127.0.0.1:{up_port}/mcp");
    let gw_port = free_port();
    let gw_base = format!("http://127.0.0.1:{gw_port}");
    let gw_resource = format!("{gw_base}/mcp");
    let auth = AuthServer::start(&gw_resource).await;
    // The upstream: toolwire serve with its own OAuth, for its own resource.
    let _upstream = Toolwire::start(up_port, &auth.issuer, &[], &[]).await;
    let (relay_url, record) = recording_relay(format!("127.0.0.1:{up_port}")).await;
    // The gateway's credential for the upstream, and a client's for the gateway.
    let upstream_token = auth.token("client-b", "mcp:tools", &up_resource).await;
    let downstream_token = auth.token("client-a", "mcp:tools", &gw_resource).await;
    assert_ne!(upstream_token, downstream_token);

    let dir = scratch("auth");
    let config = write_config(
        &dir,
        &format!("[upstreams.up]\nurl = {relay_url:?}\nbearer_env = \"UP_TOKEN\"\n"),
    );
    let addr = format!("127.0.0.1:{gw_port}");
    let (_gw, _url) = gateway_http_with(
        &config,
        &[
            "--http",
            &addr,
            "--public-url",
            &gw_base,
            "--auth-issuer",
            &auth.issuer,
            "--auth-leeway",
            "0",
        ],
        &[("UP_TOKEN", upstream_token.as_str())],
    )
    .await;

    // Auth is on at the gateway: no token, no call.
    let r = post(
        &gw_base,
        None,
        1,
        "tools/call",
        json!({"name": "up__echo", "arguments": {"text": "hi"}}),
    )
    .await;
    assert_eq!(r["httpStatus"], 401, "{r}");
    // With the token, the call goes through to the upstream.
    let r = post(
        &gw_base,
        Some(&downstream_token),
        2,
        "tools/call",
        json!({"name": "up__echo", "arguments": {"text": "through"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "through", "{r}");
    // With auth on, the merged lists are private.
    let list = post(
        &gw_base,
        Some(&downstream_token),
        3,
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(list["result"]["cacheScope"], "private", "{list}");
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "up__echo")),
        "{list}"
    );

    let seen = String::from_utf8_lossy(&record.lock().expect("record")).into_owned();
    assert!(
        seen.contains("tools/call") && seen.contains("through"),
        "the relay saw the forwarded call: {seen}"
    );
    let authorizations: Vec<&str> = seen
        .lines()
        .filter(|l| l.to_ascii_lowercase().starts_with("authorization:"))
        .collect();
    assert!(!authorizations.is_empty(), "{seen}");
    assert!(
        authorizations.iter().all(|l| l.trim_end()
            == format!("authorization: Bearer {upstream_token}")
            || l.trim_end() == format!("Authorization: Bearer {upstream_token}")),
        "only the gateway's own credential goes upstream: {authorizations:?}"
    );
    // Not the token, nor its signature, anywhere in what went upstream.
    let signature = downstream_token.rsplit('.').next().expect("a JWT");
    assert!(
        !seen.contains(&downstream_token) && !seen.contains(signature),
        "the downstream token was forwarded upstream"
    );
}

/// A gateway with OAuth in front of a `toolwire serve --http` upstream with
/// OAuth of its own, reached through a recording relay; the gateway lists
/// the upstream with its own token (`GW_UP`).
struct Front {
    auth: AuthServer,
    up_resource: String,
    gw_port: u16,
    gw_base: String,
    gw_resource: String,
    relay_url: String,
    record: Arc<Mutex<Vec<u8>>>,
    gateway_up: String,
    _upstream: Toolwire,
}

impl Front {
    async fn new() -> Self {
        let up_port = free_port();
        let up_resource = format!("http://127.0.0.1:{up_port}/mcp");
        let gw_port = free_port();
        let gw_base = format!("http://127.0.0.1:{gw_port}");
        let gw_resource = format!("{gw_base}/mcp");
        let auth = AuthServer::start(&gw_resource).await;
        let upstream = Toolwire::start(up_port, &auth.issuer, &[], &[]).await;
        let (relay_url, record) = recording_relay(format!("127.0.0.1:{up_port}")).await;
        let gateway_up = auth.token("client-b", "mcp:tools", &up_resource).await;
        Self {
            auth,
            up_resource,
            gw_port,
            gw_base,
            gw_resource,
            relay_url,
            record,
            gateway_up,
            _upstream: upstream,
        }
    }

    /// Starts the gateway with `[upstreams.up]` (the relay, `GW_UP`) and
    /// then `more`, in `dir`, with `envs` beside `GW_UP`.
    async fn gateway(
        &self,
        dir: &std::path::Path,
        more: &str,
        envs: &[(&str, &str)],
    ) -> tokio::process::Child {
        let config = write_config(
            dir,
            &format!(
                "[upstreams.up]\nurl = {:?}\nbearer_env = \"GW_UP\"\n{more}",
                self.relay_url
            ),
        );
        let addr = format!("127.0.0.1:{}", self.gw_port);
        let mut all = vec![("GW_UP", self.gateway_up.as_str())];
        all.extend_from_slice(envs);
        let (gw, _url) = gateway_http_with(
            &config,
            &[
                "--http",
                &addr,
                "--public-url",
                &self.gw_base,
                "--auth-issuer",
                &self.auth.issuer,
            ],
            &all,
        )
        .await;
        gw
    }

    /// What went upstream so far.
    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.record.lock().expect("record")).into_owned()
    }
}

/// A token of the provider's own key for `sub`, for `resource`.
async fn token_of(auth: &AuthServer, sub: &str, resource: &str) -> String {
    let mut c = claims(&auth.issuer, resource);
    c["sub"] = json!(sub);
    c["jti"] = json!(format!("{sub}-{resource}"));
    auth.sign("current", json!({}), c).await
}

/// The `Authorization` of each `tools/call` the relay saw, by the text of
/// its `echo`.
fn calls_by_text(seen: &str) -> Vec<(String, String)> {
    seen.split("POST /mcp HTTP/1.1\r\n")
        .filter(|r| r.contains("\"tools/call\""))
        .map(|r| {
            let auth = r
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("authorization")
                        .then(|| value.trim().to_owned())
                })
                .unwrap_or_default();
            let text = r
                .split("\"text\":\"")
                .nth(1)
                .and_then(|t| t.split('"').next())
                .unwrap_or_default()
                .to_owned();
            (text, auth)
        })
        .collect()
}

#[tokio::test]
async fn each_caller_reaches_a_per_subject_upstream_with_their_own_credential() {
    let front = Front::new().await;
    let Front {
        auth,
        up_resource,
        gw_base,
        gw_resource,
        gateway_up,
        ..
    } = &front;
    // Alice's and bob's own credentials for the upstream.
    let alice_up = token_of(auth, "alice", up_resource).await;
    let bob_up = token_of(auth, "bob", up_resource).await;
    let dir = scratch("per-subject");
    let bob_file = dir.join("bob-upstream-token");
    std::fs::write(&bob_file, format!("{bob_up}\n")).expect("write bob's");
    let more = format!(
        "[upstreams.up.per_subject.subjects]\nalice = \"${{ALICE_UP}}\"\nbob = {{ file = {:?} }}\n",
        bob_file.display().to_string()
    );
    let _gw = front
        .gateway(&dir, &more, &[("ALICE_UP", alice_up.as_str())])
        .await;
    let alice = token_of(auth, "alice", gw_resource).await;
    let bob = token_of(auth, "bob", gw_resource).await;
    let carol = token_of(auth, "carol", gw_resource).await;

    // Side by side: alice's and bob's calls at once, three rounds.
    for round in 0..3_u64 {
        let call = |token: String, who: &'static str, id: u64| {
            let base = gw_base.clone();
            async move {
                let text = format!("from {who} {round}");
                let r = post(
                    &base,
                    Some(&token),
                    id,
                    "tools/call",
                    json!({"name": "up__echo", "arguments": {"text": text}}),
                )
                .await;
                assert_eq!(
                    r["result"]["content"][0]["text"],
                    text.as_str(),
                    "{who}: {r}"
                );
            }
        };
        tokio::join!(
            call(alice.clone(), "alice", 10 + round),
            call(bob.clone(), "bob", 20 + round)
        );
    }
    // Carol has no credential at the upstream: her call is refused there,
    // naming the upstream, and is not sent with the gateway's own.
    let r = post(
        gw_base,
        Some(&carol),
        30,
        "tools/call",
        json!({"name": "up__echo", "arguments": {"text": "from carol"}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let refusal = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        refusal.contains("upstream \"up\"") && refusal.contains("no credential"),
        "{refusal}"
    );

    let seen = front.seen();
    let calls = calls_by_text(&seen);
    assert_eq!(
        calls.len(),
        6,
        "alice's and bob's calls, and not carol's: {calls:?}"
    );
    for (text, authorization) in &calls {
        let want = if text.starts_with("from alice") {
            &alice_up
        } else {
            assert!(text.starts_with("from bob"), "{text}");
            &bob_up
        };
        assert_eq!(
            authorization,
            &format!("Bearer {want}"),
            "{text} went upstream with another caller's (or the gateway's) credential"
        );
    }
    // The gateway's own credential still lists the upstream.
    assert!(
        seen.contains(&format!("Bearer {gateway_up}")),
        "the gateway listed with its own"
    );
    // No downstream token went upstream.
    for t in [&alice, &bob, &carol] {
        assert!(
            !seen.contains(t.as_str()),
            "a downstream token was forwarded"
        );
    }
}

#[tokio::test]
async fn passthrough_forwards_only_a_token_that_names_the_upstream() {
    let front = Front::new().await;
    let Front {
        auth,
        up_resource,
        gw_base,
        gw_resource,
        ..
    } = &front;
    let more = format!("passthrough = true\naudience = {up_resource:?}\n");
    let _gw = front.gateway(&scratch("passthrough"), &more, &[]).await;
    // Alice's and bob's tokens for both the gateway and the upstream;
    // carol's for the gateway alone.
    let for_both = |sub: &'static str| {
        let mut c = claims(&auth.issuer, gw_resource);
        c["aud"] = json!([gw_resource, up_resource]);
        c["sub"] = json!(sub);
        c["jti"] = json!(format!("{sub}-both"));
        auth.sign("current", json!({}), c)
    };
    let alice = for_both("alice").await;
    let bob = for_both("bob").await;
    let gateway_only = token_of(auth, "carol", gw_resource).await;

    // Alice and bob side by side.
    let (a, b) = tokio::join!(
        post(
            gw_base,
            Some(&alice),
            1,
            "tools/call",
            json!({"name": "up__echo", "arguments": {"text": "alice's"}}),
        ),
        post(
            gw_base,
            Some(&bob),
            2,
            "tools/call",
            json!({"name": "up__echo", "arguments": {"text": "bob's"}}),
        ),
    );
    assert_eq!(a["result"]["content"][0]["text"], "alice's", "{a}");
    assert_eq!(b["result"]["content"][0]["text"], "bob's", "{b}");
    let r = post(
        gw_base,
        Some(&gateway_only),
        3,
        "tools/call",
        json!({"name": "up__echo", "arguments": {"text": "not for the upstream"}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let refusal = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        refusal.contains("upstream \"up\"") && refusal.contains("aud"),
        "{refusal}"
    );

    let seen = front.seen();
    let mut calls = calls_by_text(&seen);
    calls.sort();
    assert_eq!(
        calls,
        [
            ("alice's".to_owned(), format!("Bearer {alice}")),
            ("bob's".to_owned(), format!("Bearer {bob}")),
        ],
        "each caller's own token went with their own call, and only those that name the upstream"
    );
    assert!(
        !seen.contains(&gateway_only),
        "a token not for the upstream went upstream"
    );
}

/// The claims of a JWT, read without checking it (the upstream checked it).
fn payload(jwt: &str) -> Value {
    use base64::Engine as _;
    let part = jwt.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

#[tokio::test]
async fn token_exchange_gives_each_caller_an_upstream_token_of_their_own_and_keeps_it() {
    let front = Front::new().await;
    let Front {
        auth,
        up_resource,
        gw_base,
        gw_resource,
        ..
    } = &front;
    let more = format!(
        "[upstreams.up.token_exchange]\ntoken_endpoint = \"{}/token\"\nclient_id = \"gateway\"\n\
         client_secret_env = \"GW_SECRET\"\nresource = {up_resource:?}\n",
        auth.issuer
    );
    let _gw = front
        .gateway(
            &scratch("token-exchange"),
            &more,
            &[("GW_SECRET", "gateway-secret")],
        )
        .await;
    let alice = token_of(auth, "alice", gw_resource).await;
    let bob = token_of(auth, "bob", gw_resource).await;
    let mallory = token_of(auth, "mallory", gw_resource).await;

    let mut took = Vec::new();
    for round in 0..3_u64 {
        let call = |token: String, who: &'static str, id: u64| {
            let base = gw_base.clone();
            async move {
                let text = format!("from {who} {round}");
                let started = std::time::Instant::now();
                let r = post(
                    &base,
                    Some(&token),
                    id,
                    "tools/call",
                    json!({"name": "up__echo", "arguments": {"text": text}}),
                )
                .await;
                assert_eq!(
                    r["result"]["content"][0]["text"],
                    text.as_str(),
                    "{who}: {r}"
                );
                started.elapsed()
            }
        };
        let (a, b) = tokio::join!(
            call(alice.clone(), "alice", 10 + round),
            call(bob.clone(), "bob", 20 + round)
        );
        took.push((a, b));
        // Exchanged once per caller, then kept.
        assert_eq!(auth.exchanges().await, 2, "round {round}");
    }
    eprintln!("token exchange: alice's and bob's calls by round (cold, then warm): {took:?}");
    // Mallory's exchange is refused: her call fails naming the upstream,
    // and nothing is sent for her with any other credential.
    let r = post(
        gw_base,
        Some(&mallory),
        30,
        "tools/call",
        json!({"name": "up__echo", "arguments": {"text": "from mallory"}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let refusal = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        refusal.contains("upstream \"up\"") && refusal.contains("token exchange"),
        "{refusal}"
    );
    assert!(!refusal.contains(&mallory), "no token in the error");

    let seen = front.seen();
    let calls = calls_by_text(&seen);
    assert_eq!(
        calls.len(),
        6,
        "alice's and bob's, not mallory's: {calls:?}"
    );
    for (text, authorization) in &calls {
        let who = if text.starts_with("from alice") {
            "alice"
        } else {
            "bob"
        };
        let token = authorization
            .strip_prefix("Bearer ")
            .expect("a bearer token");
        let claims = payload(token);
        assert_eq!(
            claims["sub"], who,
            "{text} went upstream as {}",
            claims["sub"]
        );
        assert_eq!(claims["aud"], up_resource.as_str(), "{text}");
        assert_eq!(claims["act"]["sub"], "gateway", "{text}");
    }
    for t in [&alice, &bob, &mallory] {
        assert!(
            !seen.contains(t.as_str()),
            "a downstream token went upstream"
        );
    }
}
