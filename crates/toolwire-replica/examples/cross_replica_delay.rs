//! Measures how long a change published on one replica takes to reach a
//! listener on another, over a real Redis or NATS (issue 18; the numbers are
//! in BENCHMARKS.md):
//!
//! ```text
//! cargo run -p toolwire-replica --example cross_replica_delay -- redis://127.0.0.1:6379 1000
//! cargo run -p toolwire-replica --example cross_replica_delay -- nats://127.0.0.1:4222 1000
//! ```
//!
//! Two relays in one process, each with its own connections, stand for two
//! replicas (one clock, so no skew). Two runs of N changes each, one at a
//! time (the next after the last arrived), report p50/p99/max:
//! - `event`: `Relay::publish` on A until A's event comes out of B's
//!   listener stream;
//! - `define`: `SharedTools::define` on A (store write, then announce) until
//!   B's listener hears `tools/list_changed` with the tool already served by
//!   B (then the tool is undefined again, untimed).

#![allow(clippy::print_stdout, reason = "it prints its measurements")]

use futures_util::StreamExt as _;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolwire::{BusEvent, ListChanged, NotificationBus, Server, ServerConfig, Tool};
use toolwire_replica::{Backend, Relay, SharedTools, ToolFactory};

async fn backend(url: &str, prefix: &str) -> Arc<dyn Backend> {
    if url.starts_with("nats://") {
        Arc::new(
            toolwire_nats::NatsBackend::connect(url, prefix)
                .await
                .expect("NATS"),
        )
    } else {
        Arc::new(
            toolwire_redis::RedisBackend::connect(url, prefix)
                .await
                .expect("Redis"),
        )
    }
}

fn report(what: &str, mut delays: Vec<Duration>) {
    delays.sort();
    let at = |q: f64| {
        let i = ((delays.len() as f64 - 1.0) * q).round() as usize;
        delays[i].as_secs_f64() * 1e3
    };
    println!(
        "{what:<7} n={} p50={:.3} ms p99={:.3} ms max={:.3} ms",
        delays.len(),
        at(0.50),
        at(0.99),
        at(1.0)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let prefix = format!("bench{}", std::process::id());

    let a = Arc::new(Relay::start(backend(&url, &prefix).await));
    let b = Arc::new(Relay::start(backend(&url, &prefix).await));
    let mut heard = b.subscribe();
    // Wait until B's subscription is live.
    loop {
        a.publish(BusEvent::ResourceUpdated { uri: "warm".into() });
        if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), heard.next()).await {
            break;
        }
    }
    while tokio::time::timeout(Duration::from_millis(200), heard.next())
        .await
        .is_ok()
    {}

    let mut delays = Vec::with_capacity(n);
    for i in 0..n {
        let event = BusEvent::ResourceUpdated {
            uri: format!("bench://{i}"),
        };
        let sent = Instant::now();
        a.publish(event.clone());
        loop {
            let got = heard.next().await.expect("stream");
            if got == event {
                break;
            }
        }
        delays.push(sent.elapsed());
    }
    report("event", delays);

    let factory: ToolFactory = Arc::new(|name, _| {
        Tool::builder(name)
            .input_schema(json!({"type": "object"}))
            .handler(|_: serde_json::Value, _| async { "ok" })
            .map_err(|e| e.to_string())
    });
    let sa = Server::new(ServerConfig::new("a", "0").with_bus(a.clone()));
    let sb = Server::new(ServerConfig::new("b", "0").with_bus(b.clone()));
    let ta = SharedTools::attach(&a, sa, factory.clone(), 4)
        .await
        .expect("attach");
    let _tb = SharedTools::attach(&b, sb.clone(), factory, 4)
        .await
        .expect("attach");
    let mut delays = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("t{i}");
        let sent = Instant::now();
        ta.define(&name, json!({})).await.expect("define");
        loop {
            let got = heard.next().await.expect("stream");
            if got == BusEvent::from(ListChanged::Tools) && sb.tool(&name).is_some() {
                break;
            }
        }
        delays.push(sent.elapsed());
        ta.undefine(&name).await.expect("undefine");
    }
    report("define", delays);
}
