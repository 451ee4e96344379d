//! The load driver and the benchmark suite.
//!
//! ```text
//! loadgen suite [--rounds N] [--duration S] [--warmup S] [--conns 1,16,64]
//!               [--inflight 64] [--servers floor,rmcp,toolwire,toolwire-auth] [--paths echo,add,list]
//!               [--max-requests N] [--no-http] [--no-stdio] [--bin-dir DIR] [--out DIR]
//!               [--server-cpu 0] [--client-cpu 1] [--driver loadgen,wrk]
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
//! `--driver wrk` (or `loadgen,wrk`: both, one after the other, per cell)
//! drives the HTTP cells with wrk as well, a second load generator to check
//! this one against: `wrk -t1 -cN -dS --latency`, pinned to the client CPU,
//! with a Lua script that sends exactly this driver's request bytes and
//! checks every response the same way. Each wrk cell is warmed up by this
//! driver (`--warmup` on the same number of connections), and the server's
//! CPU is measured around the wrk process as around this driver's window.
//! wrk takes whole seconds, so `--duration` is rounded up for it, and it
//! knows no request bound (`--max-requests`). stdio cells have one driver.
//!
//! `toolwire-auth` is `bench-toolwire --auth`: HTTP only (it is left out of
//! the stdio cells), every request carrying the bearer token the server
//! printed after its address. The report compares it with `toolwire`.
//!
//! `toolwire-cli` is the project's `toolwire serve` (`--http 127.0.0.1:0`,
//! or stdio) with its default options: what users run. Its `echo` and `add`
//! take the same input as the bench servers', but its tool list is another,
//! so its `list` cells are skipped.
//!
//! `gateway` (`bench-gateway`), `proxy-floor` (`bench-proxy-floor`, a
//! bare reverse proxy) and `proxy-haproxy` (haproxy in HTTP mode, keep-alive
//! on both sides, one thread; skipped if haproxy is not installed) are HTTP
//! only: each starts a `bench-toolwire` upstream first, on the same core,
//! and both processes' CPU is measured (the upstream's as `upstream cpu`).
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

/// This process's utime + stime and its waited-for children's (cutime +
/// cstime), in clock ticks: a wrk run is a child, reaped before the end of
/// its window, so its CPU counts as the load generator's, not as noise.
fn own_ticks() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14-17: utime, stime, cutime, cstime.
    f.get(11..15)?
        .iter()
        .map(|x| x.parse::<u64>().ok())
        .sum::<Option<u64>>()
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
/// `bench-toolwire` of the `gateway`, `proxy-floor` and `proxy-haproxy`
/// kinds), 0 for none: its CPU is measured beside the server's.
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
            me: own_ticks().unwrap_or(0),
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
    /// The load generator that produced the row: `loadgen` (this one) or
    /// `wrk`.
    driver: &'static str,
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
    /// What a driver that keeps no samples (wrk) reported itself: it
    /// replaces the window's length, req/s and percentiles.
    reported: Option<Reported>,
    response_bytes: usize,
    start: Snap,
    end: Snap,
}

/// A wrk run's own figures.
#[derive(Debug, Clone, Copy)]
struct Reported {
    secs: f64,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
}

struct CellSpec {
    server: String,
    driver: &'static str,
    pid: u32,
    round: usize,
    concurrency: usize,
    path_label: String,
    server_cpu: usize,
    client_cpu: usize,
}

fn finish(spec: &CellSpec, transport: &'static str, mut m: Measured) -> CellResult {
    m.lat_ns.sort_unstable();
    let secs = m.reported.map_or_else(
        || m.end.at.duration_since(m.start.at).as_secs_f64(),
        |r| r.secs,
    );
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
        driver: spec.driver,
        concurrency: spec.concurrency,
        path: spec.path_label.clone(),
        requests: m.requests,
        errors: m.errors,
        secs,
        rps: m
            .reported
            .map_or(m.requests as f64 / secs.max(1e-9), |r| r.rps),
        p50_us: m
            .reported
            .map_or_else(|| percentile(&m.lat_ns, 0.50), |r| r.p50_us),
        p99_us: m
            .reported
            .map_or_else(|| percentile(&m.lat_ns, 0.99), |r| r.p99_us),
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
        reported: None,
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

// ---------------------------------------------------------------- wrk

/// A file in the temporary directory that is removed when dropped (wrk's
/// Lua script, haproxy's configuration).
struct TempFile(PathBuf);

impl TempFile {
    fn create(what: &str, contents: &str) -> io::Result<TempFile> {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "loadgen-{}-{}-{what}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        // `create_new`: never write through a file someone else put there.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let file = TempFile(path);
        f.write_all(contents.as_bytes())?;
        Ok(file)
    }

    fn path(&self) -> &FsPath {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `bytes` as a Lua string literal. Every byte outside printable ASCII is a
/// three-digit decimal escape, so the literal holds exactly these bytes (a
/// long bracket string would turn the CRLFs into LFs).
fn lua_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 16);
    s.push('"');
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                s.push('\\');
                s.push(b as char);
            }
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\{b:03}")),
        }
    }
    s.push('"');
    s
}

