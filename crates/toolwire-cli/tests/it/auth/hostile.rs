//! The resource server against a hostile (or unlucky) client: tokens with
//! out-of-range times, a `crit` header, another `typ`; a key set that
//! cannot be fetched; a flood of made-up opaque tokens. Every answer is
//! checked with its status and challenge: a refusal is a `401`, our own
//! failure a `503`, a client over its budget a `429`, and never a dropped
//! connection.

use super::harness::{AuthServer, Toolwire, claims, echo, free_port, now, pair};
use serde_json::json;
use std::net::Ipv4Addr;
use std::time::Duration;

/// 2^63: past what the system clock can hold, as seconds since the epoch.
const HUGE: u64 = 1 << 63;

#[tokio::test]
async fn a_valid_token_gets_503_not_401_while_the_key_set_cannot_be_fetched() {
    let (auth, tw) = pair(&[], &[]).await;
    auth.set_jwks_down(true).await;
    let good = auth.token("client-a", "mcp:tools", &tw.resource).await;
    // The first fetch fails, and so does the answer to the next token,
    // sent well within --auth-jwks-refresh (1 s): the key set is not
    // loaded, so nothing says the token is bad.
    for id in [1, 2] {
        let r = tw.call(Some(&good), id, "tools/call", echo("x")).await;
        assert_eq!(r.status, 503, "request {id}: {}", r.text());
        assert_eq!(r.header("retry-after"), Some("5"), "request {id}");
        assert!(r.header("www-authenticate").is_none(), "request {id}");
        assert_eq!(r.json()["error"]["code"], -32603, "request {id}");
    }
    // Once the key set loads, the same token is served, and a key it
    // does not publish is the token's fault again.
    auth.set_jwks_down(false).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = tw.call(Some(&good), 3, "tools/call", echo("back")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "back");
    let rogue = auth
        .sign("rogue", json!({}), claims(&auth.issuer, &tw.resource))
        .await;
    let r = tw.call(Some(&rogue), 4, "tools/call", echo("x")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.challenge(),
        tw.invalid("the token is signed with an unknown key")
    );
}

