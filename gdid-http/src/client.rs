//! [`RemoteAuthority`]: an authority served by `gdid serve`, used by a `BlockGenerator` exactly as
//! a database authority is (single flight, prefetch, failover), over one pooled HTTP/1.1 or
//! HTTP/2 client with timeouts.
//!
//! ```no_run
//! use gdid_engine::BlockGenerator;
//! use gdid_http::client::{RemoteAuthority, RemoteOptions};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = RemoteOptions::default().token(&std::env::var("GDID_TOKEN")?);
//! let one = RemoteAuthority::connect("https://ids-1.internal:8443", &options).await?;
//! let two = RemoteAuthority::connect("https://ids-2.internal:8443", &options).await?;
//! let orders = BlockGenerator::builder("shop", "orders")
//!     .authority(one)
//!     .authority(two)
//!     .build()?;
//! println!("{}", orders.next_id().await?);
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use gdid_core::Form;
use gdid_engine::backend::numbering::NumberRecord;
use gdid_engine::{
    Authority, AuthorityError, Block, NameKind,
    backend::{BoxFuture, validate_name},
    plumbing::redact,
};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::pem::certificates;
use crate::wire::{
    self, AllocateRequest, AuthorityInfo, BlockReply, ErrorReply, GiveBackReply, GiveBackRequest,
    IdsReply, IdsRequest,
};

/// The largest reply read: the largest `/v1/ids` reply (10,000 ELinks) is well under it.
const MAX_REPLY: usize = 4 << 20;

/// How to reach a server: its token, the certificates to trust, the time limit of a request.
#[derive(Clone, Default)]
pub struct RemoteOptions {
    token: Option<String>,
    roots_pem: Vec<Vec<u8>>,
    identity_pem: Option<(Vec<u8>, Vec<u8>)>,
    timeout: Option<Duration>,
}

