//! [`NatsTaskStore`] against a real `nats-server -js` (the Debian package,
//! installed by `scripts/scale-install`) on a free loopback port: the
//! bounds at creation, changes through the one state machine from several
//! connections, leases and their lapse, expiry and purging, and an outage.

#[path = "../../toolwire-replica/tests/it/servers.rs"]
#[allow(dead_code)]
mod servers;

use servers::{BusServer, Engine};
use std::time::Duration;
use toolwire::proto::types::{InputResponses, TaskState};
use toolwire::task::{Change, CreateLimits, Lease, StoreError, TaskRecord, TaskStore, now_ms};
use toolwire_nats::NatsTaskStore;

fn record(id: &str, owner: Option<&str>, ttl_ms: u64, lease: Option<u64>) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.to_owned(),
        owner: owner.map(str::to_owned),
        client: None,
        tool: "t".to_owned(),
        state: TaskState::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms,
        poll_interval_ms: 1000,
        answers: InputResponses::new(),
        cancel_requested: false,
        lease: lease.map(|until_ms| Lease {
            holder: "r1".to_owned(),
            until_ms,
        }),
        rerun: None,
    }
}

const LIMITS: CreateLimits = CreateLimits {
    per_owner: 2,
    total: 3,
};

#[tokio::test]
async fn creation_is_bounded_and_changes_apply_atomically_across_connections() {
    let nats = BusServer::start(Engine::Nats).await;
    let a = NatsTaskStore::connect(&nats.url(), "t1").await.expect("a");
    let b = NatsTaskStore::connect(&nats.url(), "t1").await.expect("b");
    assert!(a.shared());

    a.create(record("x1", Some("alice"), 60_000, None), LIMITS)
        .await
        .expect("x1");
    // Visible through another connection as soon as create returns.
    let seen = b.get("x1").await.expect("get").expect("found");
    assert_eq!(seen.owner.as_deref(), Some("alice"));
    a.create(record("x2", Some("alice"), 60_000, None), LIMITS)
        .await
        .expect("x2");
    assert_eq!(
        a.create(record("x3", Some("alice"), 60_000, None), LIMITS)
            .await,
        Err(StoreError::OwnerFull(2))
    );
    // The refused task left nothing behind.
    assert_eq!(b.get("x3").await.expect("get"), None);
    // Anonymous callers have an owner slot list of their own.
    b.create(record("y1", None, 60_000, None), LIMITS)
        .await
        .expect("y1");
    assert_eq!(
        b.create(record("y2", Some("bob"), 60_000, None), LIMITS)
            .await,
        Err(StoreError::Full(3))
    );
    assert_eq!(a.get("y2").await.expect("get"), None);

    // Concurrent changes from two connections all land, none lost.
    let messages = (0..10).map(|i| {
        let store = if i % 2 == 0 { &a } else { &b };
        store.change("x1", Change::Message(format!("m{i}")), now_ms())
    });
    for done in futures_util::future::join_all(messages).await {
        assert!(done.expect("change").is_some());
    }
    let (after, applied) = a
        .change("x1", Change::RequestCancel, now_ms())
        .await
        .expect("cancel")
        .expect("found");
    assert!(applied.changed && after.cancel_requested);
    assert_eq!(b.get("x1").await.expect("get"), Some(after));
    assert_eq!(
        a.change("nope", Change::RequestCancel, now_ms()).await,
        Ok(None)
    );
    // Ids that cannot be keys (wildcards, dots) are merely unknown.
    for id in ["x1.>", "*", "x1 ", ""] {
        assert_eq!(a.get(id).await.expect("get"), None, "{id}");
        assert_eq!(
            a.change(id, Change::RequestCancel, now_ms()).await,
            Ok(None)
        );
    }
}

