//! The load driver and the benchmark suite.
//!
//! ```text
//! loadgen suite [--rounds N] [--duration S] [--warmup S] [--conns 1,16,64]
//!               [--inflight 64] [--servers floor,rmcp,toolwire,toolwire-auth] [--paths echo,add,list]
//!               [--max-requests N] [--no-http] [--no-stdio] [--bin-dir DIR] [--out DIR]
//!               [--server-cpu 0]
//! loadgen soak  [--requests 1000000] [--warmup-requests 100000] [--conns 64] [--chunk 100000]
//! loadgen http  --addr 127.0.0.1:PORT --path echo [--conns 16] [--duration 3] [--pid PID]
//!               [--bearer TOKEN]
//! loadgen stdio --path echo [--inflight 64] [--duration 3] -- CMD [ARGS..]
//! ```
//!
//! HTTP: HTTP/1.1 keep-alive over N raw TCP connections to 127.0.0.1, each
//! with one request outstanding (closed loop). stdio: the server is spawned
//! as a child and K requests are kept in flight over its stdin/stdout (ids
//! are slot numbers, so responses may come back in any order).
//!
//! Every cell is bounded in time and in request count, checks every response
//! (HTTP 200 and a substring of the expected answer), and records latency
//! (p50/p99), requests, req/s, the server's CPU per request
//! (Δ(utime+stime) of /proc/PID/stat over the measured window, divided by
//! the requests completed in it), and the server's peak RSS (VmHWM, reset
//! through /proc/PID/clear_refs before each cell). It also records how busy
//! the two cores were with *other* processes during the cell (noise).
//!
//! `toolwire-auth` is `bench-toolwire --auth`: HTTP only (it is left out of
//! the stdio cells), every request carrying the bearer token the server
//! printed after its address. The report compares it with `toolwire`.
//!
//! `gateway` (`bench-gateway`) and `proxy-floor` (`bench-proxy-floor`, a
//! bare reverse proxy) are HTTP only: each starts a `bench-toolwire`
//! upstream first, on the same core, and both processes' CPU is measured
//! (the upstream's as `upstream cpu`).
//!
//! Only loopback addresses are ever contacted.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwire_bench::Path;

// ---------------------------------------------------------------- /proc

fn clk_tck() -> u64 {
    static TCK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TCK.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

/// utime + stime of a process, in clock ticks.
fn proc_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the comm field: [0] is field 3 (state); utime is field 14, stime 15.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn status_kb(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Resets VmHWM to the current RSS (root, or the process's owner).
fn reset_hwm(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// Per-CPU (busy, steal) jiffies from /proc/stat.
fn cpu_jiffies() -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    let Ok(s) = std::fs::read_to_string("/proc/stat") else {
        return out;
    };
    for line in s.lines().filter(|l| l.starts_with("cpu")) {
        let mut it = line.split_whitespace();
        let name = it.next().unwrap_or_default().to_owned();
        let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            continue;
        }
        // user nice system idle iowait irq softirq steal
        let busy = v[0] + v[1] + v[2] + v[5] + v[6];
        out.insert(name, (busy, v[7]));
    }
    out
}

/// The pid of the upstream behind the server being measured (the
/// `bench-toolwire` of the `gateway` and `proxy-floor` kinds), 0 for none: its CPU is measured
/// beside the server's.
static UPSTREAM_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// What the machine looked like at the start and end of a measured window.
struct Snap {
    at: Instant,
    server: u64,
    /// The upstream's ticks, if the server has one.
    upstream: Option<u64>,
    me: u64,
    cpus: BTreeMap<String, (u64, u64)>,
}

impl Snap {
    fn take(pid: u32) -> Snap {
        let upstream = UPSTREAM_PID.load(Ordering::Relaxed);
        Snap {
            at: Instant::now(),
            server: proc_ticks(pid).unwrap_or(0),
            upstream: (upstream != 0).then(|| proc_ticks(upstream).unwrap_or(0)),
            me: proc_ticks(std::process::id()).unwrap_or(0),
            cpus: cpu_jiffies(),
        }
    }
}

/// Noise figures over a window: how much of each benchmark core went to
/// processes other than the server (core `server_cpu`) and the load
/// generator (core `client_cpu`), and the steal time, in percent.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Noise {
    server_core_other_pct: f64,
    client_core_other_pct: f64,
    steal_pct: f64,
}

fn noise(a: &Snap, b: &Snap, server_cpu: usize, client_cpu: usize) -> Noise {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let tck = clk_tck() as f64;
    let core = |n: usize| {
        let k = format!("cpu{n}");
        let (b0, s0) = a.cpus.get(&k).copied().unwrap_or_default();
        let (b1, s1) = b.cpus.get(&k).copied().unwrap_or_default();
        (b1.saturating_sub(b0) as f64, s1.saturating_sub(s0) as f64)
    };
    let (sb, ss) = core(server_cpu);
    let (cb, cs) = core(client_cpu);
    // The upstream (pinned with the server) is part of the measurement.
    let server = (b.server.saturating_sub(a.server)
        + b.upstream
            .unwrap_or(0)
            .saturating_sub(a.upstream.unwrap_or(0))) as f64;
    let me = b.me.saturating_sub(a.me) as f64;
    let pct = |x: f64| (100.0 * x / tck / secs).max(0.0);
    Noise {
        server_core_other_pct: pct(sb - server),
        client_core_other_pct: pct(cb - me),
        steal_pct: pct(ss + cs) / 2.0,
    }
}

// ---------------------------------------------------------------- results

#[derive(Debug, Clone, Serialize)]
struct CellResult {
    round: usize,
    server: String,
    transport: &'static str,
    /// Connections (HTTP) or requests in flight (stdio).
    concurrency: usize,
    path: String,
    requests: u64,
    errors: u64,
    secs: f64,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_req: f64,
    /// The upstream's CPU per request, behind a gateway or the proxy floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    upstream_cpu_us_per_req: Option<f64>,
    peak_rss_kb: u64,
    /// Anonymous (heap, stacks) resident memory at the end of the cell; the
    /// rest of the RSS is file-backed (the binary's and libraries' pages).
    anon_rss_kb: u64,
    response_bytes: usize,
    noise: Noise,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)] as f64 / 1000.0
}

