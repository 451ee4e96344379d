//! Real redis-server and nats-server processes on free loopback ports (the
//! Debian packages; `scripts/scale-install` installs them). Shared with the
//! CLI's scale-out test, which includes this file.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Engine {
    Redis,
    Nats,
}

/// A port nothing listens on right now, and never handed out before in
/// this process: a stopped server keeps its port for its restart, and
/// another test must not take it meanwhile.
pub(crate) fn free_port() -> u16 {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut handed = HANDED_OUT.lock().expect("port list");
        if !handed.contains(&port) {
            handed.push(port);
            return port;
        }
    }
}

pub(crate) async fn wait_for_port(port: u16, what: &str) {
    let up = tokio::time::timeout(Duration::from_secs(20), async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(up.is_ok(), "{what} did not listen on port {port} in time");
}

/// A scratch directory, removed on drop.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("toolwire-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// redis-server or nats-server (JetStream on), persisting to a scratch
/// directory so a restart keeps the shared tools.
pub(crate) struct BusServer {
    engine: Engine,
    pub(crate) port: u16,
    dir: Scratch,
    child: Option<Child>,
}

impl BusServer {
    pub(crate) async fn start(engine: Engine) -> Self {
        let mut bus = Self {
            engine,
            port: free_port(),
            dir: Scratch::new("bus"),
            child: None,
        };
        bus.restart().await;
        bus
    }

    pub(crate) fn url(&self) -> String {
        match self.engine {
            Engine::Redis => format!("redis://127.0.0.1:{}", self.port),
            Engine::Nats => format!("nats://127.0.0.1:{}", self.port),
        }
    }

    /// Starts the server (again, on the same port and data).
    pub(crate) async fn restart(&mut self) {
        let port = self.port.to_string();
        let dir = self.dir.0.to_str().expect("utf-8 path").to_owned();
        let (program, args): (&str, Vec<&str>) = match self.engine {
            Engine::Redis => (
                "redis-server",
                vec![
                    "--port",
                    &port,
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "yes",
                    "--dir",
                    &dir,
                ],
            ),
            Engine::Nats => (
                "nats-server",
                vec!["-a", "127.0.0.1", "-p", &port, "-js", "-sd", &dir],
            ),
        };
        let child = Command::new(program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run {program} ({e}); scripts/scale-install installs it")
            });
        self.child = Some(child);
        wait_for_port(self.port, program).await;
    }

    /// Kills the server (as a crash would).
    pub(crate) async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

impl BusServer {
    /// Which engine this is.
    #[allow(dead_code, reason = "not every includer asks")]
    pub(crate) fn engine(&self) -> Engine {
        self.engine
    }
}

#[allow(dead_code, reason = "not every includer pauses")]
impl BusServer {
    /// Stops (`true`) or continues the server process: while stopped it keeps
    /// its connections but answers nothing, so publishing stalls.
    pub(crate) fn pause(&self, paused: bool) {
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .expect("a running server");
        let signal = if paused { "-STOP" } else { "-CONT" };
        let status = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }
}