#[tokio::test]
async fn lapsed_leases_are_found_and_an_expired_task_is_gone_and_purged() {
    let nats = BusServer::start(Engine::Nats).await;
    let store = NatsTaskStore::connect(&nats.url(), "t2")
        .await
        .expect("store");
    let now = now_ms();
    let limits = CreateLimits {
        per_owner: 2,
        total: 10,
    };
    store
        .create(
            record("held", Some("a"), 60_000, Some(now + 60_000)),
            limits,
        )
        .await
        .expect("held");
    store
        .create(
            record("lapsing", Some("b"), 60_000, Some(now + 100)),
            limits,
        )
        .await
        .expect("lapsing");
    store
        .create(record("brief", Some("a"), 200, None), limits)
        .await
        .expect("brief");
    assert!(store.lapsed(now, 10).await.expect("lapsed").is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        store.lapsed(now_ms(), 10).await.expect("lapsed"),
        ["lapsing"]
    );
    // A heartbeat renews the lease; another replica's does not.
    let other = Change::Heartbeat {
        holder: "r2".to_owned(),
        until_ms: now_ms() + 60_000,
    };
    let (_, applied) = store
        .change("lapsing", other, now_ms())
        .await
        .expect("beat")
        .expect("found");
    assert!(!applied.held);
    let (_, applied) = store
        .change("held", Change::Abandon, now_ms())
        .await
        .expect("abandon")
        .expect("found");
    assert!(
        !applied.changed,
        "a task whose lease holds is not abandoned"
    );
    let (_, applied) = store
        .change("lapsing", Change::Abandon, now_ms())
        .await
        .expect("abandon")
        .expect("found");
    assert!(applied.changed);
    let failed = store.get("lapsing").await.expect("get").expect("found");
    assert!(
        matches!(failed.state, TaskState::Failed { .. }),
        "{failed:?}"
    );
    // Ended: no longer among the lapsed.
    assert!(store.lapsed(now_ms(), 10).await.expect("lapsed").is_empty());
    // Past its time to live a task is gone, even for a change.
    assert_eq!(
        store
            .change("held", Change::RequestCancel, now_ms() + 120_000)
            .await,
        Ok(None)
    );

    // Expired: gone, for get and change alike.
    assert_eq!(store.get("brief").await.expect("get"), None);
    assert_eq!(
        store.change("brief", Change::RequestCancel, now_ms()).await,
        Ok(None)
    );
    // Its owner slot is free again: "a" holds "held" and can create one
    // more.
    store
        .create(record("again", Some("a"), 60_000, None), limits)
        .await
        .expect("the expired task's slot was given back");
    // Purging at a time past every task's expiry deletes them all.
    let later = now_ms() + 120_000;
    assert_eq!(store.purge(later).await.expect("purge"), 3);
    assert_eq!(store.purge(later).await.expect("purge"), 0);
    for id in ["held", "lapsing", "again"] {
        assert_eq!(store.get(id).await.expect("get"), None, "{id}");
    }
    assert!(store.lapsed(later, 10).await.expect("lapsed").is_empty());
    // The count went down with them: the total bound is free again.
    let tight = CreateLimits {
        per_owner: 1,
        total: 1,
    };
    store
        .create(record("fresh", Some("c"), 60_000, None), tight)
        .await
        .expect("the count was given back");
}

#[tokio::test]
async fn while_nats_is_down_the_store_fails_cleanly_and_recovers() {
    let mut nats = BusServer::start(Engine::Nats).await;
    let store = NatsTaskStore::connect(&nats.url(), "t3")
        .await
        .expect("store");
    store
        .create(record("kept", Some("a"), 60_000, None), LIMITS)
        .await
        .expect("kept");
    nats.stop().await;
    let refused = tokio::time::timeout(
        Duration::from_secs(15),
        store.create(record("lost", Some("a"), 60_000, None), LIMITS),
    )
    .await
    .expect("fails in bounded time");
    assert!(
        matches!(refused, Err(StoreError::Unavailable(_))),
        "{refused:?}"
    );
    let read = tokio::time::timeout(Duration::from_secs(15), store.get("kept"))
        .await
        .expect("fails in bounded time");
    assert!(matches!(read, Err(StoreError::Unavailable(_))), "{read:?}");
    nats.restart().await;
    // The same store works again once its client reconnected by itself;
    // the refused task was never stored, and the kept one survived
    // (JetStream keeps its data on disk).
    let after = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match store
                .create(record("after", Some("a"), 60_000, None), LIMITS)
                .await
            {
                Ok(()) => break,
                Err(StoreError::Unavailable(_)) => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    assert!(after.is_ok(), "the store did not recover");
    assert!(store.get("after").await.expect("get").is_some());
    assert!(store.get("kept").await.expect("get").is_some());
    assert_eq!(store.get("lost").await.expect("get"), None);
}
