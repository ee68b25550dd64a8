//! The accept loop: HTTP/1.1 and HTTP/2 (hyper's auto builder) on plain TCP or TLS, a bound on
//! connections at once, time limits for slow and idle clients, and a graceful stop.
//!
//! `axum::serve` has no TLS, no header timeout and no idle timeout, so the loop is hyper-util's,
//! as axum's own low-level examples write it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::Server;

/// How many connections a server keeps at once, and how long a client may take to be heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; the next waits in the kernel's backlog (default 1,024).
    pub max_connections: usize,
    /// Time for a client to send a request's headers, and for a TLS handshake (default 10 s).
    pub header_timeout: Duration,
    /// A connection with no request in flight for this long is closed, HTTP/2 included (default
    /// 30 s): an idle client does not keep its place for good.
    pub idle_timeout: Duration,
    /// HTTP/2 streams at once on one connection (default 256).
    pub max_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_streams: 256,
        }
    }
}

/// What a connection's requests are doing: how many are in flight, and when the last ended.
struct Activity {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
}

impl Activity {
    fn new() -> Self {
        Activity {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        }
    }

    /// Whether the connection has had no request in flight for `limit`.
    fn idle_for(&self, limit: Duration) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
            && self
                .last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed()
                >= limit
    }
}

/// A request in flight on a connection; its end is the connection's latest activity.
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: &Arc<Activity>) -> Busy {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(activity.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The routes as a hyper service that keeps its connection's [`Activity`].
#[derive(Clone)]
struct Tracked {
    routes: TowerToHyperService<Router>,
    activity: Arc<Activity>,
}

impl Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<axum::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let busy = Busy::begin(&self.activity);
        let routed = self.routes.call(request);
        Box::pin(async move {
            let response = routed.await;
            drop(busy);
            response
        })
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
        // Small windows: an unauthenticated peer makes the server buffer little.
        .initial_stream_window_size(64 * 1024)
        .initial_connection_window_size(256 * 1024)
        .max_header_list_size(16 * 1024)
        .keep_alive_interval(Some(limits.header_timeout))
        .keep_alive_timeout(limits.header_timeout);
    let max_connections = u32::try_from(limits.max_connections.clamp(1, 1 << 20)).unwrap_or(1);
    let slots = Arc::new(Semaphore::new(max_connections as usize));
    let (stop, stopping) = watch::channel(false);
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
        let service = Tracked {
            routes: TowerToHyperService::new(router.clone()),
            activity: Arc::new(Activity::new()),
        };
        let (builder, tls, stopping) = (builder.clone(), tls.clone(), stopping.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let served = match tls {
                None => connection(&builder, stream, service, stopping, limits).await,
                Some(acceptor) => {
                    match tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await
                    {
                        Ok(Ok(stream)) => {
                            connection(&builder, stream, service, stopping, limits).await
                        }
                        Ok(Err(error)) => {
                            debug!(%peer, %error, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    }
                }
            };
            if let Err(error) = served {
                debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    info!("shutting down: finishing the requests in flight");
    let _ = stop.send(true);
    // Every connection gives its slot back when it ends.
    let all = slots.acquire_many(max_connections);
    if tokio::time::timeout(shared.request_timeout, all)
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

/// Serves one connection until it ends; on `stopping`, or after `idle_timeout` with no request
/// in flight, it is shut down gracefully (the requests in flight finish, HTTP/2 sends GOAWAY).
async fn connection<I>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: Tracked,
    mut stopping: watch::Receiver<bool>,
    limits: Limits,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = service.activity.clone();
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let mut tick = tokio::time::interval((limits.idle_timeout / 4).max(Duration::from_millis(10)));
    loop {
        tokio::select! {
            served = connection.as_mut() => return served,
            _ = stopping.wait_for(|stop| *stop) => break,
            _ = tick.tick() => {
                if activity.idle_for(limits.idle_timeout) {
                    break;
                }
            }
        }
    }
    connection.as_mut().graceful_shutdown();
    connection.await
}