/// The Lua script of one wrk cell: every request is `request`, byte for
/// byte (wrk adds nothing to what `request()` returns), and every response
/// is checked as this driver checks it (status 200 and `expect` in the
/// body). `done` prints the failures and a response's size, summed over the
/// threads, on a line of its own.
fn wrk_script(request: &[u8], expect: &[u8]) -> String {
    format!(
        r#"-- Written by loadgen for one cell, removed after it.
local req = {req}
local expect = {expect}
local threads = {{}}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  bytes = 0
  first = ""
end

function request()
  return req
end

function response(status, headers, body)
  body = body or ""
  bytes = #body
  if status ~= 200 or not string.find(body, expect, 1, true) then
    bad = bad + 1
    if first == "" then
      first = "status " .. status .. ": " .. string.sub(body, 1, 300)
    end
  end
end

function done(summary, latency, requests)
  local b, n, f = 0, 0, ""
  for _, t in ipairs(threads) do
    b = b + (t:get("bad") or 0)
    n = math.max(n, t:get("bytes") or 0)
    if f == "" then f = t:get("first") or "" end
  end
  io.write(string.format("loadgen-check bad %d bytes %d\n", b, n))
  if f ~= "" then
    io.write("loadgen-check first " .. (string.gsub(f, "[\r\n]", " ")) .. "\n")
  end
end
"#,
        req = lua_string(request),
        expect = lua_string(expect),
    )
}

/// A time as wrk prints it (`384.00us`, `1.23ms`, `2.00s`), in µs.
fn wrk_time_us(s: &str) -> Option<f64> {
    let units = [
        ("us", 1.0),
        ("ms", 1e3),
        ("s", 1e6),
        ("m", 60e6),
        ("h", 3600e6),
    ];
    units.iter().find_map(|(unit, scale)| {
        s.strip_suffix(unit)
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v * scale)
    })
}

/// What a wrk run printed.
#[derive(Debug, Clone, Default, PartialEq)]
struct WrkOut {
    requests: u64,
    secs: f64,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    /// connect + read + write + timeout.
    socket_errors: u64,
    /// "Non-2xx or 3xx responses" (status > 399).
    bad_status: u64,
    /// The script's count of failed checks, if its `done` line is there.
    failed_checks: Option<u64>,
    response_bytes: usize,
    first_failure: Option<String>,
}

/// Parses wrk's report (with `--latency`) and the script's `done` lines.
fn parse_wrk(out: &str) -> Option<WrkOut> {
    let mut w = WrkOut::default();
    let (mut have_total, mut have_rps, mut have_p50, mut have_p99) = (false, false, false, false);
    for line in out.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            // "78543 requests in 2.00s, 22.12MB read"
            [n, "requests", "in", t, ..] => {
                w.requests = n.parse().ok()?;
                w.secs = wrk_time_us(t.trim_end_matches(','))? / 1e6;
                have_total = true;
            }
            ["Requests/sec:", r] => {
                w.rps = r.parse().ok()?;
                have_rps = true;
            }
            ["50%", t] => {
                w.p50_us = wrk_time_us(t)?;
                have_p50 = true;
            }
            ["99%", t] => {
                w.p99_us = wrk_time_us(t)?;
                have_p99 = true;
            }
            // "Socket errors: connect 0, read 0, write 0, timeout 0"
            ["Socket", "errors:", rest @ ..] => {
                w.socket_errors = rest
                    .iter()
                    .filter_map(|x| x.trim_end_matches(',').parse::<u64>().ok())
                    .sum();
            }
            ["Non-2xx", "or", "3xx", "responses:", n] => w.bad_status = n.parse().ok()?,
            ["loadgen-check", "bad", b, "bytes", n] => {
                w.failed_checks = Some(b.parse().ok()?);
                w.response_bytes = n.parse().ok()?;
            }
            _ => {}
        }
        if let Some(f) = line.strip_prefix("loadgen-check first ") {
            w.first_failure = Some(f.to_owned());
        }
    }
    (have_total && have_rps && have_p50 && have_p99).then_some(w)
}

