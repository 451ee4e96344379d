//! End-to-end tests of the `toolwire` binary.

mod auth;
mod bounds;
mod client;
mod deadlines;
mod demo_inputs;
mod duplicates;
mod era;
mod features;
mod first_run;
mod gateway;
mod gateway_auth;
mod gateway_held;
mod gateway_lists;
mod gateway_relay;
mod gateway_start;
mod gateway_storm;
mod gateway_tasks;
mod guard;
mod layers;
mod linked;
mod listen;
mod mrtr;
#[cfg(feature = "otel")]
mod otel;
mod scale;
mod scale_tasks;
mod stdio;
mod support;
mod tls;
mod ux;
