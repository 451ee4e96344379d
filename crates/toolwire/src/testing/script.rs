//! The scripted answers to input requests: a queue used first, then one
//! answer function per kind. The capabilities a client declares by default
//! are the kinds it can answer.

use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Mutex, RwLock};
use toolwire_proto::types::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, InputRequest,
    ListRootsRequestParams,
};

type Answer<P> = Box<dyn Fn(&P) -> Value + Send + Sync>;

/// The answers a test scripted.
#[derive(Default)]
pub(super) struct Script {
    queue: Mutex<VecDeque<Value>>,
    elicit: RwLock<Option<Answer<ElicitRequestParams>>>,
    sample: RwLock<Option<Answer<CreateMessageRequestParams>>>,
    roots: RwLock<Option<Answer<ListRootsRequestParams>>>,
}

fn set<P>(slot: &RwLock<Option<Answer<P>>>, answer: Answer<P>) {
    match slot.write() {
        Ok(mut s) => *s = Some(answer),
        Err(p) => *p.into_inner() = Some(answer),
    }
}

fn call<P>(slot: &RwLock<Option<Answer<P>>>, params: &P) -> Option<Value> {
    slot.read().ok()?.as_ref().map(|answer| answer(params))
}

fn has<P>(slot: &RwLock<Option<Answer<P>>>) -> bool {
    slot.read().is_ok_and(|s| s.is_some())
}

impl Script {
    pub(super) fn set_elicit(&self, answer: Answer<ElicitRequestParams>) {
        set(&self.elicit, answer);
    }

    pub(super) fn set_sample(&self, answer: Answer<CreateMessageRequestParams>) {
        set(&self.sample, answer);
    }

    pub(super) fn set_roots(&self, answer: Answer<ListRootsRequestParams>) {
        set(&self.roots, answer);
    }

    pub(super) fn queue(&self, answer: Value) {
        if let Ok(mut q) = self.queue.lock() {
            q.push_back(answer);
        }
    }

    /// The answer to `request`: the next queued one, else the function for
    /// its kind; `None` when neither is there.
    pub(super) fn answer(&self, request: &InputRequest) -> Option<Value> {
        if let Some(queued) = self.queue.lock().ok().and_then(|mut q| q.pop_front()) {
            return Some(queued);
        }
        match request {
            InputRequest::Elicit(p) => call(&self.elicit, p),
            InputRequest::CreateMessage(p) => call(&self.sample, p),
            InputRequest::ListRoots(p) => call(&self.roots, p),
        }
    }

    /// What a client with these answers can do: form elicitation, sampling
    /// and roots, each when its function is set.
    pub(super) fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: has(&self.elicit).then(Default::default),
            sampling: has(&self.sample).then(Default::default),
            roots: has(&self.roots).then(Default::default),
            ..ClientCapabilities::default()
        }
    }
}
