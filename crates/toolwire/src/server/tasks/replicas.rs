//! Tasks across replicas that share a store: the watcher that routes pokes
//! from the bus to this replica's runners, sweeps lapsed leases (ending
//! those tasks `failed`, or running a re-runnable tool's call again here),
//! and purges expired tasks; and the hand-over on shutdown.
//!
//! Spec: extensions/tasks

use super::super::Server;
use super::{Ended, RoundInput, TaskStart};
use crate::bus::BusEvent;
use crate::task::Change;
use crate::task::time::now_ms;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::time::Instant;
use toolwire_proto::RequestId;
use toolwire_proto::types::RequestMeta;

impl Server {
    /// On a shared store, starts this server's watcher once: pokes from
    /// other replicas reach the runners here, and tasks whose replica
    /// stopped are taken over. It holds the server weakly, and ends with
    /// it.
    pub(super) fn watch_tasks(&self) {
        let tasks = &self.inner.tasks;
        if !tasks.shared() || tasks.watching.swap(true, Ordering::Relaxed) {
            return;
        }
        tokio::spawn(watch(Arc::downgrade(&self.inner)));
    }

    /// A poke from the bus: if the task runs here, its runner re-reads it.
    async fn poked(&self, task_id: &str) {
        let Some(runner) = self.inner.tasks.runner(task_id) else {
            return;
        };
        match self.inner.tasks.options.store.get(task_id).await {
            Ok(Some(record)) if record.cancel_requested => runner.cancel.cancel(),
            _ => runner.wake.notify_one(),
        }
    }

    /// Takes over the tasks whose lease lapsed: a re-runnable tool's runs
    /// again here, any other ends `failed`, saying its replica stopped.
    /// `false` if the store did not answer.
    async fn sweep(&self) -> bool {
        let store = Arc::clone(&self.inner.tasks.options.store);
        let now = now_ms();
        let Ok(lapsed) = store.lapsed(now, SWEEP_BATCH).await else {
            return false;
        };
        for task_id in lapsed {
            if self.rerun(&task_id).await {
                continue;
            }
            if let Ok(Some(applied)) = store.apply_change(&task_id, Change::Abandon, now).await
                && applied.changed
            {
                tracing::info!(task = %task_id, "a task's replica stopped; the task ended failed");
                self.task_changed(&task_id);
            }
        }
        true
    }

    /// Claims a lapsed task of a re-runnable tool this server has, and
    /// runs its call again from the start; `false` if it is not one.
    async fn rerun(&self, task_id: &str) -> bool {
        let tasks = &self.inner.tasks;
        let store = &tasks.options.store;
        let Ok(Some(record)) = store.get(task_id).await else {
            return false;
        };
        let Some(rerun) = record.rerun.clone() else {
            return false;
        };
        let Some(handle) = self.inner.tools.snapshot().get(&record.tool).cloned() else {
            return false;
        };
        if !handle.inner.task.rerun || tasks.closing.load(Ordering::Relaxed) {
            return false;
        }
        let Ok(meta) = serde_json::from_value::<RequestMeta>(rerun.meta) else {
            return false;
        };
        let claim = Change::Claim {
            holder: tasks.replica.clone(),
            until_ms: tasks.lease_until(),
        };
        match store.change(task_id, claim, now_ms()).await {
            Ok(Some((_, applied))) if applied.held => {}
            _ => return false,
        }
        tracing::info!(task = %task_id, tool = %record.tool, "a task's replica stopped; running its call again here");
        let runner = self.add_runner(task_id);
        let start = TaskStart {
            tool: Arc::clone(&handle.inner),
            name: record.tool.clone(),
            id: RequestId::String(format!("rerun-{task_id}").into()),
            args: rerun.arguments,
            meta: Arc::new(meta),
            principal: record.owner.as_deref().map(Arc::from),
            client: record.client.as_deref().map(Arc::from),
            input: RoundInput::default(),
            place: None,
        };
        let left = record.expires_ms().saturating_sub(now_ms());
        let deadline = Instant::now() + Duration::from_millis(left);
        tokio::spawn(
            self.clone()
                .drive(task_id.to_owned(), start, runner, None, deadline),
        );
        true
    }

    /// Shutting down: takes no new task, lets the running ones finish for
    /// up to `grace`, then hands the rest over. On a shared store their
    /// leases lapse at once, so another replica ends them `failed` or runs
    /// them again; on a store of this replica alone they end `failed`.
    pub async fn hand_over_tasks(&self, grace: Duration) {
        let tasks = &self.inner.tasks;
        tasks.closing.store(true, Ordering::Relaxed);
        let until = Instant::now() + grace;
        while !tasks.running().is_empty() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let left: Vec<String> = tasks
            .runners
            .lock()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default();
        for task_id in left {
            if let Some(runner) = tasks.runner(&task_id) {
                runner.handover.cancel();
            }
            let store = &tasks.options.store;
            let now = now_ms();
            let _ = if tasks.shared() {
                let release = Change::Release {
                    holder: tasks.replica.clone(),
                };
                store.apply_change(&task_id, release, now).await
            } else {
                let lost = Change::Finish(Ended::Failed(crate::task::runner_lost()));
                store.apply_change(&task_id, lost, now).await
            };
            self.task_changed(&task_id);
        }
    }
}

/// Lapsed tasks taken over per sweep.
const SWEEP_BATCH: usize = 64;

/// How often a replica looks for lapsed leases.
const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// Every how many sweeps a replica deletes the expired tasks of a shared
/// store (every minute).
const PURGE_EVERY_SWEEPS: u32 = 120;

/// The watcher of one server on a shared store: routes pokes from the bus
/// to this replica's runners, sweeps lapsed leases and, every minute,
/// deletes expired tasks the store does not drop by itself. After the store
/// failed to answer, it waits one lease before taking anything over, so
/// that runners alive through the outage renew first.
async fn watch(server: Weak<super::super::ServerInner>) {
    use futures_util::StreamExt as _;
    let Some(inner) = server.upgrade() else {
        return;
    };
    let mut events = inner.bus.subscribe();
    let lease = inner.tasks.options.lease;
    drop(inner);
    let mut sweep = tokio::time::interval(SWEEP_EVERY);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut quiet_until: Option<Instant> = None;
    let mut bus_open = true;
    let mut sweeps: u32 = 0;
    loop {
        tokio::select! {
            event = events.next(), if bus_open => {
                let Some(inner) = server.upgrade() else { return };
                match event {
                    Some(BusEvent::TaskChanged { task_id }) => {
                        Server { inner }.poked(&task_id).await;
                    }
                    Some(_) => {}
                    None => bus_open = false,
                }
            }
            _ = sweep.tick() => {
                let Some(inner) = server.upgrade() else { return };
                let server = Server { inner };
                if quiet_until.is_some_and(|t| Instant::now() < t) {
                    // Only checking that the store answers again.
                    if server.inner.tasks.options.store.lapsed(now_ms(), 0).await.is_err() {
                        quiet_until = Some(Instant::now() + lease);
                    }
                    continue;
                }
                if !server.sweep().await {
                    quiet_until = Some(Instant::now() + lease);
                    continue;
                }
                sweeps = (sweeps + 1) % PURGE_EVERY_SWEEPS;
                if sweeps == 0 {
                    match server.inner.tasks.options.store.purge(now_ms()).await {
                        Ok(0) => {}
                        Ok(gone) => tracing::debug!(gone, "expired tasks deleted"),
                        Err(e) => tracing::debug!(error = %e, "deleting expired tasks failed"),
                    }
                }
            }
        }
    }
}
