//! The accept loop: HTTP/1.1 and HTTP/2 (hyper's auto builder) on plain TCP or TLS, a bound on
//! connections at once and per client address, time limits for slow, silent, idle and
//! never-reading clients, and a graceful stop.
//!
//! A place is taken at accept and given back when the connection is gone, so every way a
//! client can hold one has a deadline, none of which needs a token: the first request's head
//! within `header_timeout` of the accept (the TLS handshake and hyper's protocol sniffing
//! included, which have no timeout of their own); a reply sent within `write_timeout` (a request
//! is in flight until the last byte of its reply is written, so a client that never reads is
//! seen); `idle_timeout` with nothing in flight; and a graceful close that gets the longer of
//! `header_timeout` and the request timeout before the connection is dropped.
//!
//! Only a token keeps a place beyond that: a connection that has not shown a token the server
//! accepts is closed once its requests are answered (HTTP/1 replies say `Connection: close`),
//! and dropped at `header_timeout` from its accept in any case. So hosts that send requests
//! needing no token (`GET /v1/health`) or bad tokens hold places for a moment each, not through
//! keep-alive. A connection whose token was accepted is closed gracefully, once its requests are
//! answered, when a later request of it is refused (401: its token revoked by a reload, or
//! mistyped) or its token holds [`Limits::max_per_token`] other connections already (429): a
//! token's holder, from however many hosts, holds a bounded share of the places.
//!
//! When every place is taken, a new client is accepted all the same if a connection that has shown
//! no accepted token is open: the oldest of those, once it is [`YOUNG`] old, is dropped for it.
//! So silent sockets, or connections slow to show a token, cannot keep a token holder out for a
//! header deadline each, and a burst of new connections cannot drop a token holder's before it
//! shows its token; a connection whose token was accepted is never dropped this way.
//!
//! A client host is an IPv4 address, or an IPv6 /64 (what one host is commonly given): the
//! per-address bound and the slowing of bad tokens ([`super::failures`]) count by host.
//!
//! `axum::serve` has no TLS, no header timeout and no idle timeout, so the loop is hyper-util's,
//! as axum's own low-level examples write it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::Server;
use super::memory::ConnectionMemory;
use super::tokens::Digest;

/// How many connections a server keeps at once, and how long a client may take to be heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; the next waits in the kernel's backlog (default 1,024).
    pub max_connections: usize,
    /// Time for a client to send a request's headers, and for a TLS handshake (default 10 s);
    /// also the longest a connection is kept without a token the server accepts.
    pub header_timeout: Duration,
    /// A connection with no request in flight for this long is closed, HTTP/2 included (default
    /// 30 s): an idle client does not keep its place for good.
    pub idle_timeout: Duration,
    /// HTTP/2 streams at once on one connection (default 64; each unread one costs the server
    /// about 1.5 KB).
    pub max_streams: u32,
    /// Connections at once from one client host, an IPv4 address or an IPv6 /64 (default 64; 0:
    /// no limit, for load tests from one address): one host cannot take every place.
    pub max_per_address: usize,
    /// Connections at once whose last request showed one token (default 256, a quarter of the
    /// default `max_connections`; 0: no limit): the holder of a token, from however many hosts,
    /// cannot take every place. A request beyond is answered 429 `too_many_connections`, and
    /// its connection closed after the reply.
    pub max_per_token: usize,
    /// A connection with requests in flight, none of which began or ended for this long (a
    /// client that does not read its replies), is closed (default 20 s; above the server's
    /// request timeout).
    pub write_timeout: Duration,
    /// Bytes of `POST /v1/ids` replies held at once, from their ids' issue to their last byte
    /// written, on all connections together (default 32 MiB; at least the largest reply): a
    /// request whose reply would go beyond is answered 503 `busy` at once, before any id is
    /// issued.
    pub reply_memory: usize,
    /// The same on one connection (default 4 MiB; at least the largest reply): one connection
    /// cannot take the whole.
    pub reply_memory_per_connection: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_streams: 64,
            max_per_address: 64,
            max_per_token: 256,
            write_timeout: Duration::from_secs(20),
            reply_memory: 32 << 20,
            reply_memory_per_connection: 4 << 20,
        }
    }
}

/// The largest HTTP/1 read and write buffer of a connection (the 16 KiB request head allowed
/// and room to spare).
const HTTP1_BUFFER: usize = 32 * 1024;

