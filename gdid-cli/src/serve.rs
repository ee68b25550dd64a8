//! `gdid serve`: one store's authority over HTTP (gdid-http's server), and `gdid token`: a new
//! token and the line of a tokens file that lists it by its digest.

use std::io::{self, IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gdid::http::server::{self, Server, Tokens};
use gdid::{Store, StoreKind};
use metrics_util::MetricKindMask;

use crate::failure::Failure;
use crate::store::{DEFAULT_STORE, StoreUrl};

impl ServeArgs {
    /// Settles the store: --store's, --store-file's, GDID_STORE's, or the default.
    ///
    /// # Errors
    ///
    /// As [`crate::store::one`].
    pub(crate) fn resolve_store(&mut self) -> Result<(), String> {
        self.store = Some(crate::store::one(
            self.store.as_ref(),
            self.store_file.as_deref(),
        )?);
        Ok(())
    }

    fn url(&self) -> &str {
        self.store.as_deref().unwrap_or(DEFAULT_STORE)
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// The store whose authority is served: a database (its authority number is recorded in
    /// it). Without --store: the URL of --store-file, else of the GDID_STORE environment
    /// variable, else sqlite:gdid.sqlite.
    #[arg(long, value_name = "URL", value_parser = StoreUrl)]
    store: Option<String>,
    /// A file that holds the store URL (`#` starts a comment), instead of --store: no password
    /// in the command line.
    #[arg(long, value_name = "FILE", conflicts_with = "store")]
    store_file: Option<PathBuf>,
    /// The authority number to record in a store that has none yet (else the store's own).
    #[arg(long)]
    authority: Option<u8>,
    /// Where to listen, HOST:PORT (port 0: a free port). The URL served is printed on stdout.
    #[arg(long, default_value = "127.0.0.1:7070")]
    listen: SocketAddr,
    /// The tokens file: `TOKEN SCOPE[,SCOPE…]` a line (`*`: every scope; `sha256:HEX` for a
    /// token's digest, as `gdid token` prints it; `SCOPE:metrics` lets the token read that
    /// scope's series at /v1/metrics; `SCOPE:give-back` lets it give unused ids back, for
    /// clients trusted as your own code: one that gives back ids it handed out would have them
    /// issued again).
    #[arg(long)]
    tokens: PathBuf,
    /// A PEM certificate chain: serve HTTPS (with --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// PEM CA certificates: ask every client for a certificate signed by one of them (mutual
    /// TLS, beside the token; clients of `gdid` show theirs from GDID_TLS_CLIENT_CERT and
    /// GDID_TLS_CLIENT_KEY).
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    tls_client_ca: Option<PathBuf>,
    /// The largest block a client may ask for.
    #[arg(long, default_value_t = 1 << 31)]
    max_block: u64,
    /// The most ids one `POST /v1/ids` may ask for (at most 100,000).
    #[arg(
        long,
        default_value_t = 10_000,
        value_parser = clap::value_parser!(u64).range(1..=server::MAX_COUNT)
    )]
    max_count: u64,
    /// Worker threads of the server (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Connections at once from one client address (0: no limit, for a load test from one
    /// host): one host cannot take every place.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_per_address: usize,
    /// Connections at once that one token holds, from however many hosts (0: no limit): one
    /// holder cannot take every place. Beyond, 429 and the connection is closed.
    #[arg(long, value_name = "N", default_value_t = server::ConnectionLimits::default().max_per_token)]
    max_per_token: usize,
    /// Requests a second each token may send, in bursts of as many (default: no limit):
    /// beyond, 429 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 0)]
    rate_limit: u32,
    /// The most sequences (scope and sequence) one token may use by POST /v1/blocks and
    /// /v1/ids since the server started (0: no bound): beyond, 403. Each is a row in the store
    /// and a metrics series.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_sequences_per_token: usize,
    /// Serve the metrics of the server's own generators at /v1/metrics (Prometheus text).
    #[arg(long)]
    metrics: bool,
    /// Seconds a metrics series stays in the scrape without an update (its generator gone, say),
    /// so that the scrape does not grow with every sequence ever served.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 600,
        requires = "metrics",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    metrics_idle: u64,
}

