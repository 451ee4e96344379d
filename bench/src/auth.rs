//! The bearer-token setup of `bench-toolwire --auth`: an Ed25519 key made
//! at start-up, its key set served on a loopback port of its own (the
//! "authorization server" the resource server fetches keys from, once),
//! and one RFC 9068 access token signed with it for the load generator.
//!
//! Nothing leaves loopback: the issuer, the key set and the resource are
//! all `http://127.0.0.1:PORT`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::net::TcpListener;
use toolwire::{AuthConfig, JwtVerifier};

/// The scope every request needs, and the token holds.
pub const SCOPE: &str = "mcp:tools";

const KID: &str = "bench-key";

/// A signing key and the loopback server that publishes its public half.
pub struct Issuer {
    /// The issuer URL (`http://127.0.0.1:PORT`), which also serves the key
    /// set at `/jwks`.
    pub url: String,
    key: EncodingKey,
}

impl Issuer {
    /// Makes a key and starts serving its key set on loopback.
    pub async fn start() -> io::Result<Issuer> {
        let rng = SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|_| io::Error::other("keygen"))?;
        let pair =
            Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).map_err(|_| io::Error::other("key pair"))?;
        let jwks = serde_json::json!({"keys": [{
            "kty": "OKP",
            "crv": "Ed25519",
            "x": URL_SAFE_NO_PAD.encode(pair.public_key().as_ref()),
            "kid": KID,
            "alg": "EdDSA",
            "use": "sig",
        }]})
        .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr: SocketAddr = listener.local_addr()?;
        let body = Bytes::from(jwks);
        let svc = hyper::service::service_fn(move |_: Request<hyper::body::Incoming>| {
            let body = body.clone();
            async move {
                Ok::<_, Infallible>(
                    Response::builder()
                        .header("content-type", "application/json")
                        .body(Full::new(body))
                        .expect("static response"),
                )
            }
        });
        tokio::spawn(crate::serve_http1(listener, svc));
        Ok(Issuer {
            url: format!("http://{addr}"),
            key: EncodingKey::from_ed_der(pkcs8.as_ref()),
        })
    }

    /// The resource server for `resource` (`http://127.0.0.1:PORT/mcp`):
    /// JWTs of this issuer, keys from its `/jwks`, scope [`SCOPE`] needed.
    pub fn auth_config(&self, resource: &str) -> AuthConfig {
        let verifier = JwtVerifier::new(self.url.as_str(), resource)
            .and_then(|v| v.with_jwks_uri(&format!("{}/jwks", self.url)))
            .expect("loopback issuer");
        AuthConfig::new(resource, verifier)
            .expect("canonical resource URI")
            .with_authorization_server(self.url.as_str())
            .with_scopes_supported([SCOPE])
            .with_required_scopes([SCOPE])
    }

    /// An access token for `resource`, valid for a day.
    pub fn token(&self, resource: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_secs();
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some("at+jwt".to_owned());
        header.kid = Some(KID.to_owned());
        let claims = serde_json::json!({
            "iss": self.url,
            "sub": "bench-user",
            "aud": resource,
            "client_id": "loadgen",
            "scope": SCOPE,
            "iat": now,
            "exp": now + 24 * 60 * 60,
        });
        jsonwebtoken::encode(&header, &claims, &self.key).expect("signing")
    }
}
