//! [`RedisTaskStore`] against a real `redis-server` (the Debian package,
//! installed by `scripts/scale-install`) on a free loopback port: the
//! bounds at creation, changes through the one state machine, leases and
//! their lapse, expiry, and an outage.

#[path = "../../toolwire-replica/tests/it/servers.rs"]
#[allow(dead_code)]
mod servers;

use servers::{BusServer, Engine};
use toolwire::proto::types::{InputResponses, TaskState};
use toolwire::task::{Change, CreateLimits, Lease, StoreError, TaskRecord, TaskStore, now_ms};
use toolwire_redis::RedisTaskStore;

fn record(id: &str, owner: &str, ttl_ms: u64, lease: Option<u64>) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.to_owned(),
        owner: Some(owner.to_owned()),
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
    let redis = BusServer::start(Engine::Redis).await;
    let a = RedisTaskStore::connect(&redis.url(), "t1")
        .await
        .expect("a");
    let b = RedisTaskStore::connect(&redis.url(), "t1")
        .await
        .expect("b");
    assert!(a.shared());

    a.create(record("x1", "alice", 60_000, None), LIMITS)
        .await
        .expect("x1");
    // Visible through another connection as soon as create returns.
    let seen = b.get("x1").await.expect("get").expect("found");
    assert_eq!(seen.owner.as_deref(), Some("alice"));
    a.create(record("x2", "alice", 60_000, None), LIMITS)
        .await
        .expect("x2");
    assert_eq!(
        a.create(record("x3", "alice", 60_000, None), LIMITS).await,
        Err(StoreError::OwnerFull(2))
    );
    // The refused task left nothing behind.
    assert_eq!(b.get("x3").await.expect("get"), None);
    b.create(record("y1", "bob", 60_000, None), LIMITS)
        .await
        .expect("y1");
    assert_eq!(
        b.create(record("y2", "bob", 60_000, None), LIMITS).await,
        Err(StoreError::Full(3))
    );

    // Concurrent changes from two connections all land.
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
}

#[tokio::test]
async fn lapsed_leases_are_found_and_an_expired_task_is_gone() {
    let redis = BusServer::start(Engine::Redis).await;
    let store = RedisTaskStore::connect(&redis.url(), "t2")
        .await
        .expect("store");
    let now = now_ms();
    let limits = CreateLimits {
        per_owner: 10,
        total: 10,
    };
    store
        .create(record("held", "a", 60_000, Some(now + 60_000)), limits)
        .await
        .expect("held");
    store
        .create(record("lapsing", "a", 60_000, Some(now + 100)), limits)
        .await
        .expect("lapsing");
    store
        .create(record("brief", "a", 200, None), limits)
        .await
        .expect("brief");
    assert!(store.lapsed(now, 10).await.expect("lapsed").is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
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
    // Expired: gone, for get and change alike.
    assert_eq!(store.get("brief").await.expect("get"), None);
    assert_eq!(
        store.change("brief", Change::RequestCancel, now_ms()).await,
        Ok(None)
    );
}

#[tokio::test]
async fn while_redis_is_down_the_store_fails_cleanly_and_recovers() {
    let mut redis = BusServer::start(Engine::Redis).await;
    let store = RedisTaskStore::connect(&redis.url(), "t3")
        .await
        .expect("store");
    store
        .create(record("kept", "a", 60_000, None), LIMITS)
        .await
        .expect("kept");
    redis.stop().await;
    let refused = tokio::time::timeout(
        std::time::Duration::from_secs(15),
        store.create(record("lost", "a", 60_000, None), LIMITS),
    )
    .await
    .expect("fails in bounded time");
    assert!(
        matches!(refused, Err(StoreError::Unavailable(_))),
        "{refused:?}"
    );
    redis.restart().await;
    // The same store works again, reconnecting by itself; the refused
    // task was never stored.
    store
        .create(record("after", "a", 60_000, None), LIMITS)
        .await
        .expect("after");
    assert!(store.get("after").await.expect("get").is_some());
    assert_eq!(store.get("lost").await.expect("get"), None);
}
