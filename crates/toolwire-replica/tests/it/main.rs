//! The two backends against the real servers: the wire format, ordering per
//! publisher, reconnection, resync, and the shared tools.

mod servers;
mod suite;

use servers::{BusServer, Engine};
use std::sync::Arc;
use toolwire_replica::Backend;

/// A backend on `bus`; each call is a separate connection, as a separate
/// replica would have.
pub(crate) async fn backend(bus: &BusServer) -> Arc<dyn Backend> {
    let url = bus.url();
    match bus.engine() {
        Engine::Redis => Arc::new(
            toolwire_redis::RedisBackend::connect(&url, "test")
                .await
                .expect("connects to Redis"),
        ),
        Engine::Nats => Arc::new(
            toolwire_nats::NatsBackend::connect(&url, "test")
                .await
                .expect("connects to NATS"),
        ),
    }
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::suite::$name(crate::Engine::Redis).await;
                }
            )*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_full_queue_drops_to_a_resync() {
                crate::suite::a_full_queue_drops_to_a_resync(crate::Engine::Redis).await;
            }
        }
        mod nats {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::suite::$name(crate::Engine::Nats).await;
                }
            )*
        }
    };
}

both!(
    envelopes_carry_the_publisher_and_arrive_in_order,
    a_replica_hears_its_own_events_once,
    an_unreachable_bus_is_a_start_up_error,
    after_an_outage_listeners_resync_and_publishing_resumes,
    shared_tools_are_applied_before_their_list_changed,
);
