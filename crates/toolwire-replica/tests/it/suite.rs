//! The tests, run against each engine.

use crate::backend;
use crate::servers::{BusServer, Engine, free_port};
use futures_util::StreamExt as _;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use toolwire::{BusEvent, BusStream, ListChanged, NotificationBus, Server, ServerConfig, Tool};
use toolwire_replica::{Body, Envelope, Incoming, Relay, SharedTools, ToolFactory};

const SOON: Duration = Duration::from_secs(15);

fn uri(i: usize) -> BusEvent {
    BusEvent::ResourceUpdated {
        uri: format!("file:///{i}"),
    }
}

async fn next(s: &mut BusStream) -> BusEvent {
    tokio::time::timeout(SOON, s.next())
        .await
        .expect("an event in time")
        .expect("the stream goes on")
}

/// Events until `want` arrives (at most `SOON`).
async fn until(s: &mut BusStream, want: &BusEvent) -> Vec<BusEvent> {
    let mut seen = Vec::new();
    loop {
        let e = next(s).await;
        let done = &e == want;
        seen.push(e);
        if done {
            return seen;
        }
    }
}

/// A relay whose subscription is live: it has heard one of its own
/// messages come back through the engine. (Redis and NATS subscriptions
/// take effect asynchronously.)
async fn ready(relay: &Relay, probe: &mut BusStream, other: &Relay) {
    let marker = BusEvent::ResourceUpdated {
        uri: format!("probe://{}", relay.replica()),
    };
    tokio::time::timeout(SOON, async {
        loop {
            other.publish(marker.clone());
            if let Ok(Some(e)) =
                tokio::time::timeout(Duration::from_millis(200), probe.next()).await
                && e == marker
            {
                return;
            }
        }
    })
    .await
    .expect("the subscription becomes live");
}

pub(crate) async fn envelopes_carry_the_publisher_and_arrive_in_order(engine: Engine) {
    let bus = BusServer::start(engine).await;
    let a = Relay::start_as(backend(&bus).await, "replica-a");
    let b = Relay::start_as(backend(&bus).await, "replica-b");
    let mut heard = b.subscribe();
    ready(&b, &mut heard, &a).await;
    // A raw observer sees the wire format itself.
    let observer = backend(&bus).await;
    let mut raw = observer.incoming();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for i in 0..200 {
        a.publish(uri(i));
    }
    let got = until(&mut heard, &uri(199)).await;
    let expected: Vec<BusEvent> = (0..200).map(uri).collect();
    assert_eq!(got[got.len() - 200..], expected[..], "in publication order");
    let mut last_seq = 0;
    let mut seen = 0;
    while seen < 200 {
        let item = tokio::time::timeout(SOON, raw.next())
            .await
            .expect("raw message in time")
            .expect("raw stream goes on");
        let Incoming::Message(bytes) = item else {
            continue;
        };
        let wire: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON on the wire");
        let envelope: Envelope = serde_json::from_value(wire.clone()).expect("an envelope");
        assert_eq!(envelope.replica, "replica-a", "{wire}");
        assert!(envelope.seq > last_seq, "seq increases: {wire}");
        last_seq = envelope.seq;
        if let Body::Event { event } = &envelope.body
            && event == &uri(seen)
        {
            assert_eq!(wire["kind"], "event");
            assert_eq!(wire["event"]["event"], "resource_updated");
            seen += 1;
        }
    }
}

pub(crate) async fn a_replica_hears_its_own_events_once(engine: Engine) {
    let bus = BusServer::start(engine).await;
    let a = Relay::start(backend(&bus).await);
    let b = Relay::start(backend(&bus).await);
    let mut own = a.subscribe();
    let mut probe = b.subscribe();
    ready(&b, &mut probe, &a).await;
    while tokio::time::timeout(Duration::from_millis(300), own.next())
        .await
        .is_ok()
    {}
    a.publish(ListChanged::Prompts.into());
    // Delivered at once, locally, even before the engine saw it.
    assert_eq!(next(&mut own).await, ListChanged::Prompts.into());
    // The engine's copy comes back to `a` too; it must not be delivered again.
    until(&mut probe, &ListChanged::Prompts.into()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = tokio::time::timeout(Duration::from_millis(300), own.next()).await;
    assert!(again.is_err(), "delivered twice: {again:?}");
}

pub(crate) async fn an_unreachable_bus_is_a_start_up_error(engine: Engine) {
    let url = match engine {
        Engine::Redis => format!("redis://127.0.0.1:{}", free_port()),
        Engine::Nats => format!("nats://127.0.0.1:{}", free_port()),
    };
    let started = std::time::Instant::now();
    let err = match engine {
        Engine::Redis => toolwire_redis::connect(&url).await.map(drop),
        Engine::Nats => toolwire_nats::connect(&url).await.map(drop),
    }
    .expect_err("nothing listens there");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!err.to_string().is_empty());
}