struct Measured {
    requests: u64,
    errors: u64,
    lat_ns: Vec<u64>,
    response_bytes: usize,
    start: Snap,
    end: Snap,
}

struct CellSpec {
    server: String,
    pid: u32,
    round: usize,
    concurrency: usize,
    path_label: String,
    server_cpu: usize,
    client_cpu: usize,
}

fn finish(spec: &CellSpec, transport: &'static str, mut m: Measured) -> CellResult {
    m.lat_ns.sort_unstable();
    let secs = m.end.at.duration_since(m.start.at).as_secs_f64();
    let ticks = m.end.server.saturating_sub(m.start.server);
    let cpu_us = ticks as f64 * 1e6 / clk_tck() as f64;
    let upstream_cpu_us = m
        .end
        .upstream
        .zip(m.start.upstream)
        .map(|(e, s)| e.saturating_sub(s) as f64 * 1e6 / clk_tck() as f64);
    CellResult {
        round: spec.round,
        server: spec.server.clone(),
        transport,
        concurrency: spec.concurrency,
        path: spec.path_label.clone(),
        requests: m.requests,
        errors: m.errors,
        secs,
        rps: m.requests as f64 / secs.max(1e-9),
        p50_us: percentile(&m.lat_ns, 0.50),
        p99_us: percentile(&m.lat_ns, 0.99),
        cpu_us_per_req: cpu_us / (m.requests.max(1) as f64),
        upstream_cpu_us_per_req: upstream_cpu_us.map(|u| u / (m.requests.max(1) as f64)),
        peak_rss_kb: status_kb(spec.pid, "VmHWM:").unwrap_or(0),
        anon_rss_kb: status_kb(spec.pid, "RssAnon:").unwrap_or(0),
        response_bytes: m.response_bytes,
        noise: noise(&m.start, &m.end, spec.server_cpu, spec.client_cpu),
    }
}

// ---------------------------------------------------------------- HTTP client

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

struct HttpConn {
    stream: TcpStream,
    buf: Vec<u8>,
    body: Vec<u8>,
}

impl HttpConn {
    async fn open(addr: SocketAddr) -> io::Result<HttpConn> {
        if !addr.ip().is_loopback() {
            return Err(io::Error::other("refusing a non-loopback address"));
        }
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(HttpConn {
            stream,
            buf: Vec::with_capacity(16 * 1024),
            body: Vec::with_capacity(16 * 1024),
        })
    }

    async fn fill(&mut self) -> io::Result<()> {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.buf.reserve(16 * 1024);
        }
        let n = self.stream.read_buf(&mut self.buf).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed",
            ));
        }
        Ok(())
    }

    /// Sends `req` and reads one response; returns its status. The body is
    /// left in `self.body`.
    async fn exchange(&mut self, req: &[u8]) -> io::Result<u16> {
        self.stream.write_all(req).await?;
        loop {
            if let Some(done) = self.parse()? {
                return Ok(done);
            }
            self.fill().await?;
        }
    }

    /// Parses one whole response from the buffer, if there is one.
    fn parse(&mut self) -> io::Result<Option<u16>> {
        let Some(head_end) = find(&self.buf, b"\r\n\r\n") else {
            return Ok(None);
        };
        let head = &self.buf[..head_end];
        let bad = || io::Error::other("malformed response head");
        let status: u16 = std::str::from_utf8(head.get(9..12).ok_or_else(bad)?)
            .map_err(|_| bad())?
            .parse()
            .map_err(|_| bad())?;
        let mut length = None;
        let mut chunked = false;
        for line in head.split(|&b| b == b'\n').skip(1) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"content-length") {
                length = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = value.eq_ignore_ascii_case(b"chunked");
            }
        }
        let start = head_end + 4;
        self.body.clear();
        let consumed = if chunked {
            let mut at = start;
            loop {
                let Some(eol) = find(&self.buf[at..], b"\r\n") else {
                    return Ok(None);
                };
                let size_str = std::str::from_utf8(&self.buf[at..at + eol]).map_err(|_| bad())?;
                let size =
                    usize::from_str_radix(size_str.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|_| bad())?;
                let data = at + eol + 2;
                if self.buf.len() < data + size + 2 {
                    return Ok(None);
                }
                if size == 0 {
                    // No trailers are expected: the terminating CRLF follows.
                    break data + 2;
                }
                self.body.extend_from_slice(&self.buf[data..data + size]);
                at = data + size + 2;
            }
        } else {
            let len = length.unwrap_or(0);
            if self.buf.len() < start + len {
                return Ok(None);
            }
            self.body.extend_from_slice(&self.buf[start..start + len]);
            start + len
        };
        self.buf.drain(..consumed);
        Ok(Some(status))
    }
}

struct Shared {
    phase: AtomicU8,
    measured: AtomicU64,
    max_requests: u64,
}

struct ConnOut {
    requests: u64,
    errors: u64,
    lat_ns: Vec<u64>,
    response_bytes: usize,
    first_error: Option<String>,
}

async fn conn_loop(
    addr: SocketAddr,
    reqs: Arc<Vec<(Vec<u8>, &'static [u8])>>,
    offset: usize,
    shared: Arc<Shared>,
) -> ConnOut {
    let mut out = ConnOut {
        requests: 0,
        errors: 0,
        lat_ns: Vec::with_capacity(64 * 1024),
        response_bytes: 0,
        first_error: None,
    };
    let mut conn = match HttpConn::open(addr).await {
        Ok(c) => c,
        Err(e) => {
            out.errors += 1;
            out.first_error = Some(format!("connect: {e}"));
            return out;
        }
    };
    let mut k = offset;
    loop {
        let phase = shared.phase.load(Ordering::Relaxed);
        if phase == STOP {
            break;
        }
        let (req, expect) = &reqs[k % reqs.len()];
        k += 1;
        let t0 = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(10), conn.exchange(req)).await;
        let dt = t0.elapsed();
        let ok = match r {
            Ok(Ok(status)) => {
                let good = status == 200 && find(&conn.body, expect).is_some();
                if !good && out.first_error.is_none() {
                    out.first_error = Some(format!(
                        "status {status}: {}",
                        String::from_utf8_lossy(&conn.body[..conn.body.len().min(300)])
                    ));
                }
                good
            }
            Ok(Err(e)) => {
                out.first_error.get_or_insert_with(|| format!("io: {e}"));
                out.errors += 1;
                break;
            }
            Err(_) => {
                out.first_error
                    .get_or_insert_with(|| "timeout (10 s)".to_owned());
                out.errors += 1;
                break;
            }
        };
        // Count only responses that arrive inside the measured window.
        if shared.phase.load(Ordering::Relaxed) == MEASURE && phase == MEASURE {
            out.requests += 1;
            if !ok {
                out.errors += 1;
            }
            out.lat_ns.push(dt.as_nanos() as u64);
            out.response_bytes = conn.body.len();
            if shared.measured.fetch_add(1, Ordering::Relaxed) + 1 >= shared.max_requests {
                shared.phase.store(STOP, Ordering::Relaxed);
            }
        }
    }
    out
}

