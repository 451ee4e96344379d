//! What a test client's call can fail with: the server's JSON-RPC error,
//! kept whole so a test can assert its code and data, or a reason the
//! client itself stopped.

use serde_json::Value;
use std::time::Duration;
use toolwire_proto::types::InputRequest;
use toolwire_proto::{ErrorCode, ErrorObject};

/// Why a [`TestClient`](super::TestClient) call returned no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestError {
    /// The server answered with this JSON-RPC error (a protocol error: an
    /// unknown tool, bad params, a missing capability). A tool's execution
    /// error is an `isError` result instead, not this.
    #[error("the server answered with a JSON-RPC error: {0}")]
    Rpc(ErrorObject),
    /// The caller's grant ([`TestClient::with_grant`](super::TestClient))
    /// lacks scopes the operation needs: the HTTP transport's `403` with
    /// these scopes in its challenge.
    #[error("insufficient scope: the operation needs {}", scopes.join(" "))]
    Forbidden {
        /// Every scope the operation needs.
        scopes: Vec<String>,
    },
    /// A multi round-trip request asked for input that no scripted answer
    /// covers.
    #[error("no scripted answer for the input request {key:?} ({})", request.method())]
    Unanswered {
        /// The key of the input request in `inputRequests`.
        key: String,
        /// The input request.
        request: Box<InputRequest>,
    },
    /// The request still required input after this many rounds.
    #[error("still input_required after {0} rounds")]
    TooManyRounds(u32),
    /// The result does not decode as the method's result type.
    #[error("the {method} result does not decode: {message}")]
    Decode {
        /// The method.
        method: String,
        /// What serde said.
        message: String,
        /// The result as it came.
        result: Value,
    },
    /// No answer (or no stream message) within the client's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The listen stream ended without its closing result.
    #[error("the listen stream ended")]
    StreamEnded,
    /// Something a conforming server never does, or a request the client
    /// could not build.
    #[error("{0}")]
    Unexpected(String),
}

impl TestError {
    /// The JSON-RPC error, when the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Self::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error code, when the server answered with an error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.rpc().map(|e| e.code)
    }
}