pub(crate) async fn after_an_outage_listeners_resync_and_publishing_resumes(engine: Engine) {
    let mut bus = BusServer::start(engine).await;
    let a = Relay::start(backend(&bus).await);
    let b = Relay::start(backend(&bus).await);
    let mut heard = b.subscribe();
    let mut at_a = a.subscribe();
    ready(&b, &mut heard, &a).await;
    bus.stop().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Published while the engine is away: never blocks, and is held.
    let started = std::time::Instant::now();
    a.publish(ListChanged::Tools.into());
    assert!(started.elapsed() < Duration::from_millis(50));
    bus.restart().await;
    // Every list, as the resync after the reconnection: the change made in
    // the gap is not lost, whether its own message arrives or not (pub/sub
    // keeps nothing for a subscriber that is still reconnecting).
    // Both replicas reconnect, each on its own schedule.
    for stream in [&mut heard, &mut at_a] {
        let mut wanted: Vec<BusEvent> = ListChanged::ALL.map(BusEvent::from).to_vec();
        while !wanted.is_empty() {
            let e = next(stream).await;
            wanted.retain(|w| w != &e);
        }
    }
    assert!(a.resyncs() >= 1 && b.resyncs() >= 1);
    // The held message went out (the queue is in order), and the bus works
    // both ways again.
    a.publish(uri(9));
    until(&mut heard, &uri(9)).await;
    b.publish(uri(10));
    until(&mut at_a, &uri(10)).await;
}

/// Redis only: a paused Redis stalls publishing without dropping any
/// connection, so the overflow and the resync that follows are observed
/// without a reconnection in between. (A NATS client buffers while its
/// socket does; the relay logic under test is the same for both engines.)
pub(crate) async fn a_full_queue_drops_to_a_resync(engine: Engine) {
    let bus = BusServer::start(engine).await;
    let a = Relay::start_as(backend(&bus).await, "flooder");
    let b = Relay::start(backend(&bus).await);
    let mut heard = b.subscribe();
    ready(&b, &mut heard, &a).await;
    let observer = backend(&bus).await;
    let mut raw = observer.incoming();
    tokio::time::sleep(Duration::from_millis(300)).await;
    bus.pause(true);
    let started = std::time::Instant::now();
    for i in 0..3000 {
        a.publish(uri(i));
    }
    let took = started.elapsed();
    bus.pause(false);
    assert!(
        took < Duration::from_secs(1),
        "publishing never waits: {took:?}"
    );
    let resynced = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(item) = raw.next().await {
            if let Incoming::Message(bytes) = item
                && let Ok(e) = serde_json::from_slice::<Envelope>(&bytes)
                && e.replica == "flooder"
                && e.body == Body::Resync
            {
                return;
            }
        }
    })
    .await;
    assert!(resynced.is_ok(), "no resync after the queue overflowed");
    // The other replica's listeners were told every list changed.
    let mut wanted: Vec<BusEvent> = ListChanged::ALL.map(BusEvent::from).to_vec();
    while !wanted.is_empty() {
        let e = next(&mut heard).await;
        wanted.retain(|w| w != &e);
    }
}

fn factory() -> ToolFactory {
    Arc::new(|name, definition| {
        let text = definition["text"].as_str().ok_or("no text")?.to_owned();
        Tool::builder(name)
            .input_schema(json!({"type": "object"}))
            .handler(move |_: serde_json::Value, _| {
                let text = text.clone();
                async move { text }
            })
            .map_err(|e| e.to_string())
    })
}

pub(crate) async fn shared_tools_are_applied_before_their_list_changed(engine: Engine) {
    let bus = BusServer::start(engine).await;
    let ra = Arc::new(Relay::start(backend(&bus).await));
    let rb = Arc::new(Relay::start(backend(&bus).await));
    let a = Server::new(ServerConfig::new("a", "0").with_bus(ra.clone()));
    let b = Server::new(ServerConfig::new("b", "0").with_bus(rb.clone()));
    let ta = SharedTools::attach(&ra, a.clone(), factory(), 4)
        .await
        .expect("attach a");
    let tb = SharedTools::attach(&rb, b.clone(), factory(), 4)
        .await
        .expect("attach b");
    let mut heard = rb.subscribe();
    ready(&rb, &mut heard, &ra).await;

    ta.define("greet", json!({"text": "hi"}))
        .await
        .expect("define");
    until(&mut heard, &ListChanged::Tools.into()).await;
    assert!(b.tool("greet").is_some(), "applied before the list_changed");
    assert_eq!(tb.names(), ["greet"]);
    // One name, one definition, whichever replica asks.
    assert!(tb.define("greet", json!({"text": "other"})).await.is_err());
    assert!(ta.define("bad", json!({"no": "text"})).await.is_err());

    // Listening before the change: its list_changed can reach `a` before
    // `undefine` has returned here.
    let mut at_a = ra.subscribe();
    tb.undefine("greet").await.expect("undefine");
    until(&mut at_a, &ListChanged::Tools.into()).await;
    assert!(a.tool("greet").is_none(), "removed before the list_changed");
    assert!(ta.undefine("greet").await.is_err());

    // A replica that starts later loads what is stored.
    ta.define("late", json!({"text": "x"}))
        .await
        .expect("define");
    let rc = Arc::new(Relay::start(backend(&bus).await));
    let c = Server::new(ServerConfig::new("c", "0").with_bus(rc.clone()));
    let _tc = SharedTools::attach(&rc, c.clone(), factory(), 4)
        .await
        .expect("attach c");
    assert!(c.tool("late").is_some());

    // The limit holds.
    for i in 0..3 {
        ta.define(&format!("t{i}"), json!({"text": "x"}))
            .await
            .expect("within the limit");
    }
    assert!(ta.define("t9", json!({"text": "x"})).await.is_err());
}