/// The client host of `address`: the address itself for IPv4 (an IPv4 address mapped into IPv6
/// included), its /64 for IPv6.
pub(crate) fn host(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

/// How long a new connection without an accepted token keeps its place whatever comes (at most
/// half the header deadline): time to show its token.
const YOUNG: Duration = Duration::from_millis(250);

/// No request of the connection has shown a token the server accepts.
const NEVER: u8 = 0;
/// Its last token shown was accepted.
const ACCEPTED: u8 = 1;
/// A token was accepted on it, but its last request was refused (its token revoked, mistyped, or
/// holding its most connections): it is closed gracefully once its requests are answered.
const REFUSED: u8 = 2;

/// What a connection's requests are doing: how many are in flight (from the head read to the
/// last byte of the reply written), whether any began, when one last began or ended, whether
/// their tokens were accepted, whether it is to give its place up, and a signal when the last in
/// flight of a connection without an accepted token ends or its place is taken.
struct Activity {
    born: Instant,
    in_flight: AtomicUsize,
    begun: AtomicUsize,
    last: Mutex<Instant>,
    token: AtomicU8,
    evicted: AtomicBool,
    answered: Notify,
    /// The token its last accepted request showed, counted against that token's connections.
    holder: Mutex<Option<Slot<Digest>>>,
}

/// Why a connection is to be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Keep it.
    Serve,
    /// Nothing in flight for the idle timeout: close it gracefully.
    Idle,
    /// No request head within the header timeout of the accept, or replies not taken within
    /// the write timeout: drop it.
    Stalled,
}

impl Activity {
    fn new() -> Self {
        Activity {
            in_flight: AtomicUsize::new(0),
            begun: AtomicUsize::new(0),
            born: Instant::now(),
            last: Mutex::new(Instant::now()),
            token: AtomicU8::new(NEVER),
            evicted: AtomicBool::new(false),
            answered: Notify::new(),
            holder: Mutex::new(None),
        }
    }

    /// What to do with the connection, accepted at `accepted`, under `limits`.
    fn verdict(&self, accepted: Instant, limits: &Limits) -> Verdict {
        if self.evicted.load(Ordering::Acquire) {
            return Verdict::Stalled;
        }
        let token = self.token.load(Ordering::Acquire);
        let begun = self.begun.load(Ordering::Acquire) > 0;
        let in_flight = self.in_flight.load(Ordering::Acquire);
        if token == NEVER {
            // Its requests' answers or the header deadline, whichever comes first.
            return if accepted.elapsed() >= limits.header_timeout {
                Verdict::Stalled
            } else if begun && in_flight == 0 {
                Verdict::Idle
            } else {
                Verdict::Serve
            };
        }
        let quiet = self
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed();
        match in_flight {
            // Refused: its replies are written, then it closes.
            0 if token == REFUSED => Verdict::Idle,
            0 if quiet >= limits.idle_timeout => Verdict::Idle,
            0 => Verdict::Serve,
            _ if quiet >= limits.write_timeout => Verdict::Stalled,
            _ => Verdict::Serve,
        }
    }

    /// Whether the last token shown on the connection was accepted.
    fn accepted(&self) -> bool {
        self.token.load(Ordering::Acquire) == ACCEPTED
    }

    /// Whether no token shown on the connection was ever accepted.
    fn unproven(&self) -> bool {
        self.token.load(Ordering::Acquire) == NEVER
    }

    /// Whether the connection may be dropped for a new client: it never showed an accepted
    /// token, and is not dropped already.
    fn evictable(&self) -> bool {
        self.unproven() && !self.evicted.load(Ordering::Acquire)
    }

    /// The connection is to give its place up: dropped at once.
    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.answered.notify_one();
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }
}

/// A request in flight on a connection, until its reply is written (or the connection is
/// gone); its beginning and end are the connection's activity.
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: &Arc<Activity>) -> Busy {
        activity.touch();
        activity.begun.fetch_add(1, Ordering::AcqRel);
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(activity.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        let before = self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
        if before == 1 && !self.0.accepted() {
            // Nothing keeps the connection open: close it now, not at the next tick.
            self.0.answered.notify_one();
        }
    }
}

/// The client of a request served by [`serve`]: its host, and its connection, which its token
/// keeps open or not (a request extension; absent when the router is served otherwise).
#[derive(Clone)]
pub(crate) struct Peer {
    host: IpAddr,
    activity: Arc<Activity>,
    per_token: Arc<Holders<Digest>>,
    max_per_token: usize,
}

