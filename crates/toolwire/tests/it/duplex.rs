//! A server on an in-process stdio pipe (`toolwire::serve_io` over a
//! duplex), driven one JSON line at a time.

use serde_json::Value;
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

pub(crate) struct Duplex {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    serving: JoinHandle<std::io::Result<()>>,
}

impl Duplex {
    pub(crate) fn serve(server: toolwire::Server) -> Self {
        let (client, server_side) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_side);
        let serving = tokio::spawn(toolwire::serve_io(server, server_read, server_write));
        let (read, write) = tokio::io::split(client);
        Self {
            write,
            lines: BufReader::new(read).lines(),
            serving,
        }
    }

    pub(crate) async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).expect("json");
        line.push(b'\n');
        self.write.write_all(&line).await.expect("write");
    }

    /// The next line the server writes, as written (within 5 s).
    pub(crate) async fn recv_line(&mut self) -> String {
        let next = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line());
        next.await.expect("in time").expect("read").expect("a line")
    }

    pub(crate) async fn recv(&mut self) -> Value {
        serde_json::from_str(&self.recv_line().await).expect("json line")
    }

    /// The next line if one comes within 200 ms.
    pub(crate) async fn quiet(&mut self) -> Option<Value> {
        let next = tokio::time::timeout(Duration::from_millis(200), self.lines.next_line());
        match next.await {
            Ok(Ok(Some(line))) => Some(serde_json::from_str(&line).expect("json line")),
            _ => None,
        }
    }

    /// Waits (at most 10 s) for the server to return by itself, as after
    /// `Server::shutdown`, with the input still open.
    pub(crate) async fn served(self) -> std::io::Result<()> {
        tokio::time::timeout(Duration::from_secs(10), self.serving)
            .await
            .expect("serve_io returns")
            .expect("joined")
    }

    /// Closes the input and waits for the server to finish.
    pub(crate) async fn close(mut self) {
        self.write.shutdown().await.expect("eof");
        self.serving.await.expect("joined").expect("served");
    }
}