/// Runs one HTTP cell: `conns` connections, requests cycling through
/// `paths`, each with the bearer token if there is one.
#[allow(clippy::too_many_arguments)]
async fn http_cell(
    addr: SocketAddr,
    bearer: Option<&str>,
    pid: u32,
    paths: &[Path],
    conns: usize,
    warmup: Duration,
    duration: Duration,
    max_requests: u64,
) -> io::Result<Measured> {
    let host = addr.to_string();
    let reqs: Arc<Vec<(Vec<u8>, &'static [u8])>> = Arc::new(
        paths
            .iter()
            .map(|p| (p.http_request(&host, bearer), p.expect()))
            .collect(),
    );
    let shared = Arc::new(Shared {
        phase: AtomicU8::new(WARMUP),
        measured: AtomicU64::new(0),
        max_requests,
    });
    reset_hwm(pid);
    let mut tasks = Vec::with_capacity(conns);
    for i in 0..conns {
        tasks.push(tokio::spawn(conn_loop(
            addr,
            Arc::clone(&reqs),
            i,
            Arc::clone(&shared),
        )));
    }
    tokio::time::sleep(warmup).await;
    let start = Snap::take(pid);
    shared.phase.store(MEASURE, Ordering::Relaxed);
    let deadline = tokio::time::Instant::now() + duration;
    while tokio::time::Instant::now() < deadline && shared.phase.load(Ordering::Relaxed) == MEASURE
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    shared.phase.store(STOP, Ordering::Relaxed);
    let end = Snap::take(pid);
    let mut m = Measured {
        requests: 0,
        errors: 0,
        lat_ns: Vec::new(),
        response_bytes: 0,
        start,
        end,
    };
    for t in tasks {
        let out = t.await.map_err(io::Error::other)?;
        if let Some(e) = &out.first_error {
            eprintln!("    ! {e}");
        }
        m.requests += out.requests;
        m.errors += out.errors;
        m.lat_ns.extend_from_slice(&out.lat_ns);
        m.response_bytes = m.response_bytes.max(out.response_bytes);
    }
    Ok(m)
}

// ---------------------------------------------------------------- stdio client

