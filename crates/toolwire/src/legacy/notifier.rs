//! Where a legacy session's unsolicited notifications go: the stdio writer,
//! or an HTTP session's GET stream through a bounded queue that coalesces
//! repeated list changes.
//!
//! A list-changed notification only tells the client to list again, so one
//! pending per list is as good as many: the queue keeps a flag per list, not
//! a message. Other notifications (resource updates, withdrawn requests) are
//! queued up to a bound; a stream that falls that far behind is closed, and
//! its memory given back, rather than buffered without limit.
//!
//! Spec (2025-11-25): basic/transports.mdx#listening-for-messages-from-the-server

use crate::bus::ListChanged;
use crate::context::Outbound;
use bytes::Bytes;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use toolwire_proto::encode_notification;
use toolwire_proto::types::{
    NotificationMethod, PromptListChangedNotification, ResourceListChangedNotification,
    ToolListChangedNotification,
};

/// A session's notification sink.
#[derive(Debug, Clone)]
pub(crate) enum Notifier {
    /// The stdio writer: backpressure is the reader's job there.
    Writer(Outbound),
    /// An HTTP session's GET stream.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Stream(Arc<StreamQueue>),
}

impl Notifier {
    /// Whether the sink still takes messages.
    pub(crate) fn is_open(&self) -> bool {
        match self {
            Self::Writer(tx) => !tx.is_closed(),
            Self::Stream(q) => !q.is_closed(),
        }
    }

    /// Sends one encoded notification.
    pub(crate) fn send(&self, msg: Bytes) {
        match self {
            Self::Writer(tx) => {
                let _ = tx.send(msg);
            }
            Self::Stream(q) => q.push(msg),
        }
    }

    /// Tells the client that `list` changed.
    pub(crate) fn list_changed(&self, list: ListChanged) {
        match self {
            Self::Writer(tx) => {
                let _ = tx.send(encode_list_changed(list));
            }
            Self::Stream(q) => q.mark(list),
        }
    }

    /// Stops a stream: it ends and its queue is freed.
    pub(crate) fn close(&self) {
        if let Self::Stream(q) = self {
            q.close();
        }
    }
}

fn encode_list_changed(list: ListChanged) -> Bytes {
    let method = match list {
        ListChanged::Tools => ToolListChangedNotification::METHOD,
        ListChanged::Prompts => PromptListChangedNotification::METHOD,
        ListChanged::Resources => ResourceListChangedNotification::METHOD,
    };
    Bytes::from(encode_notification::<Value>(method, None))
}

fn bit(list: ListChanged) -> u8 {
    match list {
        ListChanged::Tools => 1,
        ListChanged::Prompts => 2,
        ListChanged::Resources => 4,
    }
}

#[derive(Debug, Default)]
struct State {
    messages: VecDeque<Bytes>,
    /// One bit per list with a change not yet sent.
    lists: u8,
    closed: bool,
}

/// The bounded queue of one GET stream, with one consumer (the stream).
#[derive(Debug)]
pub(crate) struct StreamQueue {
    state: Mutex<State>,
    ready: Notify,
    capacity: usize,
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // the HTTP transport's
impl StreamQueue {
    /// A queue holding at most `capacity` messages besides the list flags.
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::default()),
            ready: Notify::new(),
            capacity: capacity.max(1),
        })
    }

    fn push(&self, msg: Bytes) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if s.closed {
            return;
        }
        if s.messages.len() >= self.capacity {
            tracing::debug!(
                capacity = self.capacity,
                "a legacy GET stream fell too far behind; closing it"
            );
            s.closed = true;
            s.messages = VecDeque::new();
            s.lists = 0;
        } else {
            s.messages.push_back(msg);
        }
        drop(s);
        self.ready.notify_one();
    }

    fn mark(&self, list: ListChanged) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if s.closed || s.lists & bit(list) != 0 {
            return;
        }
        s.lists |= bit(list);
        drop(s);
        self.ready.notify_one();
    }

    /// Ends the stream and frees what it held.
    pub(crate) fn close(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.closed = true;
            s.messages = VecDeque::new();
            s.lists = 0;
        }
        self.ready.notify_one();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().map_or(true, |s| s.closed)
    }

    fn take(&self) -> Option<Option<Bytes>> {
        let mut s = self.state.lock().ok()?;
        if s.closed {
            return Some(None);
        }
        if let Some(msg) = s.messages.pop_front() {
            return Some(Some(msg));
        }
        let list = ListChanged::ALL
            .into_iter()
            .find(|l| s.lists & bit(*l) != 0)?;
        s.lists &= !bit(list);
        Some(Some(encode_list_changed(list)))
    }

    /// The next message, or `None` once the queue is closed.
    pub(crate) async fn next(&self) -> Option<Bytes> {
        loop {
            match self.take() {
                Some(next) => return next,
                // `notify_one` keeps a permit when nobody waits, so a message
                // pushed between `take` and here is not missed.
                None => self.ready.notified().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn list_changes_coalesce_and_a_stream_too_far_behind_closes() {
        let q = StreamQueue::new(2);
        for _ in 0..1000 {
            q.mark(ListChanged::Tools);
        }
        q.mark(ListChanged::Prompts);
        let first = q.next().await.expect("tools");
        assert!(
            std::str::from_utf8(&first)
                .expect("utf8")
                .contains("tools/list_changed")
        );
        let second = q.next().await.expect("prompts");
        assert!(
            std::str::from_utf8(&second)
                .expect("utf8")
                .contains("prompts/list_changed")
        );
        q.push(Bytes::from_static(b"a"));
        q.push(Bytes::from_static(b"b"));
        assert!(!q.is_closed());
        q.push(Bytes::from_static(b"c"));
        assert!(q.is_closed(), "a third message overflows a queue of two");
        assert_eq!(q.next().await, None);
    }
}