#[derive(Debug, clap::Args)]
pub(crate) struct TokenArgs {
    /// The scopes the token may use, comma-separated (`shop,billing`); `*` for every scope.
    /// A scope may be followed by permissions beyond issuing ids: `SCOPE:metrics` lets the
    /// token read that scope's series at GET /v1/metrics; `SCOPE:give-back` lets it give unused
    /// ids back (POST /v1/blocks/give-back; only for clients trusted as your own code: one that
    /// gives back ids it handed out would have them issued again); both: `shop:give-back:metrics`;
    /// `*:metrics` for every scope's.
    #[arg(long, value_name = "SCOPES")]
    scopes: String,
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path)
        .map_err(|e| Failure::BadArguments(format!("{what} {}: {e}", path.display())))
}

/// The server's log on stderr: warnings and errors unless `RUST_LOG` says otherwise (`info`
/// adds a line per connection and block).
fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        // Colours for a terminal only: not escape codes in a log file.
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}

/// The tokens file at `path`, read and parsed, its exposures warned of.
fn read_tokens(path: &Path) -> Result<Tokens, Failure> {
    let text = String::from_utf8(read("--tokens", path)?)
        .map_err(|_| Failure::BadArguments(format!("--tokens {}: not UTF-8", path.display())))?;
    let tokens = Tokens::parse(&text)
        .map_err(|e| Failure::BadArguments(format!("--tokens {}: {e}", path.display())))?;
    warn_of_exposed_tokens(path, tokens.in_clear());
    Ok(tokens)
}

/// On each SIGHUP, reads the tokens file again and gives it to `server`. A file that cannot be
/// used still revokes: the tokens it no longer lists are refused, the others kept, none added,
/// until a file that can be used is read (a file that cannot be read lists none).
fn reload_tokens_on_hangup(server: Server, path: PathBuf) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        eprintln!("gdid serve: warning: no SIGHUP handler: the tokens file is read at start only");
        return;
    };
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            let (text, unreadable) = match std::fs::read(&path) {
                Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), None),
                Err(e) => (String::new(), Some(e)),
            };
            match server.reload_tokens_text(&text) {
                Ok(count) => {
                    eprintln!(
                        "gdid serve: SIGHUP: {count} token(s) from {}",
                        path.display()
                    );
                    if let Ok(tokens) = Tokens::parse(&text) {
                        warn_of_exposed_tokens(&path, tokens.in_clear());
                    }
                }
                Err(e) => {
                    let why = unreadable.map_or_else(|| e.to_string(), |e| e.to_string());
                    eprintln!(
                        "gdid serve: SIGHUP: --tokens {}: {why}; the tokens it no longer lists \
                         are refused, the others kept, until a file that can be used is read",
                        path.display()
                    );
                }
            }
        }
    });
}

