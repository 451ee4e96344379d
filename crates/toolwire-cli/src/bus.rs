//! `serve --bus URL`: the notification bus and shared tool registry that
//! replicas behind a load balancer share (Redis or NATS, issue 18).

#[cfg(any(feature = "redis", feature = "nats"))]
use anyhow::Context as _;
use toolwire_replica::Relay;

/// Connects to the bus at `url` (`redis://…` or `nats://…`); an unreachable
/// bus is an error naming it (without any password in the URL).
pub(crate) async fn connect(url: &str) -> anyhow::Result<Relay> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    #[cfg_attr(
        not(any(feature = "redis", feature = "nats")),
        allow(unused_variables, reason = "no engine to connect to")
    )]
    let context = || format!("connecting to the bus at {}", redacted(url));
    match scheme {
        #[cfg(feature = "redis")]
        "redis" | "rediss" => toolwire_redis::connect(url).await.with_context(context),
        #[cfg(feature = "nats")]
        "nats" => toolwire_nats::connect(url).await.with_context(context),
        #[cfg(not(all(feature = "redis", feature = "nats")))]
        #[allow(unreachable_patterns, reason = "the engine built in matched above")]
        "redis" | "rediss" | "nats" => anyhow::bail!(
            "--bus {}: this toolwire was built without the `{scheme}` feature",
            redacted(url)
        ),
        _ => anyhow::bail!(
            "--bus expects redis://HOST:PORT or nats://HOST:PORT; got {:?}",
            redacted(url)
        ),
    }
}

/// The task store at `url` (`redis://…` or `nats://…`); an unreachable one
/// is an error naming it (without any password in the URL).
pub(crate) async fn connect_tasks(
    url: &str,
) -> anyhow::Result<std::sync::Arc<dyn toolwire::task::TaskStore>> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    #[cfg_attr(
        not(any(feature = "redis", feature = "nats")),
        allow(unused_variables, reason = "no engine to connect to")
    )]
    let context = || format!("connecting to the task store at {}", redacted(url));
    match scheme {
        #[cfg(feature = "redis")]
        "redis" | "rediss" => {
            let store = toolwire_redis::RedisTaskStore::connect(url, "toolwire")
                .await
                .with_context(context)?;
            Ok(std::sync::Arc::new(store))
        }
        #[cfg(feature = "nats")]
        "nats" => {
            let store = toolwire_nats::NatsTaskStore::connect(url, "toolwire")
                .await
                .with_context(context)?;
            Ok(std::sync::Arc::new(store))
        }
        #[cfg(not(all(feature = "redis", feature = "nats")))]
        #[allow(unreachable_patterns, reason = "the engine built in matched above")]
        "redis" | "rediss" | "nats" => anyhow::bail!(
            "--tasks {}: this toolwire was built without the `{scheme}` feature",
            redacted(url)
        ),
        _ => anyhow::bail!(
            "--tasks expects redis://HOST:PORT or nats://HOST:PORT; got {:?}",
            redacted(url)
        ),
    }
}

/// `url` with any user and password replaced by `***`.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(redacted("redis://:s3cret@h:6379/0"), "redis://***@h:6379/0");
        assert_eq!(redacted("nats://u:p@h:4222"), "nats://***@h:4222");
        assert_eq!(redacted("nats://h:4222"), "nats://h:4222");
        assert_eq!(redacted("h:4222"), "h:4222");
    }

    #[tokio::test]
    async fn unknown_schemes_are_refused_clearly() {
        let err = super::connect("amqp://u:pw@h:5672")
            .await
            .expect_err("refused");
        let text = format!("{err:#}");
        assert!(
            text.contains("redis://HOST:PORT or nats://HOST:PORT"),
            "{text}"
        );
        assert!(!text.contains("pw"), "{text}");
    }
}
