//! The loop of one authorized HTTP request: the provider's
//! `Authorization` value goes on it; a 401 or 403 goes back to the
//! provider with its challenge, which may have the request sent again,
//! a bounded number of times. The transport does the sending.
//!
//! Spec: basic/authorization/index.mdx#authorization-flow-steps,
//! #step-up-authorization-flow

use super::{AuthError, AuthProvider, Challenge};
use crate::client::error::ClientError;
use http::{Response, StatusCode};
use std::future::Future;

/// Most times one request is sent with fresh credentials, whatever the
/// auth provider says.
const MAX_AUTH_ATTEMPTS: u32 = 8;

/// Sends a request through `send`, which is given the `Authorization`
/// value to carry (and keeps it for the requests it sends on its own);
/// a refusal is handed to `auth`, which may have it sent again.
pub(crate) async fn send_authorized<B, Fut>(
    auth: &dyn AuthProvider,
    send: impl Fn(Option<String>) -> Fut,
) -> Result<Response<B>, ClientError>
where
    Fut: Future<Output = Result<Response<B>, ClientError>>,
{
    for attempt in 0..MAX_AUTH_ATTEMPTS {
        let value = auth.authorization().await?;
        let response = send(value.clone()).await?;
        let status = response.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(response);
        }
        let values = response.headers().get_all(http::header::WWW_AUTHENTICATE);
        let challenge = Challenge::parse(values.iter().filter_map(|v| v.to_str().ok()));
        if !auth
            .refused(status.as_u16(), &challenge, value.as_deref(), attempt)
            .await?
        {
            return Ok(response);
        }
    }
    Err(AuthError::RetryLimit(MAX_AUTH_ATTEMPTS).into())
}