fn parse_id(line: &[u8]) -> Option<usize> {
    let at = find(line, b"\"id\":")? + 5;
    let digits: &[u8] = &line[at..];
    let digits = digits.trim_ascii_start();
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// What the stdio writer thread is sent: write request `slot` of the
/// bodies, or (`None`) close the server's stdin.
type WriterJob = Option<(usize, Arc<Vec<Vec<u8>>>)>;

/// A server child on stdio with K request slots.
struct StdioDriver {
    child: Child,
    reader: BufReader<std::process::ChildStdout>,
    to_writer: mpsc::Sender<WriterJob>,
    sent_at: Arc<Vec<AtomicU64>>,
    base: Instant,
    progress: Arc<AtomicU64>,
    writer: Option<std::thread::JoinHandle<()>>,
    watchdog_stop: Arc<AtomicBool>,
}

impl StdioDriver {
    fn spawn(mut cmd: Command, inflight: usize) -> io::Result<StdioDriver> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let base = Instant::now();
        let sent_at: Arc<Vec<AtomicU64>> =
            Arc::new((0..inflight).map(|_| AtomicU64::new(0)).collect());
        let (tx, rx) = mpsc::channel::<WriterJob>();
        let stamps = Arc::clone(&sent_at);
        let writer = std::thread::spawn(move || {
            let mut w = io::BufWriter::with_capacity(64 * 1024, &mut stdin);
            let write = |w: &mut io::BufWriter<_>, slot: usize, bodies: &Vec<Vec<u8>>| {
                stamps[slot].store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                w.write_all(&bodies[slot]).is_ok()
            };
            while let Ok(Some((slot, bodies))) = rx.recv() {
                if !write(&mut w, slot, &bodies) {
                    return;
                }
                while let Ok(Some((slot, bodies))) = rx.try_recv() {
                    if !write(&mut w, slot, &bodies) {
                        return;
                    }
                }
                if w.flush().is_err() {
                    return;
                }
            }
            // Dropping stdin closes the server's input: it exits.
        });
        let progress = Arc::new(AtomicU64::new(0));
        let watchdog_stop = Arc::new(AtomicBool::new(false));
        {
            // A server that stops answering is killed after 10 s, so the
            // suite never hangs.
            let progress = Arc::clone(&progress);
            let stop = Arc::clone(&watchdog_stop);
            let pid = child.id();
            std::thread::spawn(move || {
                let mut last = (progress.load(Ordering::Relaxed), Instant::now());
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let p = progress.load(Ordering::Relaxed);
                    if p != last.0 {
                        last = (p, Instant::now());
                    } else if p != u64::MAX && last.1.elapsed() > Duration::from_secs(10) {
                        eprintln!("    ! stdio server {pid} stalled for 10 s; killing it");
                        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
                        return;
                    }
                }
            });
        }
        Ok(StdioDriver {
            child,
            reader: BufReader::with_capacity(256 * 1024, stdout),
            to_writer: tx,
            sent_at,
            base,
            progress,
            writer: Some(writer),
            watchdog_stop,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs one cell on `path`, keeping every slot busy until the window
    /// ends, then drains the slots.
    fn cell(
        &mut self,
        path: Path,
        warmup: Duration,
        duration: Duration,
        max_requests: u64,
    ) -> io::Result<Measured> {
        let k = self.sent_at.len();
        let bodies: Arc<Vec<Vec<u8>>> = Arc::new(
            (0..k)
                .map(|i| {
                    let mut b = path.body(i as u64);
                    b.push(b'\n');
                    b
                })
                .collect(),
        );
        let pid = self.pid();
        reset_hwm(pid);
        let send = |slot: usize| {
            self.to_writer
                .send(Some((slot, Arc::clone(&bodies))))
                .map_err(|_| io::Error::other("writer thread gone"))
        };
        for slot in 0..k {
            send(slot)?;
        }
        let t0 = Instant::now();
        let expect = path.expect();
        let mut phase = WARMUP;
        let mut outstanding = k;
        let mut line = Vec::with_capacity(4096);
        let mut start = None;
        let mut end = None;
        let mut m_requests = 0u64;
        let mut errors = 0u64;
        let mut lat = Vec::with_capacity(256 * 1024);
        let mut response_bytes = 0;
        let mut first_error: Option<String> = None;
        while outstanding > 0 {
            line.clear();
            if self.reader.read_until(b'\n', &mut line)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed stdout",
                ));
            }
            let now = Instant::now();
            self.progress.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = parse_id(&line).filter(|&s| s < k) else {
                // Not a response to one of ours (a notification, say).
                continue;
            };
            outstanding -= 1;
            let ok = find(&line, expect).is_some() && find(&line, b"\"error\"").is_none();
            if !ok && first_error.is_none() {
                first_error = Some(String::from_utf8_lossy(&line[..line.len().min(300)]).into());
            }
            if phase == WARMUP && now.duration_since(t0) >= warmup {
                phase = MEASURE;
                start = Some(Snap::take(pid));
            }
            if phase == MEASURE {
                let sent = self.sent_at[slot].load(Ordering::Relaxed);
                let at = now.duration_since(self.base).as_nanos() as u64;
                lat.push(at.saturating_sub(sent));
                m_requests += 1;
                response_bytes = line.len().saturating_sub(1);
                if !ok {
                    errors += 1;
                }
                let started = start.as_ref().map_or(now, |s: &Snap| s.at);
                if now.duration_since(started) >= duration || m_requests >= max_requests {
                    phase = STOP;
                    end = Some(Snap::take(pid));
                }
            }
            if phase != STOP {
                send(slot)?;
                outstanding += 1;
            }
        }
        if let Some(e) = first_error {
            eprintln!("    ! {e}");
        }
        let start = start.ok_or_else(|| io::Error::other("no response after the warm-up"))?;
        let end = end.unwrap_or_else(|| Snap::take(pid));
        Ok(Measured {
            requests: m_requests,
            errors,
            lat_ns: lat,
            response_bytes,
            start,
            end,
        })
    }

    fn shutdown(mut self) {
        self.progress.store(u64::MAX, Ordering::Relaxed);
        self.watchdog_stop.store(true, Ordering::Relaxed);
        let _ = self.to_writer.send(None);
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        // stdin is closed: give the server a moment to exit by itself.
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------- servers

#[derive(Debug, Clone)]
struct ServerKind {
    name: String,
    bin: PathBuf,
    args: Vec<String>,
    /// A server in front of another (`gateway`, `proxy-floor`): that one's binary, started
    /// first; the server gets `--upstream URL`. HTTP only.
    upstream: Option<PathBuf>,
}

fn server_kind(name: &str, bin_dir: &FsPath) -> ServerKind {
    let (bin, args): (&str, &[&str]) = match name {
        "floor" => ("bench-floor", &[]),
        "rmcp" => ("bench-rmcp", &[]),
        "toolwire" => ("bench-toolwire", &[]),
        "toolwire-plain" => ("bench-toolwire", &["--plain-loop"]),
        "gateway" => ("bench-gateway", &[]),
        "proxy-floor" => ("bench-proxy-floor", &[]),
        "toolwire-auth" => ("bench-toolwire", &["--auth"]),
        other => {
            eprintln!(
                "unknown server {other:?} (floor, rmcp, toolwire, toolwire-plain, toolwire-auth, gateway, proxy-floor)"
            );
            std::process::exit(2)
        }
    };
    ServerKind {
        name: name.to_owned(),
        bin: bin_dir.join(bin),
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        upstream: matches!(name, "gateway" | "proxy-floor").then(|| bin_dir.join("bench-toolwire")),
    }
}

impl ServerKind {
    /// A server that needs a bearer token (and serves HTTP only).
    fn authenticated(&self) -> bool {
        self.args.iter().any(|a| a == "--auth")
    }
}

fn pinned(cpu: Option<usize>, bin: &FsPath, args: &[String]) -> Command {
    match cpu {
        Some(c) if which("taskset") => {
            let mut cmd = Command::new("taskset");
            cmd.arg("-c").arg(c.to_string()).arg(bin).args(args);
            cmd
        }
        _ => {
            let mut cmd = Command::new(bin);
            cmd.args(args);
            cmd
        }
    }
}

fn which(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}

/// A running HTTP server child (and its upstream, for a gateway).
struct HttpServer {
    kind: ServerKind,
    child: Child,
    addr: SocketAddr,
    upstream: Option<Box<HttpServer>>,
    /// The token it printed after its address, for an authenticated kind.
    bearer: Option<String>,
}

impl HttpServer {
    fn start(kind: &ServerKind, cpu: Option<usize>) -> io::Result<HttpServer> {
        let mut args = vec!["--http".to_owned(), "127.0.0.1:0".to_owned()];
        args.extend(kind.args.iter().cloned());
        // A gateway's upstream runs on the same core: the hop's cost is the
        // two processes' together.
        let upstream = match &kind.upstream {
            Some(bin) => {
                let up = HttpServer::start(
                    &ServerKind {
                        name: format!("{}-upstream", kind.name),
                        bin: bin.clone(),
                        args: Vec::new(),
                        upstream: None,
                    },
                    cpu,
                )?;
                args.push("--upstream".to_owned());
                args.push(format!("http://{}/mcp", up.addr));
                Some(Box::new(up))
            }
            None => None,
        };
        let mut child = pinned(cpu, &kind.bin, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io::Error::other(format!("{}: {e}", kind.bin.display())))?;
        let mut out = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| io::Error::other("stdout"))?,
        );
        let mut line = String::new();
        out.read_line(&mut line)?;
        let addr: SocketAddr = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| io::Error::other(format!("{}: no address, got {line:?}", kind.name)))?;
        let bearer = if kind.authenticated() {
            line.clear();
            out.read_line(&mut line)?;
            let token = line.trim().strip_prefix("bearer ").ok_or_else(|| {
                io::Error::other(format!("{}: no bearer token, got {line:?}", kind.name))
            })?;
            Some(token.to_owned())
        } else {
            None
        };
        // Keep draining stdout so that the server can never block on it.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        });
        Ok(HttpServer {
            kind: kind.clone(),
            child,
            addr,
            upstream,
            bearer,
        })
    }

    /// The upstream's pid, or 0.
    fn upstream_pid(&self) -> u32 {
        self.upstream.as_ref().map_or(0, |u| u.child.id())
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(up) = self.upstream.take() {
            up.stop();
        }
    }
}

