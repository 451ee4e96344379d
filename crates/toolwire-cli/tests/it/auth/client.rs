//! The OAuth 2.1 client with both halves real: `toolwire auth login`
//! completes the authorization code flow against `oidc-provider`
//! (`tests/oidc/provider.mjs`, its user approving itself) through a
//! browser that follows redirects (`tests/oidc/browser.mjs`); then
//! `toolwire call` reaches a `toolwire serve --http` protected by the same
//! provider, refreshes expired tokens, and steps up to a scope only one
//! tool needs. No token reaches any output, at any log level.

use super::harness::{AuthServer, Toolwire, free_port, node, oidc_script};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::process::Command;
use toolwire::ClientBuilder;
use toolwire::oauth::{
    AuthProvider as _, Challenge, LoopbackRedirect, MemoryTokenStore, OAuthConfig, OAuthProvider,
};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// The authorization server, then `toolwire serve --http` checking its
/// tokens (`mcp:tools` for everything, `mcp:define` also for `add`).
async fn servers(ttl_secs: u64) -> (AuthServer, Toolwire) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = AuthServer::with_ttl(&resource, ttl_secs).await;
    let tw = Toolwire::start(port, &auth.issuer, &["--scope-for", "add=mcp:define"], &[]).await;
    (auth, tw)
}

/// `$BROWSER` for the CLI: the browser script under Node.
fn browser() -> String {
    format!(
        "{} {}",
        node().display(),
        oidc_script("browser.mjs").display()
    )
}

/// Runs `toolwire ARGS` with its token file in `config`, trace logging on.
async fn toolwire(args: &[&str], config: &Path) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("TOOLWIRE_CONFIG_DIR", config)
        .env("BROWSER", browser())
        .env("TOOLWIRE_LOG", "trace")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run toolwire");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolwire-oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The token file.
fn stored(config: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(config.join("oauth.json")).expect("the token file"))
        .expect("json")
}

