//! The line reader and `serve_io` over an in-memory pipe.

use super::*;
use crate::{ServerConfig, Tool};
use serde_json::{Value, json};

fn call(id: u32, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    ) + "\n"
}

type ClientLines = tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;
type ClientWrite = tokio::io::WriteHalf<tokio::io::DuplexStream>;

/// A server with `tools`, served by `serve_io` over an in-memory pipe of
/// `capacity` bytes: the client's lines, its writing half, and the serving
/// task (which ends once both halves are dropped).
fn serve_tools(
    tools: impl IntoIterator<Item = Result<Tool, crate::handler::RegistrationError>>,
    capacity: usize,
) -> (
    ClientLines,
    ClientWrite,
    tokio::task::JoinHandle<io::Result<()>>,
) {
    let server = Server::new(ServerConfig::new("t", "1"));
    for t in tools {
        server.add_tool(t.expect("tool")).expect("add");
    }
    let (client, server_end) = tokio::io::duplex(capacity);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving = tokio::spawn(serve_io(server, server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client);
    (BufReader::new(client_read).lines(), client_write, serving)
}

/// Handlers that finish at once are answered inline, ones that wait in
/// a task; a panicking handler gets `-32603` either way, and the
/// server goes on serving.
#[tokio::test]
async fn inline_and_waiting_handlers_and_panics() {
    let tool = |name: &str| Tool::builder(name).input_schema(json!({"type": "object"}));
    let tools = [
        tool("now").handler(|_: Value, _| async { "now" }),
        tool("later").handler(|_: Value, _| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            "later"
        }),
        tool("boom").handler(|_: Value, _| async {
            if true {
                panic!("boom");
            }
            "never"
        }),
        tool("boom_later").handler(|_: Value, _| async {
            tokio::task::yield_now().await;
            if true {
                panic!("boom later");
            }
            "never"
        }),
    ];
    let (mut lines, mut client_write, serving) = serve_tools(tools, 64 * 1024);
    let input = [
        call(1, "later"),
        call(2, "boom"),
        call(3, "now"),
        call(4, "boom_later"),
        call(5, "now"),
    ]
    .concat();
    client_write
        .write_all(input.as_bytes())
        .await
        .expect("write");
    let mut replies = std::collections::BTreeMap::new();
    for _ in 0..5 {
        let line = lines.next_line().await.expect("read").expect("a line");
        let v: Value = serde_json::from_str(&line).expect("json");
        replies.insert(v["id"].as_u64().expect("id"), v);
    }
    assert_eq!(replies[&1]["result"]["content"][0]["text"], "later");
    assert_eq!(replies[&3]["result"]["content"][0]["text"], "now");
    assert_eq!(replies[&5]["result"]["content"][0]["text"], "now");
    for id in [2, 4] {
        assert_eq!(replies[&id]["error"]["code"], -32603, "{}", replies[&id]);
    }
    // Both halves hold the client's end open: EOF once both are gone.
    drop((lines, client_write));
    serving.await.expect("joined").expect("served");
}

#[tokio::test]
async fn read_line_splits_and_bounds() {
    let data = b"abc\r\n\nxyz".to_vec();
    let mut r = BufReader::new(&data[..]);
    let mut buf = Vec::new();
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::Data
    ));
    assert_eq!(buf, b"abc");
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::Data
    ));
    assert!(buf.is_empty());
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::Data
    ));
    assert_eq!(buf, b"xyz");
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::Eof
    ));
}

#[tokio::test]
async fn overlong_line_is_skipped() {
    let mut data = vec![b'x'; MAX_LINE_BYTES + 10];
    data.extend_from_slice(b"\nok\n");
    let mut r = BufReader::new(&data[..]);
    let mut buf = Vec::new();
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::TooLong
    ));
    assert!(matches!(
        read_line(&mut r, &mut buf).await.expect("io"),
        Line::Data
    ));
    assert_eq!(buf, b"ok");
}