/// Runs one HTTP cell with wrk on `path`: one thread and `conns`
/// connections for `duration` rounded up to whole seconds, pinned to
/// `client_cpu`. The server's CPU is read before wrk starts and after it
/// has exited (its start-up and connection set-up fall in the window; with
/// the server idle then, they cost it next to nothing). The caller warms
/// the server up first.
#[allow(clippy::too_many_arguments)]
fn wrk_cell(
    wrk: &FsPath,
    addr: SocketAddr,
    bearer: Option<&str>,
    pid: u32,
    path: Path,
    conns: usize,
    duration: Duration,
    client_cpu: usize,
) -> io::Result<Measured> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::other("refusing a non-loopback address"));
    }
    let request = path.http_request(&addr.to_string(), bearer);
    let script = TempFile::create("wrk.lua", &wrk_script(&request, path.expect()))?;
    let secs = duration.as_secs_f64().ceil().max(1.0) as u64;
    let args: Vec<String> = vec![
        "-t1".into(),
        format!("-c{}", conns.max(1)),
        format!("-d{secs}s"),
        // As this driver's: a request unanswered for 10 s is an error.
        "--timeout".into(),
        "10s".into(),
        "--latency".into(),
        "-s".into(),
        script.path().display().to_string(),
        format!("http://{addr}/mcp"),
    ];
    reset_hwm(pid);
    let start = Snap::take(pid);
    let out = pinned(Some(client_cpu), wrk, &args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| io::Error::other(format!("{}: {e}", wrk.display())))?;
    let end = Snap::take(pid);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed = parse_wrk(&stdout).filter(|_| out.status.success());
    let Some(w) = parsed else {
        return Err(io::Error::other(format!(
            "wrk ({}) gave no report:\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    };
    if let Some(f) = &w.first_failure {
        eprintln!("    ! wrk: {f}");
    }
    if w.socket_errors > 0 {
        eprintln!("    ! wrk: {} socket errors", w.socket_errors);
    }
    // The script's checks include the status; without its line (it should
    // always be there), fall back to wrk's own count of bad statuses.
    let failed = w.failed_checks.unwrap_or_else(|| {
        eprintln!("    ! wrk: the script's check line is missing");
        w.bad_status.max(1)
    });
    Ok(Measured {
        requests: w.requests,
        errors: w.socket_errors + failed.max(w.bad_status),
        lat_ns: Vec::new(),
        reported: Some(Reported {
            secs: w.secs,
            rps: w.rps,
            p50_us: w.p50_us,
            p99_us: w.p99_us,
        }),
        response_bytes: w.response_bytes,
        start,
        end,
    })
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
    /// A cell is running: only then does silence count as a stall (the
    /// servers of a suite are started together and wait their turn).
    active: Arc<AtomicBool>,
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
        let active = Arc::new(AtomicBool::new(false));
        {
            let active = Arc::clone(&active);
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
                    if p != last.0 || !active.load(Ordering::Relaxed) {
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
            active,
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
        let pid = self.pid();
        reset_hwm(pid);
        self.active.store(true, Ordering::Relaxed);
        let measured = self.run_cell(path, warmup, duration, max_requests, pid);
        self.active.store(false, Ordering::Relaxed);
        measured
    }

    fn run_cell(
        &mut self,
        path: Path,
        warmup: Duration,
        duration: Duration,
        max_requests: u64,
        pid: u32,
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
            reported: None,
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

/// How a server kind is started and tells its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launch {
    /// A bench binary: `--http 127.0.0.1:0` or `--stdio`, then `listening
    /// ADDR` on stdout.
    Bench,
    /// `toolwire serve`: `--http 127.0.0.1:0` or nothing (stdio), then
    /// `toolwire: serving MCP at http://ADDR/mcp` on stderr.
    Cli,
    /// haproxy (HTTP only): loadgen writes its configuration and hands it
    /// the listening socket.
    Haproxy,
}

#[derive(Debug, Clone)]
struct ServerKind {
    name: String,
    bin: PathBuf,
    args: Vec<String>,
    /// A server in front of another (`gateway`, `proxy-floor`,
    /// `proxy-haproxy`): that one's binary, started first; the server gets
    /// `--upstream URL` (haproxy the address in its configuration). HTTP
    /// only.
    upstream: Option<PathBuf>,
    launch: Launch,
}

const KINDS: &str = "floor, rmcp, toolwire, toolwire-plain, toolwire-auth, toolwire-cli, gateway, proxy-floor, proxy-haproxy";

/// The kind called `name`, or why it cannot run here (a program that is
/// missing). An unknown name ends the process.
fn server_kind(name: &str, bin_dir: &FsPath) -> Result<ServerKind, String> {
    let kind = |bin: PathBuf, args: &[&str], upstream: bool, launch: Launch| ServerKind {
        name: name.to_owned(),
        bin,
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        upstream: upstream.then(|| bin_dir.join("bench-toolwire")),
        launch,
    };
    let bench = |bin: &str, args: &[&str], upstream: bool| {
        Ok(kind(bin_dir.join(bin), args, upstream, Launch::Bench))
    };
    match name {
        "floor" => bench("bench-floor", &[], false),
        "rmcp" => bench("bench-rmcp", &[], false),
        "toolwire" => bench("bench-toolwire", &[], false),
        "toolwire-plain" => bench("bench-toolwire", &["--plain-loop"], false),
        "toolwire-auth" => bench("bench-toolwire", &["--auth"], false),
        "gateway" => bench("bench-gateway", &[], true),
        "proxy-floor" => bench("bench-proxy-floor", &[], true),
        "toolwire-cli" => {
            let bin = bin_dir.join("toolwire");
            if !bin.is_file() {
                return Err(format!(
                    "toolwire-cli: no {} (build it with `cargo build --release -p toolwire-cli` in the repository, as bench/run.sh does)",
                    bin.display()
                ));
            }
            Ok(kind(bin, &[], false, Launch::Cli))
        }
        "proxy-haproxy" => {
            let bin = find_program("haproxy", &["/usr/sbin", "/usr/local/sbin"]).ok_or_else(
                || "proxy-haproxy: haproxy is not installed (not on PATH, nor in /usr/sbin or /usr/local/sbin)".to_owned(),
            )?;
            Ok(kind(bin, &[], true, Launch::Haproxy))
        }
        other => {
            eprintln!("unknown server {other:?} ({KINDS})");
            std::process::exit(2)
        }
    }
}

impl ServerKind {
    /// A server that needs a bearer token (and serves HTTP only).
    fn authenticated(&self) -> bool {
        self.args.iter().any(|a| a == "--auth")
    }

    /// Whether its `tools/list` answers the bench servers' three tools
    /// (`toolwire serve` lists its own demo tools: not comparable).
    fn serves_bench_list(&self) -> bool {
        self.launch != Launch::Cli
    }

    /// Whether the kind runs `path` (the CLI's `list` is left out).
    fn runs(&self, path: Path) -> bool {
        path != Path::List || self.serves_bench_list()
    }

    /// The command line for stdio, if the kind serves stdio.
    fn stdio_args(&self) -> Option<Vec<String>> {
        if self.upstream.is_some() || self.authenticated() {
            return None;
        }
        match self.launch {
            Launch::Bench => {
                let mut args = vec!["--stdio".to_owned()];
                args.extend(self.args.iter().cloned());
                Some(args)
            }
            // `toolwire serve` without `--http` serves stdio; with stdin a
            // pipe it prints nothing on stderr.
            Launch::Cli => Some(vec!["serve".to_owned()]),
            Launch::Haproxy => None,
        }
    }
}

fn pinned(cpu: Option<usize>, bin: &FsPath, args: &[String]) -> Command {
    match cpu {
        Some(c) if find_program("taskset", &[]).is_some() => {
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

/// `prog` on PATH, or else in one of `extra` (haproxy lives in /usr/sbin,
/// which an unprivileged user's PATH often lacks).
fn find_program(prog: &str, extra: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// haproxy's configuration for `proxy-haproxy`: HTTP mode, keep-alive on
/// both sides with server connections shared between client connections
/// (`http-reuse always`), one thread, no logging (no `log` line), and the
/// listening socket inherited as its stdin (`fd@0`).
fn haproxy_config(upstream: SocketAddr) -> String {
    format!(
        "# Written by loadgen for one benchmark run, removed when it stops.
global
    nbthread 1
    maxconn 4096

defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-request 10s
    timeout http-keep-alive 30s

frontend bench
    bind fd@0
    default_backend toolwire

backend toolwire
    server upstream {upstream}
"
    )
}

/// Kills `child` when `r` is an error, so that a server that failed to
/// start does not outlive the suite.
fn or_kill<T>(child: &mut Child, r: io::Result<T>) -> io::Result<T> {
    if r.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    r
}

/// The address in `toolwire serve`'s `toolwire: serving MCP at
/// http://ADDR/mcp`.
fn cli_addr(line: &str) -> Option<SocketAddr> {
    line.trim()
        .strip_prefix("toolwire: serving MCP at http://")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// A running HTTP server child (and its upstream, for a hop). Dropping it
/// kills both.
struct HttpServer {
    kind: ServerKind,
    child: Child,
    addr: SocketAddr,
    upstream: Option<Box<HttpServer>>,
    /// The token it printed after its address, for an authenticated kind.
    bearer: Option<String>,
    /// haproxy's configuration file, removed after haproxy is killed.
    _conf: Option<TempFile>,
}

impl HttpServer {
    fn start(kind: &ServerKind, cpu: Option<usize>) -> io::Result<HttpServer> {
        // A hop's upstream runs on the same core: the hop's cost is the
        // two processes' together.
        let upstream = match &kind.upstream {
            Some(bin) => Some(Box::new(HttpServer::start(
                &ServerKind {
                    name: format!("{}-upstream", kind.name),
                    bin: bin.clone(),
                    args: Vec::new(),
                    upstream: None,
                    launch: Launch::Bench,
                },
                cpu,
            )?)),
            None => None,
        };
        match kind.launch {
            Launch::Bench => HttpServer::start_bench(kind, cpu, upstream),
            Launch::Cli => HttpServer::start_cli(kind, cpu),
            Launch::Haproxy => HttpServer::start_haproxy(kind, cpu, upstream),
        }
    }

    fn start_bench(
        kind: &ServerKind,
        cpu: Option<usize>,
        upstream: Option<Box<HttpServer>>,
    ) -> io::Result<HttpServer> {
        let mut args = vec!["--http".to_owned(), "127.0.0.1:0".to_owned()];
        args.extend(kind.args.iter().cloned());
        if let Some(up) = &upstream {
            args.push("--upstream".to_owned());
            args.push(format!("http://{}/mcp", up.addr));
        }
        let mut child = pinned(cpu, &kind.bin, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io::Error::other(format!("{}: {e}", kind.bin.display())))?;
        let out = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("stdout"));
        let mut out = BufReader::new(or_kill(&mut child, out)?);
        let announced = (|| -> io::Result<(SocketAddr, Option<String>)> {
            let mut line = String::new();
            out.read_line(&mut line)?;
            let addr: SocketAddr = line
                .trim()
                .strip_prefix("listening ")
                .and_then(|a| a.parse().ok())
                .ok_or_else(|| {
                    io::Error::other(format!("{}: no address, got {line:?}", kind.name))
                })?;
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
            Ok((addr, bearer))
        })();
        let (addr, bearer) = or_kill(&mut child, announced)?;
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
            _conf: None,
        })
    }

    /// `toolwire serve --http 127.0.0.1:0`, nothing else: its defaults are
    /// what is measured. It announces its address on stderr.
    fn start_cli(kind: &ServerKind, cpu: Option<usize>) -> io::Result<HttpServer> {
        let args = ["serve", "--http", "127.0.0.1:0"].map(str::to_owned);
        let mut child = pinned(cpu, &kind.bin, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::other(format!("{}: {e}", kind.bin.display())))?;
        let err = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("stderr"));
        let mut err = BufReader::new(or_kill(&mut child, err)?);
        let name = kind.name.clone();
        let announced = (|| -> io::Result<SocketAddr> {
            let mut line = String::new();
            loop {
                line.clear();
                if err.read_line(&mut line)? == 0 {
                    return Err(io::Error::other(format!(
                        "{name}: exited without announcing its address"
                    )));
                }
                if let Some(addr) = cli_addr(&line) {
                    return Ok(addr);
                }
                // Whatever else it says (a warning) is shown, not lost.
                eprint!("    [{name}] {line}");
            }
        })();
        let addr = or_kill(&mut child, announced)?;
        // Keep draining stderr so that the server can never block on it;
        // what it says is passed on.
        std::thread::spawn(move || {
            for line in err.lines() {
                match line {
                    Ok(l) => eprintln!("    [{name}] {l}"),
                    Err(_) => break,
                }
            }
        });
        Ok(HttpServer {
            kind: kind.clone(),
            child,
            addr,
            upstream: None,
            bearer: None,
            _conf: None,
        })
    }

    /// haproxy in the foreground (`-db`) with the configuration of
    /// [`haproxy_config`]. Its listening socket is bound here and given to
    /// it as its stdin, so no other process can take the port between
    /// choosing it and haproxy binding it; once haproxy has it, this
    /// process keeps no copy (if haproxy dies, connecting fails at once).
    fn start_haproxy(
        kind: &ServerKind,
        cpu: Option<usize>,
        upstream: Option<Box<HttpServer>>,
    ) -> io::Result<HttpServer> {
        let up = upstream.ok_or_else(|| io::Error::other("haproxy needs an upstream"))?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let conf = TempFile::create("haproxy.cfg", &haproxy_config(up.addr))?;
        let args = vec![
            "-db".to_owned(),
            "-f".to_owned(),
            conf.path().display().to_string(),
        ];
        let mut cmd = pinned(cpu, &kind.bin, &args);
        cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(listener)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let spawned = cmd.spawn();
        // The command holds the parent's copy of the socket: close it.
        drop(cmd);
        let child =
            spawned.map_err(|e| io::Error::other(format!("{}: {e}", kind.bin.display())))?;
        let mut server = HttpServer {
            kind: kind.clone(),
            child,
            addr,
            upstream: Some(up),
            bearer: None,
            _conf: Some(conf),
        };
        // One `echo` through it: haproxy and the chain behind it answer
        // before the first cell (dropping `server` on failure kills both).
        if let Err(e) = probe(addr) {
            let status = server.child.try_wait().ok().flatten();
            return Err(io::Error::other(match status {
                Some(st) => format!("{}: haproxy exited ({st}): {e}", kind.name),
                None => format!("{}: no answer through haproxy: {e}", kind.name),
            }));
        }
        Ok(server)
    }

    /// The upstream's pid, or 0.
    fn upstream_pid(&self) -> u32 {
        self.upstream.as_ref().map_or(0, |u| u.child.id())
    }

    /// Kills it (and its upstream).
    fn stop(self) {
        drop(self);
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Then the fields: the upstream is killed, the configuration file
        // removed.
    }
}

/// Sends one `echo` to `addr` and waits (up to 5 s) for a 200.
fn probe(addr: SocketAddr) -> io::Result<()> {
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(&Path::Echo.http_request(&addr.to_string(), None))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while find(&head, b"\r\n\r\n").is_none() {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    if head.starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "got {:?}",
            String::from_utf8_lossy(&head[..head.len().min(200)])
        )))
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
        "  {:<15} {:<5} {:<7} c={:<3} {:<4} {:>8} req {:>9.0} req/s  p50 {:>7.1} µs  p99 {:>8.1} µs  cpu {:>6.1} µs/req  hwm {:>6} kB anon {:>6} kB  {:>5} B  noise s{:.0}% c{:.0}% st{:.0}%{}{}",
        r.server,
        r.transport,
        r.driver,
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

/// What drives the HTTP cells.
#[derive(Debug, Clone)]
enum Driver {
    /// This program's own closed loop.
    Loadgen,
    /// wrk, at this path.
    Wrk(PathBuf),
}

impl Driver {
    fn name(&self) -> &'static str {
        match self {
            Driver::Loadgen => "loadgen",
            Driver::Wrk(_) => "wrk",
        }
    }
}

/// `--driver loadgen,wrk`: the drivers, in the order given, and why any
/// was left out (wrk not installed).
fn drivers_of(opts: &Opts) -> (Vec<Driver>, Vec<String>) {
    let mut drivers = Vec::new();
    let mut skipped = Vec::new();
    for d in opts.list("driver", "loadgen") {
        match d.as_str() {
            "loadgen" => drivers.push(Driver::Loadgen),
            "wrk" => match find_program("wrk", &[]) {
                Some(p) => drivers.push(Driver::Wrk(p)),
                None => skipped.push("driver wrk: wrk is not installed (not on PATH)".to_owned()),
            },
            other => {
                eprintln!("unknown driver {other:?} (loadgen, wrk)");
                std::process::exit(2)
            }
        }
    }
    (drivers, skipped)
}

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
    // What cannot run here is said at once and in the report, and left
    // out; the rest runs.
    let (drivers, mut notes) = drivers_of(opts);
    let mut kinds: Vec<ServerKind> = Vec::new();
    for n in opts.list("servers", "floor,rmcp,toolwire") {
        match server_kind(&n, &bin_dir) {
            Ok(k) => kinds.push(k),
            Err(why) => notes.push(format!("{why}: skipped")),
        }
    }
    let paths = paths_of(opts);
    if paths.contains(&Path::List) {
        for k in kinds.iter().filter(|k| !k.serves_bench_list()) {
            notes.push(format!(
                "{}: `list` not measured (its tool list is not the bench servers' three tools, so it is not comparable)",
                k.name
            ));
        }
    }
    if drivers.iter().any(|d| matches!(d, Driver::Wrk(_))) && duration.as_secs_f64().fract() != 0.0
    {
        notes.push(format!(
            "wrk ran {} s per cell: it takes whole seconds (--duration {} rounded up)",
            duration.as_secs_f64().ceil().max(1.0),
            duration.as_secs_f64()
        ));
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
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
        if !opts.flag("no-http") && !drivers.is_empty() {
            let servers: Vec<HttpServer> = kinds
                .iter()
                .map(|k| HttpServer::start(k, Some(server_cpu)))
                .collect::<io::Result<_>>()?;
            for &c in &conns {
                for &path in &paths {
                    for s in servers.iter().filter(|s| s.kind.runs(path)) {
                        UPSTREAM_PID.store(s.upstream_pid(), Ordering::Relaxed);
                        for driver in &drivers {
                            let spec = CellSpec {
                                server: s.kind.name.clone(),
                                driver: driver.name(),
                                pid: s.child.id(),
                                round,
                                concurrency: c,
                                path_label: path.name().to_owned(),
                                server_cpu,
                                client_cpu,
                            };
                            let m = match driver {
                                Driver::Loadgen => rt.block_on(http_cell(
                                    s.addr,
                                    s.bearer.as_deref(),
                                    spec.pid,
                                    &[path],
                                    c,
                                    warmup,
                                    duration,
                                    max_requests,
                                ))?,
                                Driver::Wrk(wrk) => {
                                    // The warm-up is this driver's, on as
                                    // many connections, measured nothing.
                                    rt.block_on(http_cell(
                                        s.addr,
                                        s.bearer.as_deref(),
                                        spec.pid,
                                        &[path],
                                        c,
                                        warmup,
                                        Duration::ZERO,
                                        max_requests,
                                    ))?;
                                    wrk_cell(
                                        wrk,
                                        s.addr,
                                        s.bearer.as_deref(),
                                        spec.pid,
                                        path,
                                        c,
                                        duration,
                                        client_cpu,
                                    )?
                                }
                            };
                            let r = finish(&spec, "http", m);
                            print_cell(&r);
                            all.push(r);
                        }
                        UPSTREAM_PID.store(0, Ordering::Relaxed);
                    }
                }
            }
            for s in servers {
                s.stop();
            }
        }
        if !opts.flag("no-stdio") {
            let mut stdio: Vec<(&ServerKind, StdioDriver)> = Vec::new();
            for k in &kinds {
                if let Some(args) = k.stdio_args() {
                    stdio.push((
                        k,
                        StdioDriver::spawn(pinned(Some(server_cpu), &k.bin, &args), inflight)?,
                    ));
                }
            }
            for &path in &paths {
                for (k, d) in stdio.iter_mut().filter(|(k, _)| k.runs(path)) {
                    let spec = CellSpec {
                        server: k.name.clone(),
                        driver: Driver::Loadgen.name(),
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
            for (_, d) in stdio {
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
        &notes,
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

/// transport, concurrency, path, server, driver.
type Key = (&'static str, usize, String, String, &'static str);

struct Med {
    requests: f64,
    rps: f64,
    p50: f64,
    p99: f64,
    cpu: f64,
    /// The upstream's CPU per request behind a hop (NaN for none).
    upstream_cpu: f64,
    rss_kb: f64,
    anon_kb: f64,
    bytes: f64,
    errors: u64,
}

fn medians(all: &[CellResult]) -> BTreeMap<Key, Med> {
    let mut groups: BTreeMap<Key, Vec<&CellResult>> = BTreeMap::new();
    for r in all {
        groups
            .entry((
                r.transport,
                r.concurrency,
                r.path.clone(),
                r.server.clone(),
                r.driver,
            ))
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
                upstream_cpu: m(&|r| r.upstream_cpu_us_per_req.unwrap_or(f64::NAN)),
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

fn driver_order(d: &str) -> usize {
    ["loadgen", "wrk"].iter().position(|&x| x == d).unwrap_or(9)
}

fn report(
    all: &[CellResult],
    rounds: usize,
    kinds: &[ServerKind],
    notes: &[String],
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
    for note in notes {
        let _ = writeln!(s, "- Note: {note}.");
    }
    if !notes.is_empty() {
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "| transport | conc | path | server | driver | requests | req/s | p50 µs | p99 µs | server CPU µs/req | peak RSS MB | anon RSS MB | resp B |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut keys: Vec<&Key> = meds.keys().collect();
    let server_pos = |n: &str| kinds.iter().position(|k| k.name == n).unwrap_or(99);
    keys.sort_by_key(|k| {
        (
            k.0 == "stdio",
            k.1,
            path_order(&k.2),
            server_pos(&k.3),
            driver_order(k.4),
        )
    });
    for k in &keys {
        let m = &meds[*k];
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.0} |{}",
            k.0,
            k.1,
            k.2,
            k.3,
            k.4,
            m.requests,
            m.rps,
            m.p50,
            m.p99,
            m.cpu,
            m.rss_kb / 1024.0,
            m.anon_kb / 1024.0,
            m.bytes,
            if m.errors > 0 {
                format!(" **errors: {}**", m.errors)
            } else {
                String::new()
            }
        );
    }
    let with_errors: Vec<String> = keys
        .iter()
        .filter(|k| meds[**k].errors > 0)
        .map(|k| {
            format!(
                "{} c={} {} {} ({}): {}",
                k.0, k.1, k.2, k.3, k.4, meds[*k].errors
            )
        })
        .collect();
    if !with_errors.is_empty() {
        let _ = writeln!(
            s,
            "\n**Cells with errors** (their figures are not to be trusted): {}.",
            with_errors.join("; ")
        );
    }

    let mut drivers: Vec<&'static str> = keys.iter().map(|k| k.4).collect();
    drivers.sort_by_key(|d| driver_order(d));
    drivers.dedup();
    for &driver in &drivers {
        // The heading says which driver only when there is more than one.
        let what = if drivers.len() > 1 {
            format!("{what}, driver {driver}")
        } else {
            what.clone()
        };
        driver_sections(&mut s, &meds, &keys, kinds, driver, &what);
    }
    s
}

/// The ratio, hop and target tables of one driver's rows.
fn driver_sections(
    s: &mut String,
    meds: &BTreeMap<Key, Med>,
    keys: &[&Key],
    kinds: &[ServerKind],
    driver: &'static str,
    what: &str,
) {
    use std::fmt::Write as _;
    let med = |t: &'static str, c: usize, p: &str, srv: &str| {
        meds.get(&(t, c, p.to_owned(), srv.to_owned(), driver))
    };
    // Ratios of server CPU per request.
    let get = |t: &'static str, c: usize, p: &str, srv: &str| med(t, c, p, srv).map(|m| m.cpu);
    let rps = |t: &'static str, c: usize, p: &str, srv: &str| med(t, c, p, srv).map(|m| m.rps);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "–".to_owned(),
    };
    let has = |name: &str| kinds.iter().any(|k| k.name == name);
    let _ = writeln!(
        s,
        "\n### Ratios of server CPU per request ({what})\n\n| transport | conc | path | toolwire / floor | toolwire / rmcp | toolwire req/s ÷ floor | toolwire req/s ÷ rmcp |\n|---|---:|---|---:|---:|---:|---:|"
    );
    let mut cells: Vec<(&'static str, usize, String)> = keys
        .iter()
        .filter(|k| k.4 == driver)
        .map(|k| (k.0, k.1, k.2.clone()))
        .collect();
    cells.dedup();
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
    if has("toolwire-auth") {
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

    // What users run (`toolwire serve`, its defaults) against the bench
    // binary on the same library.
    if has("toolwire-cli") {
        let _ = writeln!(
            s,
            "\n### toolwire serve, default options ({what})\n\n| transport | conc | path | toolwire-cli CPU µs/req | toolwire CPU µs/req | toolwire-cli / toolwire CPU | req/s ratio |\n|---|---:|---|---:|---:|---:|---:|"
        );
        let us = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.2}"));
        for (t, c, p) in cells.iter().filter(|c| c.2 != "list") {
            let _ = writeln!(
                s,
                "| {t} | {c} | {p} | {} | {} | {} | {} |",
                us(get(t, *c, p, "toolwire-cli")),
                us(get(t, *c, p, "toolwire")),
                ratio(get(t, *c, p, "toolwire-cli"), get(t, *c, p, "toolwire")),
                ratio(rps(t, *c, p, "toolwire-cli"), rps(t, *c, p, "toolwire")),
            );
        }
    }

    // The hops, each in front of its own bench-toolwire upstream: the hop's
    // CPU, its upstream's, and what the hop adds to a direct call.
    let hops: Vec<&ServerKind> = kinds.iter().filter(|k| k.upstream.is_some()).collect();
    if !hops.is_empty() {
        let _ = writeln!(
            s,
            "\n### Hops in front of a bench-toolwire upstream ({what})\n\n| conc | path | hop | hop CPU µs/req | its upstream µs/req | hop / its upstream | direct toolwire µs/req | p50 µs | p50 added to direct |\n|---:|---|---|---:|---:|---:|---:|---:|---:|"
        );
        let us = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map_or("–".to_owned(), |v| format!("{v:.2}"))
        };
        for (_, c, p) in cells.iter().filter(|c| c.0 == "http") {
            let direct = med("http", *c, p, "toolwire");
            for hop in &hops {
                let Some(m) = med("http", *c, p, &hop.name) else {
                    continue;
                };
                let up = Some(m.upstream_cpu).filter(|u| u.is_finite());
                let _ = writeln!(
                    s,
                    "| {c} | {p} | {} | {:.2} | {} | {} | {} | {:.1} | {} |",
                    hop.name,
                    m.cpu,
                    us(up),
                    ratio(Some(m.cpu), up),
                    us(direct.map(|d| d.cpu)),
                    m.p50,
                    direct.map_or("–".to_owned(), |d| format!("{:+.1}", m.p50 - d.p50)),
                );
            }
        }
    }

    // Targets. The stdio ones only for this driver, which alone drives stdio.
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
    if has("toolwire-auth") {
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
    if driver == Driver::Loadgen.name() {
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
    }
    for p in ["echo", "add", "list"] {
        let rss = med("http", 64, p, "toolwire").map(|m| m.rss_kb / 1024.0);
        check(
            "peak RSS ≤ 8 MB",
            format!("http c=64 {p}"),
            rss,
            Some(8.0),
            " MB",
        );
    }
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
    )
    .map_err(io::Error::other)?;
    // The paths the kind serves comparably (not the CLI's `list`).
    let paths: Vec<Path> = Path::ALL.into_iter().filter(|&p| kind.runs(p)).collect();
    let rt = runtime()?;
    let server = HttpServer::start(&kind, Some(server_cpu))?;
    let pid = server.child.id();
    let limit = Duration::from_secs(opts.get("max-secs", 900));
    let run = |n: u64| -> io::Result<Measured> {
        rt.block_on(http_cell(
            server.addr,
            server.bearer.as_deref(),
            pid,
            &paths,
            conns,
            Duration::ZERO,
            limit,
            n,
        ))
    };
    let names: Vec<&str> = paths.iter().map(|p| p.name()).collect();
    let names = names.join("/");
    eprintln!(
        "soak: {} over HTTP, {conns} connections, {names} in turn",
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
        "### Soak: {total} requests to {} over HTTP\n\n{conns} connections, {names} in turn, reconnecting every {chunk} requests, after a warm-up of {warm}.\n",
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
        driver: Driver::Loadgen.name(),
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
            driver: Driver::Loadgen.name(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_report_is_parsed() {
        let out = "Running 2s test @ http://127.0.0.1:4000/mcp
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   402.18us  120.11us   3.06ms   89.12%
    Req/Sec    39.47k     1.23k   41.02k    70.00%
  Latency Distribution
     50%  384.00us
     75%  420.00us
     90%  470.00us
     99%    1.23ms
  78543 requests in 2.00s, 22.12MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 5
Requests/sec:  39270.12
Transfer/sec:     11.06MB
loadgen-check bad 7 bytes 204
loadgen-check first status 406: nope
";
        let w = parse_wrk(out).expect("parsed");
        assert_eq!(w.requests, 78543);
        assert_eq!(w.secs, 2.0);
        assert_eq!(w.rps, 39270.12);
        assert_eq!(w.p50_us, 384.0);
        assert_eq!(w.p99_us, 1230.0);
        assert_eq!(w.socket_errors, 3);
        assert_eq!(w.bad_status, 5);
        assert_eq!(w.failed_checks, Some(7));
        assert_eq!(w.response_bytes, 204);
        assert_eq!(w.first_failure.as_deref(), Some("status 406: nope"));
        // Without the latency distribution, there is no report.
        assert_eq!(parse_wrk("78543 requests in 2.00s, 22.12MB read"), None);
    }

    #[test]
    fn wrk_times() {
        assert_eq!(wrk_time_us("12.50us"), Some(12.5));
        assert_eq!(wrk_time_us("1.50ms"), Some(1500.0));
        assert_eq!(wrk_time_us("2.00s"), Some(2e6));
        assert_eq!(wrk_time_us("1.00m"), Some(60e6));
        assert_eq!(wrk_time_us("fast"), None);
    }

    #[test]
    fn lua_literals_keep_every_byte() {
        assert_eq!(lua_string(b"a\"b\\c\r\n\x7f"), r#""a\"b\\c\013\010\127""#);
    }

    #[test]
    fn the_cli_address_is_read_from_its_banner() {
        assert_eq!(
            cli_addr("toolwire: serving MCP at http://127.0.0.1:4321/mcp\n"),
            Some("127.0.0.1:4321".parse().expect("address"))
        );
        assert_eq!(cli_addr("toolwire: warning: something\n"), None);
    }
}
