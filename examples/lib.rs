//! Compiles every Rust snippet of the repository's README, of every
//! chapter of the book (`docs/src`) and of the crates' own READMEs (what
//! crates.io shows) as doctests, against this crate's
//! dependencies: the ones a user's own `Cargo.toml` has (`toolwire` with
//! `client` and `oauth`, `tokio`, `serde`, `schemars`, `serde_json`,
//! `axum`). A snippet
//! that stops compiling fails `cargo test`; the `docs` test of
//! `tests/run` fails when a chapter is missing from the list below.
//!
//! The runnable examples are this crate's binaries, next to this file.

/// One doctest holder per Markdown file: `Name = "path from this file"`.
macro_rules! markdown_doctests {
    ($($name:ident = $path:literal,)*) => {
        $(
            #[cfg(doctest)]
            #[doc = include_str!($path)]
            pub struct $name;
        )*
    };
}

markdown_doctests! {
    Readme = "../README.md",
    ToolwireReadme = "../crates/toolwire/README.md",
    ToolwireProtoReadme = "../crates/toolwire-proto/README.md",
    ToolwireMacrosReadme = "../crates/toolwire-macros/README.md",
    ToolwireCliReadme = "../crates/toolwire-cli/README.md",
    ToolwireGatewayReadme = "../crates/toolwire-gateway/README.md",
    ToolwireReplicaReadme = "../crates/toolwire-replica/README.md",
    ToolwireRedisReadme = "../crates/toolwire-redis/README.md",
    ToolwireNatsReadme = "../crates/toolwire-nats/README.md",
    Introduction = "../docs/src/introduction.md",
    GettingStarted = "../docs/src/getting-started.md",
    ServersTools = "../docs/src/servers/tools.md",
    ServersTypedOutput = "../docs/src/servers/typed-output.md",
    ServersToolMacro = "../docs/src/servers/tool-macro.md",
    ServersPromptsResources = "../docs/src/servers/prompts-resources.md",
    ServersMrtr = "../docs/src/servers/mrtr.md",
    ServersTasks = "../docs/src/servers/tasks.md",
    ServersApps = "../docs/src/servers/apps.md",
    ServersMiddleware = "../docs/src/servers/middleware.md",
    ServersTesting = "../docs/src/servers/testing.md",
    ServersStateKeys = "../docs/src/servers/state-keys.md",
    ServersSubscriptions = "../docs/src/servers/subscriptions.md",
    ServingStdio = "../docs/src/serving/stdio.md",
    ServingHttp = "../docs/src/serving/http.md",
    ServingAxum = "../docs/src/serving/axum.md",
    ServingTls = "../docs/src/serving/tls.md",
    ServingAuth = "../docs/src/serving/auth.md",
    ServingSecurity = "../docs/src/serving/security.md",
    ServingRateLimits = "../docs/src/serving/rate-limits.md",
    ServingReplicas = "../docs/src/serving/replicas.md",
    ServingLegacy = "../docs/src/serving/legacy.md",
    ClientClient = "../docs/src/client/client.md",
    ClientOauth = "../docs/src/client/oauth.md",
    ClientCli = "../docs/src/client/cli.md",
    Gateway = "../docs/src/gateway.md",
    OperationsTracing = "../docs/src/operations/tracing.md",
    OperationsAudit = "../docs/src/operations/audit.md",
    OperationsDeployment = "../docs/src/operations/deployment.md",
    ProjectConformance = "../docs/src/project/conformance.md",
    ProjectInterop = "../docs/src/project/interop.md",
    ProjectPerformance = "../docs/src/project/performance.md",
    ProjectFuzzing = "../docs/src/project/fuzzing.md",
    ProjectDesign = "../docs/src/project/design.md",
}