// ---------------------------------------------------------------- options

struct Opts {
    map: BTreeMap<String, String>,
    flags: Vec<String>,
    trailing: Vec<String>,
}

impl Opts {
    fn parse(args: &[String]) -> Opts {
        let mut map = BTreeMap::new();
        let mut flags = Vec::new();
        let mut trailing = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                trailing = args[i + 1..].to_vec();
                break;
            }
            if let Some(k) = a.strip_prefix("--") {
                if let Some((k, v)) = k.split_once('=') {
                    map.insert(k.to_owned(), v.to_owned());
                } else if i + 1 < args.len() && !args[i + 1].starts_with("--") {
                    map.insert(k.to_owned(), args[i + 1].clone());
                    i += 1;
                } else {
                    flags.push(k.to_owned());
                }
            }
            i += 1;
        }
        Opts {
            map,
            flags,
            trailing,
        }
    }
    fn get<T: std::str::FromStr>(&self, k: &str, default: T) -> T {
        self.map
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
    fn list(&self, k: &str, default: &str) -> Vec<String> {
        self.map
            .get(k)
            .map_or(default, String::as_str)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }
    fn flag(&self, k: &str) -> bool {
        self.flags.iter().any(|f| f == k)
    }
}

fn paths_of(opts: &Opts) -> Vec<Path> {
    opts.list("paths", "echo,add,list")
        .iter()
        .map(|p| {
            Path::parse(p).unwrap_or_else(|| {
                eprintln!("unknown path {p:?} (echo, add, list)");
                std::process::exit(2)
            })
        })
        .collect()
}

fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn default_bin_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(FsPath::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

fn print_cell(r: &CellResult) {
    eprintln!(
        "  {:<15} {:<5} c={:<3} {:<4} {:>8} req {:>9.0} req/s  p50 {:>7.1} µs  p99 {:>8.1} µs  cpu {:>6.1} µs/req  hwm {:>6} kB anon {:>6} kB  {:>5} B  noise s{:.0}% c{:.0}% st{:.0}%{}{}",
        r.server,
        r.transport,
        r.concurrency,
        r.path,
        r.requests,
        r.rps,
        r.p50_us,
        r.p99_us,
        r.cpu_us_per_req,
        r.peak_rss_kb,
        r.anon_rss_kb,
        r.response_bytes,
        r.noise.server_core_other_pct,
        r.noise.client_core_other_pct,
        r.noise.steal_pct,
        match r.upstream_cpu_us_per_req {
            Some(u) => format!("  upstream cpu {u:.1} µs/req"),
            None => String::new(),
        },
        if r.errors > 0 {
            format!("  ERRORS {}", r.errors)
        } else {
            String::new()
        }
    );
}

// ---------------------------------------------------------------- suite

fn suite(opts: &Opts) -> io::Result<()> {
    let rounds: usize = opts.get("rounds", 1);
    let duration = Duration::from_secs_f64(opts.get("duration", 3.0));
    let warmup = Duration::from_secs_f64(opts.get("warmup", 0.5));
    let max_requests: u64 = opts.get("max-requests", 5_000_000);
    let conns: Vec<usize> = opts
        .list("conns", "1,16,64")
        .iter()
        .filter_map(|c| c.parse().ok())
        .collect();
    let inflight: usize = opts.get("inflight", 64);
    let server_cpu: usize = opts.get("server-cpu", 0);
    let client_cpu: usize = opts.get("client-cpu", 1);
    let bin_dir = opts
        .map
        .get("bin-dir")
        .map_or_else(default_bin_dir, PathBuf::from);
    let kinds: Vec<ServerKind> = opts
        .list("servers", "floor,rmcp,toolwire")
        .iter()
        .map(|n| server_kind(n, &bin_dir))
        .collect();
    let paths = paths_of(opts);
    let out_dir = PathBuf::from(
        opts.map
            .get("out")
            .cloned()
            .unwrap_or_else(|| "bench/results".to_owned()),
    );
    std::fs::create_dir_all(&out_dir)?;
    let rt = runtime()?;
    let mut all: Vec<CellResult> = Vec::new();
    let load_start = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let t_start = Instant::now();

    for round in 1..=rounds {
        eprintln!("round {round}/{rounds}");
        if !opts.flag("no-http") {
            let servers: Vec<HttpServer> = kinds
                .iter()
                .map(|k| HttpServer::start(k, Some(server_cpu)))
                .collect::<io::Result<_>>()?;
            for &c in &conns {
                for &path in &paths {
                    for s in &servers {
                        let spec = CellSpec {
                            server: s.kind.name.clone(),
                            pid: s.child.id(),
                            round,
                            concurrency: c,
                            path_label: path.name().to_owned(),
                            server_cpu,
                            client_cpu,
                        };
                        UPSTREAM_PID.store(s.upstream_pid(), Ordering::Relaxed);
                        let m = rt.block_on(http_cell(
                            s.addr,
                            s.bearer.as_deref(),
                            spec.pid,
                            &[path],
                            c,
                            warmup,
                            duration,
                            max_requests,
                        ))?;
                        UPSTREAM_PID.store(0, Ordering::Relaxed);
                        let r = finish(&spec, "http", m);
                        print_cell(&r);
                        all.push(r);
                    }
                }
            }
            for s in servers {
                s.stop();
            }
        }
        if !opts.flag("no-stdio") {
            let mut drivers: Vec<(String, StdioDriver)> = Vec::new();
            for k in kinds
                .iter()
                .filter(|k| k.upstream.is_none() && !k.authenticated())
            {
                let mut args = vec!["--stdio".to_owned()];
                args.extend(k.args.iter().cloned());
                drivers.push((
                    k.name.clone(),
                    StdioDriver::spawn(pinned(Some(server_cpu), &k.bin, &args), inflight)?,
                ));
            }
            for &path in &paths {
                for (name, d) in &mut drivers {
                    let spec = CellSpec {
                        server: name.clone(),
                        pid: d.pid(),
                        round,
                        concurrency: inflight,
                        path_label: path.name().to_owned(),
                        server_cpu,
                        client_cpu,
                    };
                    let m = d.cell(path, warmup, duration, max_requests)?;
                    let r = finish(&spec, "stdio", m);
                    print_cell(&r);
                    all.push(r);
                }
            }
            for (_, d) in drivers {
                d.shutdown();
            }
        }
    }

    let load_end = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let raw = out_dir.join(format!("cells-{stamp}.jsonl"));
    let mut f = std::fs::File::create(&raw)?;
    for r in &all {
        writeln!(f, "{}", serde_json::to_string(r).map_err(io::Error::other)?)?;
    }
    let report = report(
        &all,
        rounds,
        &kinds,
        t_start.elapsed(),
        &load_start,
        &load_end,
    );
    let md = out_dir.join(format!("report-{stamp}.md"));
    std::fs::write(&md, &report)?;
    std::fs::write(out_dir.join("latest.md"), &report)?;
    let _ = io::stdout().write_all(report.as_bytes());
    eprintln!("raw cells: {}\nreport: {}", raw.display(), md.display());
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

type Key = (&'static str, usize, String, String); // transport, concurrency, path, server

struct Med {
    requests: f64,
    rps: f64,
    p50: f64,
    p99: f64,
    cpu: f64,
    rss_kb: f64,
    anon_kb: f64,
    bytes: f64,
    errors: u64,
}

fn medians(all: &[CellResult]) -> BTreeMap<Key, Med> {
    let mut groups: BTreeMap<Key, Vec<&CellResult>> = BTreeMap::new();
    for r in all {
        groups
            .entry((r.transport, r.concurrency, r.path.clone(), r.server.clone()))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|(k, v)| {
            let m = |f: &dyn Fn(&CellResult) -> f64| median(v.iter().map(|r| f(r)).collect());
            let med = Med {
                requests: m(&|r| r.requests as f64),
                rps: m(&|r| r.rps),
                p50: m(&|r| r.p50_us),
                p99: m(&|r| r.p99_us),
                cpu: m(&|r| r.cpu_us_per_req),
                rss_kb: m(&|r| r.peak_rss_kb as f64),
                anon_kb: m(&|r| r.anon_rss_kb as f64),
                bytes: m(&|r| r.response_bytes as f64),
                errors: v.iter().map(|r| r.errors).sum(),
            };
            (k, med)
        })
        .collect()
}

fn path_order(p: &str) -> usize {
    Path::parse(p).map_or(9, |p| Path::ALL.iter().position(|&q| q == p).unwrap_or(9))
}

fn report(
    all: &[CellResult],
    rounds: usize,
    kinds: &[ServerKind],
    took: Duration,
    load_start: &str,
    load_end: &str,
) -> String {
    use std::fmt::Write as _;
    let meds = medians(all);
    let mut s = String::new();
    let what = if rounds > 1 {
        format!("medians of {rounds} rounds")
    } else {
        "one round".to_owned()
    };
    let _ = writeln!(s, "### Results ({what})\n");
    let _ = writeln!(
        s,
        "Run took {:.0} s. Load average at start: {}; at end: {}.",
        took.as_secs_f64(),
        load_start
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        load_end
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let n = all.len().max(1) as f64;
    let avg = |f: &dyn Fn(&CellResult) -> f64| all.iter().map(f).sum::<f64>() / n;
    let worst = |f: &dyn Fn(&CellResult) -> f64| all.iter().map(f).fold(0.0, f64::max);
    let _ = writeln!(
        s,
        "Noise (CPU time taken by other processes, % of one core, mean / worst cell): server core {:.1} / {:.1}, load-generator core {:.1} / {:.1}; steal {:.1} / {:.1}.\n",
        avg(&|r| r.noise.server_core_other_pct),
        worst(&|r| r.noise.server_core_other_pct),
        avg(&|r| r.noise.client_core_other_pct),
        worst(&|r| r.noise.client_core_other_pct),
        avg(&|r| r.noise.steal_pct),
        worst(&|r| r.noise.steal_pct),
    );
    let _ = writeln!(
        s,
        "| transport | conc | path | server | requests | req/s | p50 µs | p99 µs | server CPU µs/req | peak RSS MB | anon RSS MB | resp B |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut keys: Vec<&Key> = meds.keys().collect();
    let server_pos = |n: &str| kinds.iter().position(|k| k.name == n).unwrap_or(99);
    keys.sort_by_key(|k| (k.0 == "stdio", k.1, path_order(&k.2), server_pos(&k.3)));
    for k in &keys {
        let m = &meds[*k];
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.0} |{}",
            k.0,
            k.1,
            k.2,
            k.3,
            m.requests,
            m.rps,
            m.p50,
            m.p99,
            m.cpu,
            m.rss_kb / 1024.0,
            m.anon_kb / 1024.0,
            m.bytes,
            if m.errors > 0 {
                format!(" errors: {}", m.errors)
            } else {
                String::new()
            }
        );
    }

    // Ratios of server CPU per request.
    let get = |t: &'static str, c: usize, p: &str, srv: &str| {
        meds.get(&(t, c, p.to_owned(), srv.to_owned()))
            .map(|m| m.cpu)
    };
    let _ = writeln!(
        s,
        "\n### Ratios of server CPU per request ({what})\n\n| transport | conc | path | toolwire / floor | toolwire / rmcp | toolwire req/s ÷ floor | toolwire req/s ÷ rmcp |\n|---|---:|---|---:|---:|---:|---:|"
    );
    let mut cells: Vec<(&'static str, usize, String)> =
        keys.iter().map(|k| (k.0, k.1, k.2.clone())).collect();
    cells.dedup();
    let rps = |t: &'static str, c: usize, p: &str, srv: &str| {
        meds.get(&(t, c, p.to_owned(), srv.to_owned()))
            .map(|m| m.rps)
    };
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "–".to_owned(),
    };
    for (t, c, p) in &cells {
        let _ = writeln!(
            s,
            "| {t} | {c} | {p} | {} | {} | {} | {} |",
            ratio(get(t, *c, p, "toolwire"), get(t, *c, p, "floor")),
            ratio(get(t, *c, p, "toolwire"), get(t, *c, p, "rmcp")),
            ratio(rps(t, *c, p, "toolwire"), rps(t, *c, p, "floor")),
            ratio(rps(t, *c, p, "toolwire"), rps(t, *c, p, "rmcp")),
        );
    }

    // The resource server's cost: the same binary with and without it.
    if kinds.iter().any(|k| k.name == "toolwire-auth") {
        let _ = writeln!(
            s,
            "\n### Authentication ({what})\n\n| transport | conc | path | toolwire-auth / toolwire CPU | req/s ratio |\n|---|---:|---|---:|---:|"
        );
        for (t, c, p) in cells.iter().filter(|c| c.0 == "http") {
            let _ = writeln!(
                s,
                "| {t} | {c} | {p} | {} | {} |",
                ratio(get(t, *c, p, "toolwire-auth"), get(t, *c, p, "toolwire")),
                ratio(rps(t, *c, p, "toolwire-auth"), rps(t, *c, p, "toolwire")),
            );
        }
    }

    // Targets.
    let _ = writeln!(
        s,
        "\n### Targets ({what})\n\n| target | cell | toolwire | bound | met |\n|---|---|---:|---:|---|"
    );
    let mut check =
        |name: &str, cell: String, value: Option<f64>, bound: Option<f64>, unit: &str| {
            let (v, b, ok) = match (value, bound) {
                (Some(v), Some(b)) => (
                    format!("{v:.2}{unit}"),
                    format!("{b:.2}{unit}"),
                    if v <= b { "yes" } else { "**no**" },
                ),
                _ => ("–".to_owned(), "–".to_owned(), "n/a"),
            };
            let _ = writeln!(s, "| {name} | {cell} | {v} | {b} | {ok} |");
        };
    for c in [16usize, 64] {
        for p in ["echo", "add", "list"] {
            let tw = get("http", c, p, "toolwire");
            check(
                "HTTP CPU ≤ 1.5× floor",
                format!("http c={c} {p}"),
                tw,
                get("http", c, p, "floor").map(|f| 1.5 * f),
                " µs",
            );
            check(
                "HTTP CPU ≤ ⅓ rmcp",
                format!("http c={c} {p}"),
                tw,
                get("http", c, p, "rmcp").map(|r| r / 3.0),
                " µs",
            );
        }
    }
    if kinds.iter().any(|k| k.name == "toolwire-auth") {
        for p in ["echo", "add", "list"] {
            check(
                "cached bearer token: CPU ≤ 1.1× toolwire",
                format!("http c=16 {p}"),
                get("http", 16, p, "toolwire-auth"),
                get("http", 16, p, "toolwire").map(|t| 1.1 * t),
                " µs",
            );
        }
    }
    let stdio_c = cells.iter().find(|c| c.0 == "stdio").map_or(64, |c| c.1);
    for p in ["echo", "add", "list"] {
        let tw = get("stdio", stdio_c, p, "toolwire");
        check(
            "stdio CPU ≤ 2× floor",
            format!("stdio k={stdio_c} {p}"),
            tw,
            get("stdio", stdio_c, p, "floor").map(|f| 2.0 * f),
            " µs",
        );
        check(
            "stdio CPU ≤ ⅛ rmcp",
            format!("stdio k={stdio_c} {p}"),
            tw,
            get("stdio", stdio_c, p, "rmcp").map(|r| r / 8.0),
            " µs",
        );
    }
    for p in ["echo", "add", "list"] {
        let rss = meds
            .get(&("http", 64, p.to_owned(), "toolwire".to_owned()))
            .map(|m| m.rss_kb / 1024.0);
        check(
            "peak RSS ≤ 8 MB",
            format!("http c=64 {p}"),
            rss,
            Some(8.0),
            " MB",
        );
    }
    s
}

// ---------------------------------------------------------------- soak

fn soak(opts: &Opts) -> io::Result<()> {
    let total: u64 = opts.get("requests", 1_000_000);
    let warm: u64 = opts.get("warmup-requests", 100_000);
    let chunk: u64 = opts.get("chunk", 100_000);
    let conns: usize = opts.get("conns", 64);
    let server_cpu: usize = opts.get("server-cpu", 0);
    let bin_dir = opts
        .map
        .get("bin-dir")
        .map_or_else(default_bin_dir, PathBuf::from);
    let kind = server_kind(
        &opts
            .map
            .get("server")
            .cloned()
            .unwrap_or_else(|| "toolwire".into()),
        &bin_dir,
    );
    let rt = runtime()?;
    let server = HttpServer::start(&kind, Some(server_cpu))?;
    let pid = server.child.id();
    let limit = Duration::from_secs(opts.get("max-secs", 900));
    let run = |n: u64| -> io::Result<Measured> {
        rt.block_on(http_cell(
            server.addr,
            server.bearer.as_deref(),
            pid,
            &Path::ALL,
            conns,
            Duration::ZERO,
            limit,
            n,
        ))
    };
    eprintln!(
        "soak: {} over HTTP, {conns} connections, echo/add/list in turn",
        kind.name
    );
    let w = run(warm)?;
    let rss0 = status_kb(pid, "VmRSS:").unwrap_or(0);
    let anon0 = status_kb(pid, "RssAnon:").unwrap_or(0);
    let mut hwm = status_kb(pid, "VmHWM:").unwrap_or(0);
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        s,
        "### Soak: {total} requests to {} over HTTP\n\n{conns} connections, echo/add/list in turn, reconnecting every {chunk} requests, after a warm-up of {warm}.\n",
        kind.name
    );
    let _ = writeln!(
        s,
        "| after | requests | errors | req/s | p99 µs | VmRSS kB | RssAnon kB |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let row = |label: &str, m: &mut Measured, rss: u64, anon: u64| {
        m.lat_ns.sort_unstable();
        let secs = m.end.at.duration_since(m.start.at).as_secs_f64();
        format!(
            "| {label} | {} | {} | {:.0} | {:.0} | {rss} | {anon} |",
            m.requests,
            m.errors,
            m.requests as f64 / secs.max(1e-9),
            percentile(&m.lat_ns, 0.99)
        )
    };
    let mut w = w;
    let line = row("warm-up", &mut w, rss0, anon0);
    eprintln!("{line}");
    let _ = writeln!(s, "{line}");
    let mut done = 0u64;
    let mut errors = w.errors;
    let t = Instant::now();
    let ticks0 = proc_ticks(pid).unwrap_or(0);
    let (mut rss1, mut anon1) = (rss0, anon0);
    while done < total {
        let n = chunk.min(total - done);
        let mut m = run(n)?;
        done += m.requests;
        errors += m.errors;
        rss1 = status_kb(pid, "VmRSS:").unwrap_or(0);
        anon1 = status_kb(pid, "RssAnon:").unwrap_or(0);
        hwm = hwm.max(status_kb(pid, "VmHWM:").unwrap_or(0));
        let line = row(&done.to_string(), &mut m, rss1, anon1);
        eprintln!("{line}");
        let _ = writeln!(s, "{line}");
        if m.requests == 0 {
            break;
        }
    }
    let ticks = proc_ticks(pid).unwrap_or(0).saturating_sub(ticks0);
    let growth = rss1 as i64 - rss0 as i64;
    let _ = writeln!(
        s,
        "\nRSS after the warm-up {rss0} kB (anon {anon0} kB); after {done} more requests {rss1} kB (anon {anon1} kB): growth {growth} kB, anon {} kB (target < 1024 kB: {}). Peak (VmHWM) {hwm} kB. Errors {errors}. {:.1} s, server CPU {:.2} µs/req.",
        anon1 as i64 - anon0 as i64,
        if growth < 1024 { "met" } else { "**not met**" },
        t.elapsed().as_secs_f64(),
        ticks as f64 * 1e6 / clk_tck() as f64 / done.max(1) as f64
    );
    server.stop();
    let _ = io::stdout().write_all(s.as_bytes());
    Ok(())
}