impl RemoteOptions {
    /// The bearer token sent with every request.
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    /// A PEM certificate (or several) to trust beside the system's (`SSL_CERT_FILE` is read
    /// too): a private CA's, or a server's own self-signed one.
    pub fn root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.roots_pem.push(pem.to_vec());
        self
    }

    /// The client's own PEM certificate chain and private key, shown to a server that asks
    /// for one (mutual TLS: `gdid serve --tls-client-ca`).
    pub fn client_certificate_pem(mut self, chain_pem: &[u8], key_pem: &[u8]) -> Self {
        self.identity_pem = Some((chain_pem.to_vec(), key_pem.to_vec()));
        self
    }

    /// How long one request may take, connecting included (default 3 s, a generator's default
    /// allocation timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl fmt::Debug for RemoteOptions {
    /// Never the token.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("roots_pem", &self.roots_pem.len())
            .field("client_certificate", &self.identity_pem.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why a server could not be used. No variant holds the token or a URL's password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// Not an `http://` or `https://` URL.
    #[error("{url}: {reason}")]
    InvalidUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The certificates to trust, or the TLS setup.
    #[error("TLS for {url}: {reason}")]
    Tls {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// No answer: the connection failed or timed out.
    #[error("{url}: {reason}")]
    Transport {
        /// The URL.
        url: String,
        /// What failed (reqwest's account, without the URL).
        reason: String,
    },
    /// The server answered with an error.
    #[error("{url} answered {status} {code}: {message}")]
    Refused {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The error code ([`wire::ErrorBody::code`]).
        code: String,
        /// The server's message.
        message: String,
    },
    /// The server's answer is not what the API says.
    #[error("{url}: unexpected reply: {reason}")]
    BadReply {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RemoteError {
    /// Whether the server refused the token (401) or its scope (403).
    pub fn is_unauthorized(&self) -> bool {
        matches!(
            self,
            RemoteError::Refused {
                status: 401 | 403,
                ..
            }
        )
    }
}

/// A pooled client of one server: the base URL, the token header, the label.
#[derive(Clone)]
pub struct Remote {
    client: reqwest::Client,
    base: String,
    label: String,
    token: Option<HeaderValue>,
    /// The server's largest block, as it last said (`GET /v1/authority`); 0 before.
    max_block: Arc<AtomicU64>,
}

impl Remote {
    /// A client of the server at `url` (`http://HOST:PORT` or `https://…`, a path prefix
    /// allowed), connecting on first use.
    ///
    /// # Errors
    ///
    /// [`RemoteError::InvalidUrl`], or [`RemoteError::Tls`] for a certificate that cannot be
    /// read.
    pub fn new(url: &str, options: &RemoteOptions) -> Result<Remote, RemoteError> {
        let url = url.trim();
        let label = redact(url);
        let invalid = |reason| RemoteError::InvalidUrl {
            url: label.clone(),
            reason,
        };
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or_else(|| invalid("an authority server's URL starts with http:// or https://"))?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(invalid("the URL names no host"));
        }
        if rest.contains(['?', '#']) {
            return Err(invalid(
                "the URL holds a query or fragment: give the server's base URL",
            ));
        }
        if rest.contains('@') {
            return Err(invalid(
                "the URL holds a user or password: give the token in GDID_TOKEN instead",
            ));
        }
        let token = match &options.token {
            Some(token) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| invalid("the token holds a character a header cannot carry"))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let tls = client_tls(options).map_err(|reason| RemoteError::Tls {
            url: label.clone(),
            reason,
        })?;
        let timeout = options.timeout.unwrap_or(Duration::from_secs(3));
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(timeout)
            .connect_timeout(timeout)
            .tcp_nodelay(true)
            // A redirect would carry the token elsewhere, and so would a proxy named by the
            // environment (`HTTP_PROXY`, `http_proxy`, even for 127.0.0.1), which could also
            // answer with blocks of its own: the authority is reached directly.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| RemoteError::Tls {
                url: label.clone(),
                reason: e.without_url().to_string(),
            })?;
        Ok(Remote {
            client,
            base: url.trim_end_matches('/').to_owned(),
            label,
            token,
            max_block: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The URL, without a password.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// `GET /v1/authority`: the server's number and limits (and whether the token is good).
    ///
    /// # Errors
    ///
    /// [`RemoteError`].
    pub async fn info(&self) -> Result<AuthorityInfo, RemoteError> {
        let info: AuthorityInfo = self
            .call(self.client.get(self.url(wire::AUTHORITY)))
            .await?;
        self.max_block.store(info.max_block, Ordering::Relaxed);
        Ok(info)
    }

    /// The largest block the server takes, as it said when last asked ([`info`](Self::info));
    /// `None` before. A generator of this server must ask for no more.
    pub fn max_block(&self) -> Option<u64> {
        Some(self.max_block.load(Ordering::Relaxed)).filter(|&max| max > 0)
    }

    /// `GET /v1/ready`: whether the server's store answers.
    ///
    /// # Errors
    ///
    /// [`RemoteError`]: `Refused` with status 503 when it does not.
    pub async fn ready(&self) -> Result<(), RemoteError> {
        self.call::<serde_json::Value>(self.client.get(self.url(wire::READY)))
            .await
            .map(drop)
    }

    /// `POST /v1/ids`: `count` ids from the server's own generator, spelled in `form`.
    ///
    /// # Errors
    ///
    /// [`RemoteError`].
    pub async fn ids(
        &self,
        scope: &str,
        sequence: &str,
        count: u64,
        form: Form,
    ) -> Result<Vec<String>, RemoteError> {
        let request = IdsRequest {
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
            count,
            form,
        };
        let reply: IdsReply = self.post(wire::IDS, &request).await?;
        Ok(reply.ids)
    }

    /// `POST /v1/blocks`.
    async fn allocate(&self, request: &AllocateRequest) -> Result<BlockReply, RemoteError> {
        self.post(wire::BLOCKS, request).await
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, RemoteError> {
        self.call(self.client.post(self.url(path)).json(body)).await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, RemoteError> {
        let request = match &self.token {
            Some(token) => request.header(AUTHORIZATION, token.clone()),
            None => request,
        };
        let transport = |e: reqwest::Error| RemoteError::Transport {
            url: self.label.clone(),
            reason: describe(&e.without_url()),
        };
        let mut response = request.send().await.map_err(transport)?;
        let status = response.status();
        // Read at most MAX_REPLY bytes: a server (or what answers in its place) cannot make the
        // client hold more.
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > MAX_REPLY {
                return Err(RemoteError::BadReply {
                    url: self.label.clone(),
                    reason: format!("a reply over {MAX_REPLY} bytes"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        if status == StatusCode::OK {
            return serde_json::from_slice(&body).map_err(|e| RemoteError::BadReply {
                url: self.label.clone(),
                reason: e.to_string(),
            });
        }
        let (code, message) = match serde_json::from_slice::<ErrorReply>(&body) {
            // Printed by callers: a server's text must not drive their terminal.
            Ok(reply) => (
                printable(&reply.error.code),
                printable(&reply.error.message),
            ),
            Err(_) => (
                String::new(),
                format!("{} bytes that are not an error reply", body.len()),
            ),
        };
        Err(RemoteError::Refused {
            url: self.label.clone(),
            status: status.as_u16(),
            code,
            message,
        })
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.label)
            .finish_non_exhaustive()
    }
}

/// The latest blocks received per (scope, sequence) (the current one and the one prefetched),
/// each with its lease.
type HeldLeases = HashMap<(String, String), Vec<(Block, String)>>;

/// Leases held per sequence, as the server keeps them.
const LEASES_HELD: usize = 2;

/// An authority served over HTTP: [`Authority::allocate`] is `POST /v1/blocks`, and
/// [`Authority::give_back`] is `POST /v1/blocks/give-back` with the lease of the block.
#[derive(Clone)]
pub struct RemoteAuthority {
    remote: Arc<Remote>,
    number: u8,
    /// The latest block received per (scope, sequence), and its lease. Shared by clones.
    leases: Arc<Mutex<HeldLeases>>,
}

impl RemoteAuthority {
    /// Connects to the server at `url` and reads its authority number (`GET /v1/authority`,
    /// which also checks the token).
    ///
    /// # Errors
    ///
    /// [`RemoteError`]: a bad URL, no answer, or a refused token.
    pub async fn connect(
        url: &str,
        options: &RemoteOptions,
    ) -> Result<RemoteAuthority, RemoteError> {
        let remote = Remote::new(url, options)?;
        let info = remote.info().await?;
        Ok(RemoteAuthority::with_number(
            Arc::new(remote),
            info.authority,
        ))
    }

    /// The server of `remote` as authority `number`, without asking it: every block it sends
    /// is checked to carry that number.
    pub fn with_number(remote: Arc<Remote>, number: u8) -> RemoteAuthority {
        RemoteAuthority {
            remote,
            number,
            leases: Arc::default(),
        }
    }

    /// The client.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }
}

impl fmt::Debug for RemoteAuthority {
    /// Without the leases: secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAuthority")
            .field("remote", &self.remote)
            .field("number", &self.number)
            .finish_non_exhaustive()
    }
}

impl Authority for RemoteAuthority {
    fn number(&self) -> u8 {
        self.number
    }

    fn label(&self) -> String {
        self.remote.label.clone()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        // Checked here as every authority checks them, so that a bad name is never a network
        // error.
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        Block::check_size(size)?;
        let request = AllocateRequest {
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
            size,
            vicinity: None,
        };
        let reply = self
            .remote
            .allocate(&request)
            .await
            .map_err(into_authority_error)?;
        let block = reply.block()?;
        if block.authority() != self.number || block.len() != size {
            return Err(AuthorityError::InvalidBlock(format!(
                "{} sent {block} ({} ids) to authority {} asking for {size}",
                self.remote.label,
                block.len(),
                self.number
            )));
        }
        if let Some(lease) = reply.lease {
            let mut leases = self.leases.lock().unwrap_or_else(PoisonError::into_inner);
            let held = leases.entry((request.scope, request.sequence)).or_default();
            if held.len() == LEASES_HELD {
                held.remove(0);
            }
            held.push((block, lease));
        }
        Ok(block)
    }

    async fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> Result<bool, AuthorityError> {
        let key = (scope.to_owned(), sequence.to_owned());
        // The lease of the block `tail` ends; only that one is spent.
        let lease = {
            let mut leases = self.leases.lock().unwrap_or_else(PoisonError::into_inner);
            leases.get_mut(&key).and_then(|held| {
                let at = held.iter().position(|(block, _)| {
                    (block.era(), block.authority(), block.end())
                        == (tail.era(), tail.authority(), tail.end())
                        && tail.start() >= block.start()
                })?;
                Some(held.remove(at).1)
            })
        };
        let Some(lease) = lease else {
            return Ok(false);
        };
        let request = GiveBackRequest {
            scope: key.0,
            sequence: key.1,
            lease,
            era: tail.era(),
            authority: tail.authority(),
            start: tail.start(),
            len: tail.len(),
        };
        let reply: GiveBackReply = self
            .remote
            .post(wire::GIVE_BACK, &request)
            .await
            .map_err(AuthorityError::store)?;
        Ok(reply.returned)
    }
}

/// A server's error in the engine's vocabulary: an exhausted sequence, a corrupt record or a
/// record last written on another database server keeps its kind (lasting: the generator asks
/// another authority, and a caller is told at once when none serves); anything else, a size
/// above this server's largest block (`size_too_large`) or a refused token included, counts as
/// this authority being unavailable, so the generator fails over to another.
fn into_authority_error(error: RemoteError) -> AuthorityError {
    match &error {
        RemoteError::Refused { code, .. } if code == "exhausted" => AuthorityError::Exhausted,
        RemoteError::Refused { code, .. } if code == "corrupt" => {
            AuthorityError::Corrupt(error.to_string())
        }
        RemoteError::Refused {
            url, code, message, ..
        } if code == "switched" => AuthorityError::Switched {
            record: format!("the store of {url}"),
            remedy: message.clone(),
        },
        _ => AuthorityError::store(error),
    }
}

/// `text` without control characters (terminal escapes, new lines), each shown as `\u{…}`, and
/// cut at 500 characters: what a server says, made safe to print.
fn printable(text: &str) -> String {
    const MAX: usize = 500;
    let mut out = String::with_capacity(text.len().min(MAX));
    for (i, c) in text.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The error and its causes in one line (reqwest's own `Display` stops at the outermost).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// rustls with ring, trusting the system's roots (and `SSL_CERT_FILE`) and the options' PEMs.
fn client_tls(options: &RemoteOptions) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for pem in &options.roots_pem {
        for certificate in certificates(pem).map_err(|e| format!("a root certificate: {e}"))? {
            roots
                .add(certificate)
                .map_err(|e| format!("a root certificate: {e}"))?;
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots);
    let mut config = match &options.identity_pem {
        None => config.with_no_client_auth(),
        Some((chain_pem, key_pem)) => {
            let chain =
                certificates(chain_pem).map_err(|e| format!("the client certificate: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(key_pem)
                .map_err(|e| format!("the client certificate's key: {e}"))?;
            config
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("the client certificate and key: {e}"))?
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A server's number is recorded in its own store (`gdid serve` claims it there at start): the
/// client reads it and can record none.
impl NumberRecord for Remote {
    fn store(&self) -> String {
        self.label.clone()
    }

    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>> {
        Box::pin(async move {
            let info = self.info().await.map_err(AuthorityError::store)?;
            if info.authority > gdid_core::AUTHORITY_MAX {
                return Err(AuthorityError::Corrupt(format!(
                    "{} says it is authority {}, above 15",
                    self.label, info.authority
                )));
            }
            Ok(Some(info.authority))
        })
    }

    fn record_number(&self, _: u8) -> BoxFuture<'_, Result<(), AuthorityError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PEM with no certificate in it is a mistake, named, not an empty list of roots or an
    /// empty chain.
    #[test]
    fn pems_without_a_certificate_are_refused() {
        let no_root = RemoteOptions::default().root_certificate_pem(b"not a certificate");
        assert_eq!(
            client_tls(&no_root).unwrap_err(),
            "a root certificate: no PEM certificate in it"
        );
        let no_chain = RemoteOptions::default().client_certificate_pem(b"", b"");
        assert_eq!(
            client_tls(&no_chain).unwrap_err(),
            "the client certificate: no PEM certificate in it"
        );
    }

    #[test]
    fn a_servers_text_cannot_drive_the_terminal() {
        let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2Jgone\r\nnext line";
        let shown = printable(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(
            shown.contains("gone") && shown.contains("next line"),
            "{shown:?}"
        );
        assert_eq!(printable(&"x".repeat(600)).chars().count(), 501);
    }
}