#[tokio::test]
async fn out_of_range_times_and_crit_headers_get_401_not_a_dropped_connection() {
    let (auth, tw) = pair(&[], &[]).await;
    let (iss, res) = (auth.issuer.as_str(), tw.resource.as_str());
    let with = |claim: &str, value: serde_json::Value| {
        let mut c = claims(iss, res);
        c[claim] = value;
        c
    };
    let cases = [
        (
            "exp 2^63",
            auth.sign("current", json!({}), with("exp", json!(HUGE)))
                .await,
            "the token's exp is out of range",
        ),
        (
            "exp past u64",
            auth.sign("current", json!({}), with("exp", json!(1e20)))
                .await,
            "the token is invalid",
        ),
        (
            "nbf 2^63",
            auth.sign("current", json!({}), with("nbf", json!(HUGE)))
                .await,
            "the token is not valid yet",
        ),
        (
            "an unknown crit extension",
            auth.sign(
                "current",
                json!({"crit": ["urn:example:must-understand"], "urn:example:must-understand": 1}),
                claims(iss, res),
            )
            .await,
            "the token has a critical header parameter (crit) that is not understood",
        ),
        (
            "crit naming a registered parameter",
            auth.sign(
                "current",
                json!({"crit": ["exp"], "exp": now() + 300}),
                claims(iss, res),
            )
            .await,
            "the token has a critical header parameter (crit) that is not understood",
        ),
        (
            "typ JWT, not accepted by default",
            auth.sign("current", json!({"typ": "JWT"}), claims(iss, res))
                .await,
            "the token is not a JWT access token (typ at+jwt)",
        ),
    ];
    for (id, (case, token, why)) in (1..).zip(cases) {
        let r = tw.call(Some(&token), id, "tools/call", echo("x")).await;
        assert_eq!(r.status, 401, "{case}: {}", r.text());
        assert_eq!(r.challenge(), tw.invalid(why), "{case}");
    }
    // `iat` is not checked: a huge one is no reason to refuse, nor to fall
    // over.
    let token = auth
        .sign("current", json!({}), with("iat", json!(HUGE)))
        .await;
    let r = tw.call(Some(&token), 20, "tools/call", echo("iat")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // And the server is still there.
    let good = auth.token("client-a", "mcp:tools", res).await;
    let r = tw.call(Some(&good), 21, "tools/call", echo("alive")).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn the_leeway_covers_exp_and_named_token_types_are_accepted() {
    let (auth, tw) = pair(
        &[
            "--auth-leeway",
            "30",
            "--auth-token-type",
            "at+jwt",
            "--auth-token-type",
            "JWT",
        ],
        &[],
    )
    .await;
    let (iss, res) = (auth.issuer.as_str(), tw.resource.as_str());
    let expired_by = |secs: u64| {
        let mut c = claims(iss, res);
        c["iat"] = json!(now() - 600);
        c["exp"] = json!(now() - secs);
        c
    };
    // Expired 5 s ago, within the leeway: served (and again from the cache).
    let late = auth.sign("current", json!({}), expired_by(5)).await;
    for id in [1, 2] {
        let r = tw.call(Some(&late), id, "tools/call", echo("late")).await;
        assert_eq!(r.status, 200, "request {id}: {}", r.text());
    }
    let gone = auth.sign("current", json!({}), expired_by(120)).await;
    let r = tw.call(Some(&gone), 3, "tools/call", echo("x")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(r.challenge(), tw.invalid("the token has expired"));

    for (id, typ) in [(4, "JWT"), (5, "application/jwt"), (6, "at+jwt")] {
        let token = auth
            .sign("current", json!({"typ": typ}), claims(iss, res))
            .await;
        let r = tw.call(Some(&token), id, "tools/call", echo(typ)).await;
        assert_eq!(r.status, 200, "typ {typ}: {}", r.text());
    }
    let other = auth
        .sign("current", json!({"typ": "secevent+jwt"}), claims(iss, res))
        .await;
    let r = tw.call(Some(&other), 7, "tools/call", echo("x")).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.challenge(),
        tw.invalid("the token is not a JWT access token (typ at+jwt or jwt)")
    );
}

#[tokio::test]
async fn each_client_has_its_own_budget_of_introspections() {
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
        &[
            "--auth-introspection",
            &introspection,
            "--auth-introspection-rate",
            "3/h",
        ],
        &envs,
    )
    .await;
    let flooder = Some(Ipv4Addr::new(127, 0, 0, 1));
    // Three made-up tokens use up the budget; the fourth is not asked
    // about, and the client is told to wait, not that its token is bad.
    for id in 0..3 {
        let bad = format!("made-up-opaque-token-{id}");
        let r = tw
            .call_from(flooder, Some(&bad), id, "tools/call", echo("x"))
            .await;
        assert_eq!(r.status, 401, "token {id}: {}", r.text());
        assert_eq!(r.challenge(), tw.invalid("the token is not active"));
    }
    let r = tw
        .call_from(
            flooder,
            Some("made-up-opaque-token-3"),
            3,
            "tools/call",
            echo("x"),
        )
        .await;
    assert_eq!(r.status, 429, "{}", r.text());
    assert!(r.header("www-authenticate").is_none());
    let wait: u64 = r
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((1..=3600).contains(&wait), "Retry-After {wait}");
    let body = r.json();
    assert_eq!(body["error"]["code"], -31429, "{body}");
    assert_eq!(body["error"]["data"]["retryAfterMs"], wait * 1000, "{body}");
    assert_eq!(auth.introspections().await, 3);
    // A token already refused is refused again without the budget.
    let r = tw
        .call_from(
            flooder,
            Some("made-up-opaque-token-0"),
            4,
            "tools/call",
            echo("x"),
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.text());

    // Another client is served meanwhile.
    let other = Some(Ipv4Addr::new(127, 0, 0, 2));
    let opaque = auth.token("client-opaque", "mcp:tools", &resource).await;
    let r = tw
        .call_from(other, Some(&opaque), 5, "tools/call", echo("served"))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "served");
    assert_eq!(auth.introspections().await, 4);
}