impl Peer {
    /// The client's host ([`host`]).
    pub(crate) fn host(&self) -> IpAddr {
        self.host
    }

    /// Whether the last token shown on this connection was accepted.
    pub(crate) fn accepted(&self) -> bool {
        self.activity.accepted()
    }

    /// The request showed a token the server accepts, `digest`: the connection keeps its place
    /// until a request of it is refused, and counts against the token's connections. `false`
    /// when the token holds [`Limits::max_per_token`] other connections already: the connection
    /// is then refused as by [`refused`](Self::refused).
    pub(crate) fn accepted_token(&self, digest: &Digest) -> bool {
        let mut holder = self
            .activity
            .holder
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if holder.as_ref().is_none_or(|slot| slot.key() != digest) {
            // Its previous token's place is given back before the new one is counted.
            *holder = None;
            *holder = self.per_token.take(*digest, self.max_per_token);
        }
        if holder.is_some() {
            self.activity.token.store(ACCEPTED, Ordering::Release);
            true
        } else {
            drop(holder);
            self.refused();
            false
        }
    }

    /// The request showed no token, or one the server refuses: the connection is closed once
    /// its requests are answered, and its host's refusals count again ([`super::failures`]).
    /// So a token revoked by a reload holds no connection past its next request.
    pub(crate) fn refused(&self) {
        // One that never showed an accepted token stays as it is: closed at its deadline.
        let _ = self.activity.token.compare_exchange(
            ACCEPTED,
            REFUSED,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        *self
            .activity
            .holder
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The connections open of each key (a client [`host`], a token's digest), each counted until
/// its [`Slot`] is dropped.
struct Holders<K>(Mutex<HashMap<K, usize>>);

impl<K> Default for Holders<K> {
    fn default() -> Self {
        Holders(Mutex::new(HashMap::new()))
    }
}

/// One connection of a key.
struct Slot<K: Eq + std::hash::Hash>(Arc<Holders<K>>, K);

impl<K: Eq + std::hash::Hash + Copy> Holders<K> {
    /// A place for a connection of `key`, or `None` when it holds `max` already (0: no limit).
    fn take(self: &Arc<Self>, key: K, max: usize) -> Option<Slot<K>> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(key).or_insert(0);
        if max > 0 && *count >= max {
            return None;
        }
        *count += 1;
        Some(Slot(self.clone(), key))
    }
}

impl<K: Eq + std::hash::Hash> Slot<K> {
    fn key(&self) -> &K {
        &self.1
    }
}

impl<K: Eq + std::hash::Hash> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut open = self.0.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.1) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.1);
            }
        }
    }
}

/// The connections open that have shown no accepted token, oldest first (those that since have,
/// or are gone, are passed over and forgotten): the ones dropped when a new client needs a place.
#[derive(Default)]
struct Unproven(Mutex<VecDeque<Weak<Activity>>>);

impl Unproven {
    /// A new connection, `activity`, with at most `max` connections open.
    fn push(&self, activity: &Arc<Activity>, max: usize) {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.len() >= max.saturating_mul(2).max(16) {
            queue.retain(|weak| weak.upgrade().is_some_and(|a| a.evictable()));
        }
        queue.push_back(Arc::downgrade(activity));
    }

    /// Whether one is open.
    fn any(&self) -> bool {
        let queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        queue
            .iter()
            .any(|weak| weak.upgrade().is_some_and(|a| a.evictable()))
    }

    /// Drops the oldest, if it is `young` old at least: whether there was one.
    fn evict_oldest(&self, young: Duration) -> bool {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(weak) = queue.front() {
            match weak.upgrade().filter(|a| a.evictable()) {
                // The oldest is too young: so is every other.
                Some(activity) if activity.born.elapsed() < young => return false,
                Some(activity) => {
                    activity.evict();
                    queue.pop_front();
                    return true;
                }
                None => {
                    queue.pop_front();
                }
            }
        }
        false
    }
}

