//! `toolwire gateway` under an upstream's storm of list changes: an
//! upstream (a library server on loopback, counting the `tools/list` it
//! serves) sends 10,000 `notifications/tools/list_changed` in 10 s while
//! its lists stay the same. The gateway lists it about once a second, not
//! once per notification; its clients hear of no change, since the merged
//! list did not change; and another upstream is served throughout.

use super::gateway::{gateway, scratch, stdio_upstream, write_config};
use crate::support::Proc;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use toolwire::middleware::Metrics;
use toolwire::{BusEvent, HttpConfig, ListChanged, Server, ServerConfig, Tool};

/// `mcp_server_requests_total` for `method`, from the metrics text.
fn served(metrics: &Metrics, method: &str) -> u64 {
    let label = format!("mcp_method_name=\"{method}\"");
    metrics
        .render_prometheus()
        .lines()
        .filter(|l| l.starts_with("mcp_server_requests_total{") && l.contains(&label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// User and system CPU of process `pid` so far (clock ticks of 10 ms).
fn cpu_of(pid: u32) -> Duration {
    Duration::from_millis(super::bounds::cpu_ticks(pid) * 10)
}

/// Reads what the gateway sends for `wait`, returning the list-change
/// notifications among it.
async fn list_changes(gw: &mut Proc, wait: Duration) -> Vec<Value> {
    gw.drain(wait)
        .await
        .into_iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect()
}

#[tokio::test]
async fn a_flood_of_list_changes_is_listed_about_once_a_second_and_others_are_served() {
    let metrics = Metrics::new();
    let storm = Server::new(ServerConfig::new("storm", "1.0.0")).with_layer(metrics.layer());
    storm
        .add_tool(
            Tool::builder("ping")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "pong" })
                .expect("ping"),
        )
        .expect("add");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(toolwire::serve_http_on(
        storm.clone(),
        listener,
        HttpConfig::new(),
        std::future::pending(),
    ));
    let dir = scratch("storm");
    let config = write_config(
        &dir,
        &format!(
            "{}[upstreams.storm]\nurl = {url:?}\n",
            stdio_upstream("demo")
        ),
    );
    let mut gw = gateway(&config);
    let list = gw.call(1, "tools/list", json!({})).await;
    let names = super::gateway::names(&list);
    assert!(
        names.contains(&"storm__ping".to_owned()) && names.contains(&"demo__echo".to_owned()),
        "{names:?}"
    );
    gw.send(
        &json!({"jsonrpc": "2.0", "id": "changes", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": crate::support::meta()}}),
    )
    .await;
    let ack = gw.next().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // The gateway's own relay to the upstream is open once its listing
    // after opening it came; a quiet second lets it settle.
    assert!(
        list_changes(&mut gw, Duration::from_secs(1))
            .await
            .is_empty()
    );
    let listed_before = served(&metrics, "tools/list");
    let cpu_before = cpu_of(gw.child.id().expect("pid"));

    // 10,000 list changes in 10 s, 100 every 100 ms, while the other
    // upstream is called through the gateway every 100 ms.
    let started = Instant::now();
    let mut heard = Vec::new();
    let mut slowest = Duration::ZERO;
    for round in 0..100_i64 {
        for _ in 0..100 {
            storm.publish(BusEvent::ListChanged {
                list: ListChanged::Tools,
            });
        }
        let asked = Instant::now();
        gw.request(
            100 + round,
            "tools/call",
            json!({"name": "demo__echo", "arguments": {"text": format!("r{round}")}}),
        )
        .await;
        let (r, seen) = gw.response(100 + round).await;
        slowest = slowest.max(asked.elapsed());
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("r{round}"),
            "round {round}: {r}"
        );
        heard.extend(
            seen.into_iter()
                .filter(|m| m["method"] == "notifications/tools/list_changed"),
        );
        let next = started + Duration::from_millis(100 * (round as u64 + 1));
        tokio::time::sleep_until(next.into()).await;
    }
    // The last changes' listing, a gap later.
    heard.extend(list_changes(&mut gw, Duration::from_millis(1500)).await);
    let storm_took = started.elapsed();
    let listed = served(&metrics, "tools/list") - listed_before;
    let cpu = cpu_of(gw.child.id().expect("pid")) - cpu_before;
    eprintln!(
        "storm: 10,000 list changes in {storm_took:.1?}; the gateway listed the upstream {listed} times, \
         used {cpu:?} of CPU ({:.1} % of a core, debug build); the slowest call through it took {slowest:?}",
        cpu.as_secs_f64() * 100.0 / storm_took.as_secs_f64()
    );
    assert!(
        (2..20).contains(&listed),
        "the storm's changes were listed {listed} times (at most one listing a second, and at least one)"
    );
    assert!(
        heard.is_empty(),
        "the merged list did not change, so clients hear nothing: {heard:?}"
    );
    // A real change still comes through, and is told downstream.
    storm
        .add_tool(
            Tool::builder("pong")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "ping" })
                .expect("pong"),
        )
        .expect("add");
    let told = list_changes(&mut gw, Duration::from_secs(3)).await;
    assert!(!told.is_empty(), "a real change is told");
    let list = gw.call(2, "tools/list", json!({})).await;
    assert!(
        super::gateway::names(&list).contains(&"storm__pong".to_owned()),
        "{list}"
    );
}
