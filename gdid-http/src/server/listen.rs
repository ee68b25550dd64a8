//! The accept loop: HTTP/1.1 and HTTP/2 (hyper's auto builder) on plain TCP or TLS, a bound on
//! connections at once, time limits for slow clients, and a graceful stop.
//!
//! `axum::serve` has no TLS and no header timeout, so the loop is hyper-util's, as axum's own
//! low-level examples write it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing::{debug, info, warn};

use super::Server;

/// How many connections a server keeps at once, and how long a client may take to be heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; the next waits in the kernel's backlog (default 1,024).
    pub max_connections: usize,
    /// Time for a client to send a request's headers, and for a TLS handshake (default 10 s).
    pub header_timeout: Duration,
    /// HTTP/2 streams at once on one connection (default 256).
    pub max_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            max_streams: 256,
        }
    }
}

pub(crate) async fn serve(
    server: &Server,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let shared = server.shared();
    let limits = shared.connections;
    let router = server.router();
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_streams)
        .keep_alive_interval(Some(limits.header_timeout))
        .keep_alive_timeout(limits.header_timeout);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    info!(
        address = %listener.local_addr()?,
        authority = shared.authority.number(),
        tls = tls.is_some(),
        "serving"
    );
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => tokio::select! {
                    () = &mut shutdown => break,
                    accepted = listener.accept() => accepted.map(|(stream, peer)| (stream, peer, slot)),
                },
                Err(_) => break,
            },
        };
        let (stream, peer, slot) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, say: wait rather than spin.
                warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let served = match tls {
                None => {
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(connection.into_owned()).await
                }
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await;
                    let stream = match handshake {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(error)) => {
                            debug!(%peer, %error, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    };
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(connection.into_owned()).await
                }
            };
            if let Err(error) = served {
                debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    info!("shutting down: finishing the requests in flight");
    if tokio::time::timeout(shared.request_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        warn!(
            "requests still in flight after {:?}: dropped",
            shared.request_timeout
        );
    }
    Ok(())
}