/// The next client, with its place and its host's. While every place is taken, a client is
/// accepted all the same when a connection without an accepted token is open, the oldest of
/// those giving its place up once it is `young` old (or the client taking the first place
/// freed); else it waits in the kernel's backlog. A client whose host holds its
/// `max_per_address` already is closed at once (no place given up for it).
async fn next_client(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    per_address: &Arc<Holders<IpAddr>>,
    unproven: &Unproven,
    max_per_address: usize,
    young: Duration,
) -> std::io::Result<(
    TcpStream,
    std::net::SocketAddr,
    OwnedSemaphorePermit,
    Slot<IpAddr>,
)> {
    let closed = |_| std::io::Error::other("the connection places are closed");
    loop {
        let free = slots.clone().try_acquire_owned().ok();
        let (slot, (stream, peer)) = match free {
            Some(slot) => (Some(slot), listener.accept().await?),
            None if unproven.any() => tokio::select! {
                slot = slots.clone().acquire_owned() => {
                    (Some(slot.map_err(closed)?), listener.accept().await?)
                }
                accepted = listener.accept() => (None, accepted?),
            },
            None => {
                let slot = slots.clone().acquire_owned().await.map_err(closed)?;
                (Some(slot), listener.accept().await?)
            }
        };
        let Some(address_slot) = per_address.take(host(peer.ip()), max_per_address) else {
            debug!(%peer, "too many connections from this address: closed");
            continue;
        };
        let slot = match slot {
            Some(slot) => slot,
            None => loop {
                if unproven.evict_oldest(young) {
                    debug!(%peer, "every place taken: the oldest without a token gives it up");
                    break slots.clone().acquire_owned().await.map_err(closed)?;
                }
                tokio::select! {
                    slot = slots.clone().acquire_owned() => break slot.map_err(closed)?,
                    () = tokio::time::sleep((young / 4).max(Duration::from_millis(10))) => {}
                }
            },
        };
        return Ok((stream, peer, slot, address_slot));
    }
}

/// The routes as a hyper service that keeps its connection's [`Activity`].
#[derive(Clone)]
struct Tracked {
    routes: TowerToHyperService<Router>,
    peer: Peer,
    memory: ConnectionMemory,
}