pub(crate) async fn serve(args: ServeArgs) -> Result<(), Failure> {
    log_to_stderr();
    let tokens = read_tokens(&args.tokens)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let (cert, key) = (read("--tls-cert", cert)?, read("--tls-key", key)?);
            let config = match &args.tls_client_ca {
                None => server::tls_config(&cert, &key),
                Some(ca) => server::mutual_tls_config(&cert, &key, &read("--tls-client-ca", ca)?),
            };
            Some(config.map_err(|e| {
                Failure::BadArguments(format!("--tls-cert/--tls-key/--tls-client-ca: {e}"))
            })?)
        }
        _ => None,
    };
    match gdid::store_kind(args.url())? {
        StoreKind::Memory | StoreKind::Http => {
            return Err(Failure::BadArguments(format!(
                "--store {}: an authority served to other processes keeps its counters in a \
                 database (sqlite:, mysql://, postgres:// or mongodb://)",
                crate::store::label(args.url())
            )));
        }
        _ => {}
    }
    // Before the store's generators exist: they register their metrics with it.
    let metrics = if args.metrics {
        let idle = std::time::Duration::from_secs(args.metrics_idle);
        let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
            .idle_timeout(MetricKindMask::ALL, Some(idle))
            .install_recorder()
            .map_err(|e| Failure::BadArguments(format!("--metrics: {e}")))?;
        Some(Arc::new(move || handle.render()) as server::MetricsRender)
    } else {
        None
    };
    let mut options = Store::options();
    if let Some(number) = args.authority {
        options = options.authority(number);
    }
    let store = options.open(args.url()).await?;
    let (Some(authority), Some(number)) = (store.authority(), store.authority_number()) else {
        unreachable!("a store opened with its number is an authority");
    };
    let ready_store = store.clone();
    let mut builder = Server::builder(authority, tokens)
        .max_block(args.max_block)
        .max_count(args.max_count)
        .rate_limit(args.rate_limit)
        .max_sequences_per_token(args.max_sequences_per_token)
        .connection_limits(server::ConnectionLimits {
            max_per_address: args.max_per_address,
            max_per_token: args.max_per_token,
            ..server::ConnectionLimits::default()
        })
        .ready_check(Arc::new(move || {
            let store = ready_store.clone();
            Box::pin(async move { store.ready().await.map_err(|e| e.to_string()) })
        }));
    if let Some(render) = metrics {
        builder = builder.metrics(render);
    }
    let server = builder.build();
    reload_tokens_on_hangup(server.clone(), args.tokens.clone());
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|source| Failure::Listen {
            address: args.listen,
            source,
        })?;
    let address = listener.local_addr().map_err(|source| Failure::Listen {
        address: args.listen,
        source,
    })?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    if tls.is_none() && !address.ip().is_loopback() {
        eprintln!(
            "gdid serve: warning: plain HTTP on {address}, beyond this machine: tokens and ids \
             cross the network in clear (give --tls-cert and --tls-key)"
        );
    }
    // SIGTERM and SIGINT are listened for before the URL is printed: a script may send one as
    // soon as it has read the URL.
    let mut signals = StopSignals::listen();
    // The URL on stdout, alone, for scripts (`--listen 127.0.0.1:0` picks the port).
    let mut out = io::stdout().lock();
    writeln!(out, "{scheme}://{address}")?;
    out.flush()?;
    drop(out);
    eprintln!(
        "gdid serve: authority {number} of {} at {scheme}://{address}",
        store.label()
    );
    // The first signal stops gracefully; a second stops at once.
    let (first, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        signals.next().await;
        let _ = first.send(());
        signals.next().await;
        eprintln!(
            "gdid serve: a second signal: stopped at once (ids in hand are lost, never issued \
             again)"
        );
        std::process::exit(1);
    });
    let stop = async {
        let _ = stopped.await;
    };
    let returned = server
        .serve(listener, tls, stop)
        .await
        .map_err(Failure::Serving)?;
    eprintln!("gdid serve: stopped; {returned} unused ids of /v1/ids given back");
    Ok(())
}

/// Warns on stderr when others than its owner may write the tokens file (they could add a
/// token of their own) or, when it holds `clear` tokens in clear, read it.
fn warn_of_exposed_tokens(path: &Path, clear: usize) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(mode) = std::fs::metadata(path).map(|m| m.permissions().mode()) else {
        return;
    };
    if mode & 0o022 != 0 {
        eprintln!(
            "gdid serve: warning: --tokens {}: others may write it (mode {:o}): they could add a \
             token of their own (chmod go-w)",
            path.display(),
            mode & 0o777
        );
    }
    if clear > 0 && mode & 0o004 != 0 {
        eprintln!(
            "gdid serve: warning: --tokens {}: anyone on this machine may read its {clear} \
             token(s) in clear (mode {:o}): list them by digest (`sha256:`), or chmod o-r",
            path.display(),
            mode & 0o777
        );
    }
}

/// The signals that stop the server, SIGTERM and SIGINT (Ctrl-C), listened for from the moment
/// they are made (each one that could be).
struct StopSignals {
    terminate: Option<tokio::signal::unix::Signal>,
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn listen() -> StopSignals {
        use tokio::signal::unix::{SignalKind, signal};
        StopSignals {
            terminate: signal(SignalKind::terminate()).ok(),
            interrupt: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// The next of them.
    async fn next(&mut self) {
        async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            () = received(self.terminate.as_mut()) => {}
            () = received(self.interrupt.as_mut()) => {}
        }
    }
}

/// A new random token on the first line, and its line for a tokens file on the second.
pub(crate) fn token(args: &TokenArgs, out: &mut impl Write) -> Result<(), Failure> {
    // A new line or a space would make the file line two lines, or three fields: a scope list
    // that smuggles in a token of its own.
    if let Some(c) = args
        .scopes
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Failure::BadArguments(format!(
            "--scopes holds {:?}: scopes are names separated by commas, without spaces or \
             control characters",
            c
        )));
    }
    // Checked as the server will read it.
    let token = server::new_token();
    let line = server::hashed_line(&token, &args.scopes);
    Tokens::parse(&line).map_err(|e| Failure::BadArguments(format!("--scopes: {}", e.reason)))?;
    writeln!(out, "{token}")?;
    writeln!(out, "{line}")?;
    Ok(())
}