/// Replies answered while more lines are buffered are gathered and handed
/// to the writer together: each still comes out as a line of its own, a
/// reply too large to gather comes out whole, and a request's progress
/// notification still precedes its response.
#[tokio::test]
async fn gathered_replies_stay_lines_in_order() {
    const BIG: usize = 3 * REPLY_BATCH_BYTES;
    let tool = |name: &str| Tool::builder(name).input_schema(json!({"type": "object"}));
    let tools = [
        tool("now").handler(|_: Value, _| async { "now" }),
        tool("big").handler(|_: Value, _| async { "b".repeat(BIG) }),
        tool("progress").handler(|_: Value, cx: crate::RequestContext| async move {
            cx.report_progress(1.0, Some(2.0), None);
            "reported"
        }),
    ];
    let (mut lines, mut client_write, serving) = serve_tools(tools, 256 * 1024);
    let progress =
        call(900, "progress").replace(r#""_meta":{"#, r#""_meta":{"progressToken":"p","#);
    let mut input: String = (1..=300).map(|id| call(id, "now")).collect();
    input.push_str(&call(500, "big"));
    input.push_str(&progress);
    input.extend((301..=400).map(|id| call(id, "now")));
    client_write
        .write_all(input.as_bytes())
        .await
        .expect("write");
    let mut replies = std::collections::BTreeMap::new();
    let mut progress_seen = false;
    while replies.len() < 402 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("every reply comes without more input")
            .expect("read")
            .expect("a line");
        let v: Value = serde_json::from_str(&line).expect("each line one message");
        if v["method"] == "notifications/progress" {
            assert!(!replies.contains_key(&900), "progress after its response");
            progress_seen = true;
            continue;
        }
        let id = v["id"].as_u64().expect("id");
        assert!(replies.insert(id, v).is_none(), "one response for {id}");
    }
    assert!(progress_seen, "the progress notification came");
    for id in (1..=400).chain([500, 900]) {
        assert!(replies.contains_key(&id), "a response for {id}");
    }
    assert_eq!(replies[&7]["result"]["content"][0]["text"], "now");
    assert_eq!(replies[&900]["result"]["content"][0]["text"], "reported");
    let big = replies[&500]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert_eq!(big.len(), BIG);

    // A reply is not held back for lines that have not come: one request,
    // with the input still open, is answered.
    client_write
        .write_all(call(1000, "now").as_bytes())
        .await
        .expect("write");
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("answered without more input")
        .expect("read")
        .expect("a line");
    let v: Value = serde_json::from_str(&line).expect("json");
    assert_eq!(v["id"], 1000);
    drop((lines, client_write));
    serving.await.expect("joined").expect("served");
}

/// An output that takes at most `step` bytes a write, vectored or not,
/// and keeps what it took.
struct Trickle {
    taken: Vec<u8>,
    step: usize,
    writes: usize,
}

impl AsyncWrite for Trickle {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = buf.len().min(this.step);
        this.taken.extend_from_slice(&buf[..n]);
        this.writes += 1;
        std::task::Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut n = 0;
        for buf in bufs {
            let take = buf.len().min(this.step - n);
            this.taken.extend_from_slice(&buf[..take]);
            n += take;
            if n == this.step {
                break;
            }
        }
        this.writes += 1;
        std::task::Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A large message written alone goes past the buffer, whole and with its
/// newline, however little each write takes; with an output that takes it
/// all, in one write with its newline. One that follows what the buffer
/// holds is gathered with it instead.
#[tokio::test]
async fn large_messages_are_written_whole_past_the_buffer() {
    let big: Vec<u8> = (0..DIRECT_WRITE_BYTES + 3)
        .map(|i| b'a' + u8::try_from(i % 26).expect("small"))
        .collect();
    // Rounds as `write_loop` makes them: messages, then a flush.
    let rounds: [&[&[u8]]; 3] = [&[&big], &[b"first", &big], &[&big[..DIRECT_WRITE_BYTES]]];
    let mut expected = Vec::new();
    for m in rounds.iter().flat_map(|r| r.iter()) {
        expected.extend_from_slice(m);
        expected.push(b'\n');
    }
    for step in [1, 7, DIRECT_WRITE_BYTES, DIRECT_WRITE_BYTES + 4, 1 << 20] {
        let gauge = OutputGauge::default();
        let mut w = BufWriter::with_capacity(
            64 * 1024,
            Trickle {
                taken: Vec::new(),
                step,
                writes: 0,
            },
        );
        for round in rounds {
            for (i, m) in round.iter().enumerate() {
                let alone = i + 1 == round.len();
                write_one(&mut w, Bytes::copy_from_slice(m), alone, &gauge)
                    .await
                    .expect("written");
                // Written past the buffer only when alone and first.
                let past = m.len() >= DIRECT_WRITE_BYTES && round.len() == 1;
                assert_eq!(w.buffer().is_empty(), past, "step {step}");
            }
            w.flush().await.expect("flushed");
        }
        let out = w.into_inner();
        assert!(out.taken == expected, "step {step}: the output differs");
        if step == 1 << 20 {
            // One write a round: each big one alone with its newline, and
            // "first" gathered with the big one after it.
            assert_eq!(out.writes, 3, "step {step}");
        }
    }
}