impl Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<axum::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        let busy = Busy::begin(&self.peer.activity);
        let http1 = request.version() <= hyper::Version::HTTP_11;
        request.extensions_mut().insert(self.memory.clone());
        request.extensions_mut().insert(self.peer.clone());
        let routed = self.routes.call(request);
        let activity = self.peer.activity.clone();
        Box::pin(async move {
            let mut response = routed.await?;
            if http1 && !activity.accepted() {
                // No keep-alive without a token accepted: the client knows not to send another.
                response.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            // In flight until its body is written to the end (or dropped with the connection).
            Ok(response.map(|body| {
                axum::body::Body::new(body.map_frame(move |frame| {
                    let _ = &busy;
                    frame
                }))
            }))
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
        .header_read_timeout(limits.header_timeout)
        // A request head is at most HTTP/2's 16 KiB here too; hyper's default buffer is ~400 KB
        // a connection.
        .max_buf_size(HTTP1_BUFFER);
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
    // A graceful close lets the requests in flight finish: as long as a request may take.
    let grace = limits.header_timeout.max(shared.request_timeout);
    let per_address = Arc::new(Holders::default());
    let per_token = Arc::new(Holders::default());
    let unproven = Unproven::default();
    let (stop, stopping) = watch::channel(false);
    info!(
        address = %listener.local_addr()?,
        authority = shared.authority.number(),
        tls = tls.is_some(),
        "serving"
    );
    tokio::pin!(shutdown);
    loop {
        let next = next_client(
            &listener,
            &slots,
            &per_address,
            &unproven,
            limits.max_per_address,
            YOUNG.min(limits.header_timeout / 2),
        );
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = next => accepted,
        };
        let (stream, peer, slot, address_slot) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, say: wait rather than spin.
                warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        unproven.push(&activity, limits.max_connections);
        let service = Tracked {
            routes: TowerToHyperService::new(router.clone()),
            peer: Peer {
                host: host(peer.ip()),
                activity: activity.clone(),
                per_token: per_token.clone(),
                max_per_token: limits.max_per_token,
            },
            memory: shared.reply_memory.connection(),
        };
        let (builder, tls, stopping) = (builder.clone(), tls.clone(), stopping.clone());
        tokio::spawn(async move {
            let _slot = (slot, address_slot);
            let accepted = Instant::now();
            let served = match tls {
                None => {
                    connection(&builder, stream, service, stopping, limits, accepted, grace).await
                }
                Some(acceptor) => {
                    let handshake = tokio::time::timeout(limits.header_timeout, async {
                        tokio::select! {
                            shaken = acceptor.accept(stream) => shaken,
                            () = evicted(&activity) => Err(std::io::Error::other(
                                "its place was given to a new client",
                            )),
                        }
                    });
                    match handshake.await {
                        Ok(Ok(stream)) => {
                            connection(&builder, stream, service, stopping, limits, accepted, grace)
                                .await
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

/// When `activity`'s connection is to give its place up.
async fn evicted(activity: &Activity) {
    while !activity.evicted.load(Ordering::Acquire) {
        activity.answered.notified().await;
    }
}

/// Serves one connection, `accepted` at that instant, until it ends. On `stopping`, after
/// `idle_timeout` with no request in flight, or once its requests are answered when it never
/// showed an accepted token, it is shut down gracefully (the requests in flight finish, HTTP/2
/// sends GOAWAY) and dropped if that takes more than `grace`; with no request head within
/// `header_timeout` of the accept (or no token accepted by then), replies not taken for
/// `write_timeout`, or its place given to a new client, it is dropped at once.
async fn connection<I>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: Tracked,
    mut stopping: watch::Receiver<bool>,
    limits: Limits,
    accepted: Instant,
    grace: Duration,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = service.peer.activity.clone();
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let shortest = limits
        .idle_timeout
        .min(limits.header_timeout)
        .min(limits.write_timeout);
    let mut tick = tokio::time::interval((shortest / 4).max(Duration::from_millis(10)));
    loop {
        tokio::select! {
            served = connection.as_mut() => return served,
            _ = stopping.wait_for(|stop| *stop) => break,
            () = activity.answered.notified() => match activity.verdict(accepted, &limits) {
                Verdict::Serve => {}
                Verdict::Idle => break,
                Verdict::Stalled => {
                    debug!("no token, and its place given to a new client: dropped");
                    return Ok(());
                }
            },
            _ = tick.tick() => match activity.verdict(accepted, &limits) {
                Verdict::Serve => {}
                Verdict::Idle => break,
                Verdict::Stalled => {
                    debug!("no request head, no token in time, or replies not taken: dropped");
                    return Ok(());
                }
            },
        }
    }
    connection.as_mut().graceful_shutdown();
    tokio::select! {
        closed = tokio::time::timeout(grace, connection) => match closed {
            Ok(served) => served,
            Err(_) => {
                debug!("not closed within the grace period: connection dropped");
                Ok(())
            }
        },
        // Closing, it still holds a place: a new client may need it now.
        () = evicted(&activity) => {
            debug!("closing without a token, its place given to a new client: dropped");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_connection_without_a_token_gives_its_place_up_once_not_young() {
        let unproven = Unproven::default();
        let (oldest, proven, newest) = (
            Arc::new(Activity::new()),
            Arc::new(Activity::new()),
            Arc::new(Activity::new()),
        );
        for activity in [&oldest, &proven, &newest] {
            unproven.push(activity, 16);
        }
        let young = Duration::from_millis(50);
        // Too young, every one.
        assert!(!unproven.evict_oldest(young));
        std::thread::sleep(young);
        proven.token.store(ACCEPTED, Ordering::Release);
        assert!(unproven.evict_oldest(young));
        assert!(oldest.evicted.load(Ordering::Acquire));
        // A connection that showed a token is passed over.
        assert!(unproven.evict_oldest(young));
        assert!(newest.evicted.load(Ordering::Acquire));
        assert!(!proven.evicted.load(Ordering::Acquire));
        assert!(!unproven.any());
        assert!(!unproven.evict_oldest(young));
    }

    #[test]
    fn an_ipv6_host_is_its_64_and_an_ipv4_host_its_address() {
        let per_address = Arc::new(Holders::default());
        let ip = |text: &str| host(text.parse::<IpAddr>().unwrap());
        // One /64 is one host: a second address in it has no place left.
        let first = per_address.take(ip("2001:db8:1:2::1"), 1);
        assert!(first.is_some());
        assert!(per_address.take(ip("2001:db8:1:2:ffff::9"), 1).is_none());
        // Another /64, and IPv4 addresses one by one.
        assert!(per_address.take(ip("2001:db8:1:3::1"), 1).is_some());
        let v4 = per_address.take(ip("192.0.2.1"), 1);
        assert!(v4.is_some());
        assert!(per_address.take(ip("192.0.2.2"), 1).is_some());
        // An IPv4 address mapped into IPv6 is that IPv4 address.
        assert!(per_address.take(ip("::ffff:192.0.2.1"), 1).is_none());
        // The place comes back with its slot.
        drop(first);
        assert!(per_address.take(ip("2001:db8:1:2::42"), 1).is_some());
    }
}
