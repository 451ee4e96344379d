//! The user of the auth scenarios, without a browser: the suite's mock
//! authorization server approves at once, answering the authorization
//! request with a redirect to `redirect_uri`; that `Location` is the
//! authorization response.

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::future::Future;
use std::pin::Pin;
use toolwire::oauth::{AuthError, Redirect, RedirectWait, Url};

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

/// Where the mock sends the response; nothing listens there, the
/// redirect is read instead of followed.
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// Follows nothing: one GET of the authorization URL, its `Location` read.
pub(crate) struct Headless;

impl Redirect for Headless {
    fn prepare(&self) -> Boxed<'_, Box<dyn RedirectWait>> {
        Box::pin(async { Ok(Box::new(Wait) as Box<dyn RedirectWait>) })
    }
}

struct Wait;

impl RedirectWait for Wait {
    fn redirect_uri(&self) -> &str {
        REDIRECT_URI
    }

    fn wait(self: Box<Self>, authorization_url: Url) -> Boxed<'static, Url> {
        Box::pin(async move {
            let fail = |e: String| AuthError::Redirect(format!("{authorization_url}: {e}"));
            let uri: http::Uri = authorization_url
                .as_str()
                .parse()
                .map_err(|e: http::uri::InvalidUri| fail(e.to_string()))?;
            let client = Client::builder(TokioExecutor::new())
                .build::<_, Empty<Bytes>>(HttpConnector::new());
            let response = client.get(uri).await.map_err(|e| fail(e.to_string()))?;
            if !response.status().is_redirection() {
                return Err(fail(format!(
                    "answered {} instead of a redirect",
                    response.status()
                )));
            }
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| fail("a redirect without Location".into()))?;
            authorization_url
                .join(location)
                .map_err(|e| fail(format!("Location {location:?}: {e}")))
        })
    }
}
