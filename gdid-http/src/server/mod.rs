//! One authority over HTTP: the `/v1` routes ([`crate::wire`]), bearer tokens, TLS, limits on
//! what a client may send, and a shutdown that lets allocations in flight finish.
//!
//! ```no_run
//! use std::sync::Arc;
//! use gdid_engine::MemoryAuthority;
//! use gdid_http::server::{Server, Tokens};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tokens = Tokens::parse("a-long-random-client-token shop")?;
//! let server = Server::builder(Arc::new(MemoryAuthority::new(1)), tokens).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve(listener, None, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

mod direct;
mod errors;
mod failures;
mod ids_body;
mod leases;
mod listen;
mod memory;
mod rates;
mod routes;
mod sequences;
mod tls;
mod tokens;

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use gdid_engine::{DynAuthority, GeneratorConfig, IdOrder, backend::BoxFuture};

use crate::wire;

pub use errors::ApiError;
pub use listen::Limits as ConnectionLimits;
pub use tls::{TlsError, mutual_tls_config, tls_config};
pub use tokens::{Grant, MIN_TOKEN_LEN, Scopes, Tokens, TokensError, hashed_line, new_token};

/// The highest [`ServerBuilder::max_count`]: a reply of 100,000 ids is 3.6 MB of JSON at most.
pub const MAX_COUNT: u64 = 100_000;

/// Whether the store behind the authority answers: `Err` with what failed, for the server's log
/// only (a client is told that the store is not ready, never why).
pub type ReadyCheck = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// The metrics of the process in the Prometheus text format (a `PrometheusHandle::render`, say).
pub type MetricsRender = Arc<dyn Fn() -> String + Send + Sync>;

/// A server of one authority. Cheap to clone: clones share the authority and the generators of
/// `POST /v1/ids`.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

/// What every request handler reads.
pub(crate) struct Shared {
    pub(crate) authority: Arc<dyn DynAuthority>,
    /// Swapped whole by [`Server::reload_tokens`]; each request holds the set it began with.
    pub(crate) tokens: RwLock<Arc<Tokens>>,
    pub(crate) max_block: u64,
    pub(crate) max_count: u64,
    pub(crate) max_body: usize,
    pub(crate) request_timeout: Duration,
    pub(crate) ready: Option<ReadyCheck>,
    pub(crate) metrics: Option<MetricsRender>,
    pub(crate) direct: direct::Direct,
    pub(crate) leases: leases::Leases,
    pub(crate) connections: ConnectionLimits,
    pub(crate) reply_memory: memory::ReplyMemory,
    pub(crate) rates: rates::Rates,
    /// The tokens refused, by client host.
    pub(crate) failures: failures::Failures,
    /// The sequences each token has used.
    pub(crate) sequences: sequences::Used,
}

/// How a [`Server`] is set up: [`Server::builder`], then `.build()`.
pub struct ServerBuilder {
    authority: Arc<dyn DynAuthority>,
    tokens: Tokens,
    max_block: u64,
    max_count: u64,
    max_sequences: usize,
    max_sequences_per_token: usize,
    max_body: usize,
    request_timeout: Duration,
    generator: GeneratorConfig,
    ready: Option<ReadyCheck>,
    metrics: Option<MetricsRender>,
    connections: ConnectionLimits,
    rate_limit: u32,
}

impl Server {
    /// A server of `authority`, accepting `tokens`, with the default limits: blocks of up to
    /// 2^31 counters (a `BlockGenerator`'s own largest), 10,000 ids a request, 1,000 sequences
    /// served by `POST /v1/ids`, 1,000 sequences used by one token, bodies of 16 KiB, 10 s a
    /// request.
    pub fn builder(authority: Arc<dyn DynAuthority>, tokens: Tokens) -> ServerBuilder {
        ServerBuilder {
            authority,
            tokens,
            max_block: GeneratorConfig::default().max_block,
            max_count: 10_000,
            max_sequences: 1_000,
            max_sequences_per_token: 1_000,
            max_body: 16 * 1024,
            request_timeout: Duration::from_secs(10),
            // One increasing order across the server's threads: a client's consecutive requests
            // never go backwards (the store round trip, not the atomic, is what costs here).
            generator: GeneratorConfig {
                order: IdOrder::Strict,
                ..GeneratorConfig::default()
            },
            ready: None,
            metrics: None,
            connections: ConnectionLimits::default(),
            rate_limit: 0,
        }
    }