/// The secrets in the token file now: tokens, and the client secret if
/// the registration has one.
fn secrets(config: &Path) -> Vec<String> {
    let file = stored(config);
    let mut found = Vec::new();
    for entry in file["tokens"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
    {
        for key in ["access_token", "refresh_token"] {
            found.extend(entry[key].as_str().map(str::to_owned));
        }
    }
    for entry in file["clients"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
    {
        found.extend(entry["client_secret"].as_str().map(str::to_owned));
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_call_refresh_and_step_up_against_a_protected_toolwire() {
    // Access tokens live 5 s: the client's 30 s margin renews them before
    // every request, and a few seconds' wait makes them expired for the
    // server too.
    let (auth, tw) = servers(5).await;
    let config = temp_dir("e2e");
    let mut outputs: Vec<String> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let tokens = |config: &Path| stored(config)["tokens"][&tw.resource].clone();

    // Login: discovery from toolwire's 401, registration, the code flow.
    let (ok, out, err) = toolwire(&["auth", "login", &tw.resource], config.as_path()).await;
    assert!(ok, "login failed: {err}");
    assert!(out.contains(&format!("issuer:   {}", auth.issuer)), "{out}");
    assert!(out.contains("scopes:   mcp:tools\n"), "{out}");
    assert!(out.contains("refresh:  yes"), "{out}");
    assert!(err.contains("registering with"), "{err}");
    outputs.extend([out, err]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(config.join("oauth.json"))
            .expect("token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    let first = tokens(&config);
    assert_eq!(first["resource"], tw.resource.as_str());
    // A JWT access token for toolwire's canonical URI (RFC 8707, RFC 9068).
    let jwt = first["access_token"].as_str().expect("access token");
    let payload = jwt.split('.').nth(1).expect("a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("json");
    assert_eq!(claims["aud"], tw.resource.as_str(), "{claims}");
    assert_eq!(claims["iss"], auth.issuer.as_str(), "{claims}");
    assert_eq!(claims["sub"], "alice", "{claims}");
    let client_id = stored(&config)["clients"][&auth.issuer]["client_id"].clone();
    assert!(client_id.is_string(), "registered: {}", stored(&config));
    seen.extend(secrets(&config));

    // The token has expired for the server too: the call refreshes it
    // first, without the user.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (ok, out, err) = toolwire(&["call", &tw.resource, "echo", "text=hi"], &config).await;
    assert!(ok, "call failed: {err}");
    assert!(out.contains("hi"), "{out}");
    assert!(err.contains("refreshed the token"), "{err}");
    assert!(!err.contains("authorizing at"), "no login: {err}");
    let refreshed = tokens(&config);
    assert_ne!(refreshed["access_token"], first["access_token"]);
    seen.extend(secrets(&config));
    outputs.extend([out, err]);

    // A token the client believes valid but the server has seen expire:
    // the server's 401 makes the client refresh and send it again.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let mut file = stored(&config);
    file["tokens"][&tw.resource]["expires_at"] = Value::from(u64::MAX / 2);
    std::fs::write(config.join("oauth.json"), file.to_string()).expect("edit the token file");
    let (ok, out, err) = toolwire(&["call", &tw.resource, "echo", "text=again"], &config).await;
    assert!(ok, "call after a 401 failed: {err}");
    assert!(out.contains("again"), "{out}");
    assert!(err.contains("refreshed the token"), "{err}");
    assert!(!err.contains("authorizing at"), "no login: {err}");
    assert!(
        tw.log().contains("the token has expired"),
        "the server refused the expired token first"
    );
    seen.extend(secrets(&config));
    outputs.extend([out, err]);

    // Step-up: `add` needs mcp:define, which the token lacks. The server
    // answers 403 insufficient_scope; the client authorizes again (in the
    // browser) with the union of the scopes, with the same registration.
    let (ok, out, err) = toolwire(
        &["call", &tw.resource, "add", "--args", r#"{"a":2,"b":3}"#],
        &config,
    )
    .await;
    assert!(ok, "step-up call failed: {err}");
    assert!(out.contains('5'), "{out}");
    assert!(err.contains("authorizing at"), "{err}");
    let stepped = tokens(&config);
    let scopes: BTreeSet<&str> = stepped["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(scopes, BTreeSet::from(["mcp:define", "mcp:tools"]));
    assert_eq!(
        stored(&config)["clients"][&auth.issuer]["client_id"],
        client_id,
        "the step-up reuses the registration"
    );
    seen.extend(secrets(&config));
    outputs.extend([out, err]);

    // A second login, on another loopback port: the registration is
    // reused (RFC 8252 §7.3: a loopback redirect's port may vary).
    let (ok, out, err) = toolwire(&["auth", "login", &tw.resource], &config).await;
    assert!(ok, "second login failed: {err}");
    assert!(err.contains("reusing the registration"), "{err}");
    assert!(!err.contains("registering with"), "{err}");
    assert_eq!(
        stored(&config)["clients"][&auth.issuer]["client_id"],
        client_id,
        "the second login reuses the registration"
    );
    seen.extend(secrets(&config));
    outputs.extend([out, err]);

    let (ok, out, err) = toolwire(&["auth", "status"], &config).await;
    assert!(ok, "{err}");
    assert!(out.contains(&tw.resource), "{out}");
    outputs.extend([out, err]);
    let (ok, out, err) = toolwire(&["auth", "logout", &tw.resource], &config).await;
    assert!(ok, "{err}");
    outputs.extend([out, err]);
    let (_, out, err) = toolwire(&["auth", "status"], &config).await;
    assert!(!out.contains(&tw.resource), "{out}");
    outputs.extend([out, err]);

    // TOOLWIRE_LOG=trace everywhere: not one token (nor a JWT's signature)
    // in any output of the client or the server.
    outputs.push(tw.log());
    assert!(seen.len() >= 6, "tokens of every step: {}", seen.len());
    for secret in &seen {
        let signature = secret.rsplit('.').next().unwrap_or(secret);
        for text in &outputs {
            assert!(!text.contains(secret.as_str()), "a token was printed");
            assert!(!text.contains(signature), "a token's signature was printed");
        }
    }
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_commands_without_a_stored_token_say_to_log_in() {
    let (_auth, tw) = servers(300).await;
    let config = temp_dir("nologin");
    let (ok, _, err) = toolwire(&["list", &tw.resource], &config).await;
    assert!(!ok);
    assert!(
        err.contains(&format!("run `toolwire auth login {}`", tw.resource)),
        "{err}"
    );
    // --bearer-env sends that token instead: the server's refusal (a 401
    // with a JSON-RPC error) is reported as is, and the token is not
    // printed.
    let out = Command::new(BIN)
        .args(["list", &tw.resource, "--bearer-env", "TEST_TOKEN"])
        .env("TOOLWIRE_CONFIG_DIR", &config)
        .env("TEST_TOKEN", "not-a-valid-token-7f3a")
        .env("TOOLWIRE_LOG", "trace")
        .output()
        .await
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("Unauthorized: the token is not a JWT"),
        "{err}"
    );
    assert!(!err.contains("auth login"), "{err}");
    assert!(!err.contains("not-a-valid-token-7f3a"), "{err}");
}

/// A provider whose redirect handler is the test browser, counting the
/// authorizations that needed the user.
fn provider(mcp: &str, config: OAuthConfig, logins: Arc<AtomicUsize>) -> OAuthProvider {
    let node = node();
    let script = oidc_script("browser.mjs");
    let redirect = LoopbackRedirect::new(move |url| {
        logins.fetch_add(1, Ordering::SeqCst);
        // tokio reaps the browser once it exits.
        let _ = Command::new(&node)
            .arg(&script)
            .arg(url.as_str())
            .spawn()
            .expect("start the browser");
    })
    .with_timeout(Duration::from_secs(60));
    OAuthProvider::new(mcp, config)
        .expect("provider")
        .with_store(MemoryTokenStore::new())
        .with_redirect(redirect)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_and_a_step_up_adds_a_scope() {
    // Tokens live 5 s: within the provider's expiry margin at once.
    let (auth, tw) = servers(5).await;
    let logins = Arc::new(AtomicUsize::new(0));
    let provider = provider(&tw.resource, OAuthConfig::new(), logins.clone());
    let first = provider.login().await.expect("login");
    assert_eq!(logins.load(Ordering::SeqCst), 1);
    assert_eq!(first.scopes, ["mcp:tools"]);
    assert!(first.refresh_token.is_some());

    // Refresh on expiry: a new access token, no user involved.
    let header = provider
        .authorization()
        .await
        .expect("authorization")
        .expect("a token");
    let refreshed = provider.tokens().await.expect("tokens").expect("held");
    assert_ne!(refreshed.access_token, first.access_token);
    assert_eq!(header, format!("Bearer {}", refreshed.access_token));
    assert_eq!(
        logins.load(Ordering::SeqCst),
        1,
        "refreshing needs no login"
    );

    // A 401 with a refresh token: refreshed again, still no user.
    let retry = provider
        .refused(401, &Challenge::parse(["Bearer"]), Some(&header), 0)
        .await
        .expect("refresh on 401");
    assert!(retry);
    assert_eq!(logins.load(Ordering::SeqCst), 1);

    // Step-up: a 403 insufficient_scope for mcp:define re-authorizes with
    // the union of the scopes.
    let challenge = Challenge::parse([r#"Bearer error="insufficient_scope", scope="mcp:define""#]);
    let sent = provider.authorization().await.expect("authorization");
    // A refusal of an older token only asks for a resend, with no renewal.
    assert!(
        provider
            .refused(403, &challenge, Some("Bearer old"), 0)
            .await
            .expect("resend")
    );
    assert_eq!(logins.load(Ordering::SeqCst), 1);
    assert!(
        provider
            .refused(403, &challenge, sent.as_deref(), 0)
            .await
            .expect("step-up")
    );
    assert_eq!(logins.load(Ordering::SeqCst), 2);
    let stepped = provider.tokens().await.expect("tokens").expect("held");
    let mut scopes = stepped.scopes.clone();
    scopes.sort();
    assert_eq!(scopes, ["mcp:define", "mcp:tools"]);
    assert_eq!(stepped.issuer, auth.issuer);

    // The step-up is bounded: past the limit the refusal is final.
    let err = provider
        .refused(403, &challenge, None, 3)
        .await
        .expect_err("limit");
    assert!(err.to_string().contains("giving up"), "{err}");
}

/// The names of the tools `client` lists.
async fn tool_names(client: &toolwire::Client) -> BTreeSet<String> {
    client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_list_is_never_served_to_the_next_user() {
    let (auth, tw) = servers(300).await;
    let logins = Arc::new(AtomicUsize::new(0));
    let config = OAuthConfig::new().with_scopes(["mcp:tools", "mcp:define"]);
    let provider = provider(&tw.resource, config, logins);
    let client = ClientBuilder::new()
        .with_auth(provider.clone())
        .connect_http(&tw.resource)
        .expect("client");

    // alice holds mcp:define, so her list (private, reusable for 60 s)
    // has `add`.
    provider.login().await.expect("alice logs in");
    assert!(tool_names(&client).await.contains("add"));
    assert!(tool_names(&client).await.contains("add"), "from the cache");

    // bob, on the same client: mcp:define is refused to him, and so is
    // alice's cached list.
    assert!(provider.logout().await.expect("logout"));
    auth.set_account("bob").await;
    let bob = provider.login().await.expect("bob logs in");
    assert_eq!(bob.scopes, ["mcp:tools"]);
    let names = tool_names(&client).await;
    assert!(names.contains("echo"), "{names:?}");
    assert!(
        !names.contains("add"),
        "bob was served alice's list: {names:?}"
    );
}
