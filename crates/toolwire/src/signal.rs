//! The shutdown signal servers usually wait for: SIGINT (Ctrl-C) or SIGTERM.

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM: pass it to
/// [`serve_http`](crate::serve_http), or select on it beside
/// [`serve_stdio`](crate::serve_stdio) and call
/// [`Server::shutdown`](crate::Server::shutdown).
///
/// A signal that cannot be listened for never resolves.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