// ---------------------------------------------------------------- single cells

fn http_one(opts: &Opts) -> io::Result<()> {
    let addr: SocketAddr = opts
        .map
        .get("addr")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| io::Error::other("--addr 127.0.0.1:PORT"))?;
    let pid: u32 = opts.get("pid", 0);
    let spec = CellSpec {
        server: opts
            .map
            .get("name")
            .cloned()
            .unwrap_or_else(|| "server".into()),
        pid,
        round: 1,
        concurrency: opts.get("conns", 16),
        path_label: opts.list("paths", "echo").join("+"),
        server_cpu: opts.get("server-cpu", 0),
        client_cpu: opts.get("client-cpu", 1),
    };
    let m = runtime()?.block_on(http_cell(
        addr,
        opts.map.get("bearer").map(String::as_str),
        pid,
        &paths_of(opts),
        spec.concurrency,
        Duration::from_secs_f64(opts.get("warmup", 0.5)),
        Duration::from_secs_f64(opts.get("duration", 3.0)),
        opts.get("max-requests", 5_000_000),
    ))?;
    let r = finish(&spec, "http", m);
    print_cell(&r);
    println!("{}", serde_json::to_string(&r).map_err(io::Error::other)?);
    Ok(())
}

fn stdio_one(opts: &Opts) -> io::Result<()> {
    let Some((prog, args)) = opts.trailing.split_first() else {
        return Err(io::Error::other("stdio needs -- CMD [ARGS..]"));
    };
    let inflight = opts.get("inflight", 64);
    let mut cmd = Command::new(prog);
    cmd.args(args);
    let mut d = StdioDriver::spawn(cmd, inflight)?;
    for path in paths_of(opts) {
        let spec = CellSpec {
            server: opts
                .map
                .get("name")
                .cloned()
                .unwrap_or_else(|| prog.clone()),
            pid: d.pid(),
            round: 1,
            concurrency: inflight,
            path_label: path.name().to_owned(),
            server_cpu: opts.get("server-cpu", 0),
            client_cpu: opts.get("client-cpu", 1),
        };
        let m = d.cell(
            path,
            Duration::from_secs_f64(opts.get("warmup", 0.5)),
            Duration::from_secs_f64(opts.get("duration", 3.0)),
            opts.get("max-requests", 5_000_000),
        )?;
        let r = finish(&spec, "stdio", m);
        print_cell(&r);
        println!("{}", serde_json::to_string(&r).map_err(io::Error::other)?);
    }
    d.shutdown();
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("usage: loadgen suite|soak|http|stdio [options]  (see the source's header)");
        std::process::exit(2)
    };
    let opts = Opts::parse(rest);
    let r = match cmd.as_str() {
        "suite" => suite(&opts),
        "soak" => soak(&opts),
        "http" => http_one(&opts),
        "stdio" => stdio_one(&opts),
        other => {
            eprintln!("unknown command {other:?}");
            std::process::exit(2)
        }
    };
    if let Err(e) = r {
        eprintln!("loadgen: {e}");
        std::process::exit(1);
    }
}