    /// The routes, to serve with a server of your own or to nest in a larger `axum` app.
    /// [`serve`](Self::serve) adds the connection limits and TLS.
    pub fn router(&self) -> axum::Router {
        routes::router(self.shared.clone())
    }

    /// The authority number served.
    pub fn authority_number(&self) -> u8 {
        self.shared.authority.number()
    }

    /// Serves `listener` (over TLS when `tls` is given, HTTP/1.1 and HTTP/2 either way) until
    /// `shutdown` completes; then stops accepting, lets the requests in flight finish (at most
    /// the request timeout), and [`close`](Self::close)s.
    ///
    /// # Errors
    ///
    /// The listener's address cannot be read. Errors of single connections are logged, never
    /// returned.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        tls: Option<Arc<rustls::ServerConfig>>,
        shutdown: impl Future<Output = ()> + Send,
    ) -> std::io::Result<u64> {
        listen::serve(self, listener, tls, shutdown).await?;
        Ok(self.close().await)
    }

    /// Stops serving `POST /v1/ids` (503 `shutting_down` from now on) and closes its generators
    /// all at once, each giving the unused tail of its block back to the authority, for at most
    /// the request timeout in all (a store that does not answer loses those ids, never issues
    /// them again). How many ids went back.
    pub async fn close(&self) -> u64 {
        self.shared.direct.close(self.shared.request_timeout).await
    }

    /// Replaces the tokens the server accepts, at once and without dropping a connection:
    /// requests under way finish with the tokens they began with. For a tokens file read again
    /// (`gdid serve` on SIGHUP), [`reload_tokens_text`](Self::reload_tokens_text) also revokes
    /// when the file cannot be used.
    pub fn reload_tokens(&self, tokens: Tokens) {
        *self
            .shared
            .tokens
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(tokens);
    }

    /// Reads `text`, the tokens file read again, and accepts its tokens from now on, as
    /// [`reload_tokens`](Self::reload_tokens) does: how many. A file that cannot be used
    /// ([`Tokens::parse`]'s error) still revokes: the tokens in force that it no longer lists are
    /// refused from now on, those it lists keep what they may do, none is added
    /// ([`Tokens::still_listed`]), until a file that can be used is read; this is logged as an
    /// error. A file that cannot be read at all is `""`: it lists no token.
    ///
    /// # Errors
    ///
    /// The file cannot be used: its line and what is wrong with it, never a token.
    pub fn reload_tokens_text(&self, text: &str) -> Result<usize, TokensError> {
        match Tokens::parse(text) {
            Ok(tokens) => {
                let count = tokens.len();
                self.reload_tokens(tokens);
                tracing::info!(count, "tokens file read again");
                Ok(count)
            }
            Err(error) => {
                let mut tokens = self
                    .shared
                    .tokens
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                let kept = tokens.still_listed(text);
                let (before, after) = (tokens.len(), kept.len());
                *tokens = Arc::new(kept);
                tracing::error!(
                    %error,
                    kept = after,
                    refused = before - after,
                    "the tokens file read again cannot be used: the tokens it no longer lists are \
                     refused, the others keep what they may do, none is added, until a file that \
                     can be used is read"
                );
                Err(error)
            }
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Shared {
    /// The tokens accepted now.
    pub(crate) fn tokens(&self) -> Arc<Tokens> {
        self.tokens
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
    /// When a request routed now must be answered.
    pub(crate) fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.request_timeout
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("authority", &self.shared.authority.label())
            .field("tokens", &self.shared.tokens)
            .field("max_block", &self.shared.max_block)
            .field("max_count", &self.shared.max_count)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// The largest block a client may ask for (at least 1). A client's generator must not ask
    /// for more: set its maximum block no higher.
    pub fn max_block(mut self, max: u64) -> Self {
        self.max_block = max.clamp(1, gdid_core::COUNTER_MAX);
        self
    }

    /// The most ids one `POST /v1/ids` may ask for (1 to [`MAX_COUNT`]).
    pub fn max_count(mut self, max: u64) -> Self {
        self.max_count = max.clamp(1, MAX_COUNT);
        self
    }

    /// The most sequences `POST /v1/ids` serves (each keeps a generator in memory), a quarter of
    /// them at most for one scope, so that one tenant cannot take every place. A request for one
    /// more closes the generator idle longest (of its own scope when the scope holds its
    /// quarter; its unused ids go back), or is refused (503 `busy`) when every candidate was
    /// used within the last 10 s.
    pub fn max_sequences(mut self, max: usize) -> Self {
        self.max_sequences = max;
        self
    }

    /// The most sequences, `(scope, sequence)`, one token may use by `POST /v1/blocks` and
    /// `POST /v1/ids` (default 1,000; 0: no bound): each is a row in the store and a metrics
    /// series, so that a token holder cannot make them without end. Beyond, 403 `forbidden`
    /// saying the bound, before the store is asked; the sequences the token used before are
    /// still served. Counted since the server started, in memory (at most this many names a
    /// token).
    pub fn max_sequences_per_token(mut self, max: usize) -> Self {
        self.max_sequences_per_token = max;
        self
    }

    /// The largest request body, in bytes (413 `too_large` beyond).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a request may take from the moment it is routed, its body and the store's
    /// answer together (408 or 503 `timeout` beyond); also how long a shutdown waits for
    /// requests in flight.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The configuration of the generators behind `POST /v1/ids` (`IdOrder::Strict` by
    /// default).
    pub fn generator_config(mut self, config: GeneratorConfig) -> Self {
        self.generator = config;
        self
    }

    /// How `GET /v1/ready` checks the store (without it, ready means serving).
    pub fn ready_check(mut self, check: ReadyCheck) -> Self {
        self.ready = Some(check);
        self
    }

    /// What `GET /v1/metrics` answers (without it, 404).
    pub fn metrics(mut self, render: MetricsRender) -> Self {
        self.metrics = Some(render);
        self
    }

    /// Connection limits: how many at once and from one address, and the deadlines of silent,
    /// slow, idle and non-reading clients ([`ConnectionLimits`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connections = limits;
        self
    }

    /// Requests a second each token may send, in bursts of as many (0, the default: no
    /// limit). Beyond, 429 `rate_limited` with `Retry-After`.
    pub fn rate_limit(mut self, per_second: u32) -> Self {
        self.rate_limit = per_second;
        self
    }

    /// The server.
    pub fn build(self) -> Server {
        Server {
            shared: Arc::new(Shared {
                direct: direct::Direct::new(
                    self.authority.clone(),
                    GeneratorConfig {
                        // Its own answer, with the store's reason, before the request's deadline
                        // answers a bare timeout.
                        request_timeout: self
                            .generator
                            .request_timeout
                            .min(self.request_timeout.mul_f64(0.9)),
                        ..self.generator
                    },
                    self.max_sequences,
                ),
                leases: leases::Leases::new(self.max_sequences.saturating_mul(10)),
                authority: self.authority,
                tokens: RwLock::new(Arc::new(self.tokens)),
                max_block: self.max_block,
                reply_memory: memory::ReplyMemory::new(
                    self.connections.reply_memory,
                    self.connections.reply_memory_per_connection,
                    wire::IdsReply::largest_size(self.max_count),
                ),
                rates: rates::Rates::new(self.rate_limit),
                failures: failures::Failures::new(),
                sequences: sequences::Used::new(self.max_sequences_per_token),
                max_count: self.max_count,
                max_body: self.max_body,
                request_timeout: self.request_timeout,
                ready: self.ready,
                metrics: self.metrics,
                connections: self.connections,
            }),
        }
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("authority", &self.authority.label())
            .field("max_block", &self.max_block)
            .field("max_count", &self.max_count)
            .finish_non_exhaustive()
    }
}
