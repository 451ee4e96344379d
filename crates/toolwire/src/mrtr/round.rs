//! What one MRTR round brings the handler: the answers its state vouches
//! for and its unsealed state ([`RoundInput`]), and the sorting of
//! `inputResponses` into answers and the rest. The server opens and seals
//! the round around the handler (`server/rounds.rs`).

use serde_json::Value;
use toolwire_proto::types::InputResponses;

/// What a retry brought, for the handler's [`RequestContext`](crate::RequestContext).
#[derive(Debug, Clone, Default)]
pub(crate) struct RoundInput {
    /// This attempt's round: 1 for a first attempt, one more than the round
    /// that sealed the echoed state otherwise.
    pub(crate) round: u32,
    /// The members of `inputResponses` that answer a request the verified
    /// state's round sent; `None` without a verified state.
    pub(crate) responses: Option<InputResponses>,
    /// The other members of `inputResponses` (all of them without a
    /// state): answers nothing vouches for. `None` when there are none.
    pub(crate) unsolicited: Option<InputResponses>,
    /// The handler's unsealed state; `null` when there was none.
    pub(crate) state: Value,
}

impl RoundInput {
    /// Whether this is a first attempt that brought nothing: round 1, no
    /// answers and no state, as [`RequestContext`](crate::RequestContext)
    /// reads a context without a round.
    pub(crate) fn is_first(&self) -> bool {
        self.round <= 1
            && self.responses.is_none()
            && self.unsolicited.is_none()
            && self.state.is_null()
    }
}

/// Splits `all` into the answers to the requests `asked` names (sorted;
/// `None` when no verified state says what was asked) and the rest.
pub(crate) fn split_answers(
    all: InputResponses,
    asked: Option<&[String]>,
) -> (Option<InputResponses>, Option<InputResponses>) {
    let Some(asked) = asked else {
        return (None, (!all.is_empty()).then_some(all));
    };
    let mut answers = InputResponses::new();
    let mut rest = InputResponses::new();
    for (key, value) in all {
        if asked.binary_search(&key).is_ok() {
            answers.insert(key, value);
        } else {
            rest.insert(key, value);
        }
    }
    (Some(answers), (!rest.is_empty()).then_some(rest))
}
