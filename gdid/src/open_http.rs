//! `http://…` and `https://…` stores: an authority served by `gdid serve` (gdid-http), as a
//! [`Backend`]. Such a store issues GDIDs only: its counters, ranges and windows are the server's
//! store's, reached there and not over the network.

use std::sync::Arc;

use gdid_engine::ErrorKind;
use gdid_engine::backend::numbering::NumberRecord;
use gdid_engine::durability::{Durability, Setting, Verdict};
use gdid_engine::sequences::Sequence;
use gdid_engine::{
    AuthorityError, CounterState, DynAuthority, Error, IdBatch, IdGenerator, SharedIdGenerator,
    backend::{BoxFuture, CounterKey},
};
use gdid_http::client::{Remote, RemoteAuthority, RemoteError, RemoteOptions};

use crate::backend::Backend;
use crate::error::{Sorted, StoreError};

/// The variable a token is read from when the options give none.
pub(crate) const TOKEN_VARIABLE: &str = "GDID_TOKEN";
/// The variables naming the files of a client certificate and its key, when the options give
/// none.
pub(crate) const CLIENT_CERT_VARIABLE: &str = "GDID_TLS_CLIENT_CERT";
pub(crate) const CLIENT_KEY_VARIABLE: &str = "GDID_TLS_CLIENT_KEY";

/// A client certificate: its PEM chain and its PEM private key.
pub(crate) type Identity = (Vec<u8>, Vec<u8>);

/// A server of one authority.
#[derive(Debug)]
pub(crate) struct HttpBackend {
    remote: Arc<Remote>,
}

impl HttpBackend {
    /// A client of the server at `url`, with `token` or else `$GDID_TOKEN`, trusting the
    /// system's certificates and `roots_pem`, showing `identity` (a certificate chain and key)
    /// or else the files `$GDID_TLS_CLIENT_CERT` and `$GDID_TLS_CLIENT_KEY` name. It connects
    /// on first use; opening a store reads the server's number (which checks the token).
    pub(crate) fn open(
        url: &str,
        label: &str,
        token: Option<&str>,
        roots_pem: &[Vec<u8>],
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpBackend>, StoreError> {
        let mut options = RemoteOptions::default();
        let from_env = std::env::var(TOKEN_VARIABLE).ok();
        if let Some(token) = token.or(from_env.as_deref()) {
            options = options.token(token);
        }
        for pem in roots_pem {
            options = options.root_certificate_pem(pem);
        }
        let from_files = match identity {
            Some(_) => None,
            None => identity_from_env(label)?,
        };
        if let Some((chain, key)) = identity.or(from_files.as_ref()) {
            options = options.client_certificate_pem(chain, key);
        }
        let remote = Remote::new(url, &options).map_err(|error| match error {
            RemoteError::InvalidUrl { reason, .. } => StoreError::InvalidUrl {
                url: label.to_owned(),
                reason,
            },
            // A client that cannot be built (its TLS settings) is the caller's to fix.
            other => StoreError::Connect {
                url: label.to_owned(),
                kind: ErrorKind::Config,
                source: other.into(),
            },
        })?;
        Ok(Arc::new(HttpBackend {
            remote: Arc::new(remote),
        }))
    }

    fn unsupported<T>(&self, what: &str) -> Result<T, AuthorityError> {
        Err(AuthorityError::store(format!(
            "{}: {what} is done on the server's own store, not over HTTP",
            self.remote.label()
        )))
    }
}

impl Backend for HttpBackend {
    fn record(&self) -> &dyn NumberRecord {
        &*self.remote
    }

    fn authority(&self, number: u8) -> Arc<dyn DynAuthority> {
        Arc::new(RemoteAuthority::with_number(self.remote.clone(), number))
    }

    fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        Arc::new(Refused {
            reason: format!(
                "{}: an authority server issues GDIDs only, not the one-at-a-time counter of \
                 {scope}/{sequence}",
                self.remote.label()
            ),
        })
    }

    fn raise_floor<'a>(
        &'a self,
        _key: CounterKey<'a>,
        _floor: CounterState,
    ) -> BoxFuture<'a, Result<bool, AuthorityError>> {
        Box::pin(std::future::ready(self.unsupported("raising a floor")))
    }

    fn sequences(&self) -> BoxFuture<'_, Result<Vec<Sequence>, AuthorityError>> {
        Box::pin(std::future::ready(self.unsupported("listing sequences")))
    }

    fn max_block(&self) -> Option<u64> {
        self.remote.max_block()
    }

    /// The server's store decides, and it is not asked over HTTP (its settings are the
    /// operator's business, not a client's).
    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>> {
        Box::pin(std::future::ready(Ok(Durability::new(
            format!("gdid serve at {}", self.remote.label()),
            vec![Setting::new(
                "store",
                "the server's",
                Verdict::Unknown,
                "the blocks come from the store behind gdid serve: run gdid check on that \
                 store, where the server runs",
            )],
        ))))
    }

    fn is_duplicate_key(&self, _error: &(dyn std::error::Error + 'static)) -> bool {
        false
    }
}

/// The certificate chain and key the files `$GDID_TLS_CLIENT_CERT` and `$GDID_TLS_CLIENT_KEY`
/// name, when both are set; one without the other, or a file that cannot be read, is refused.
fn identity_from_env(label: &str) -> Result<Option<Identity>, StoreError> {
    let refused = |reason: String| StoreError::Connect {
        url: label.to_owned(),
        kind: ErrorKind::Config,
        source: reason.into(),
    };
    let (cert, key) = (
        std::env::var_os(CLIENT_CERT_VARIABLE),
        std::env::var_os(CLIENT_KEY_VARIABLE),
    );
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(cert), Some(key)) => (cert, key),
        _ => {
            return Err(refused(format!(
                "{CLIENT_CERT_VARIABLE} and {CLIENT_KEY_VARIABLE} go together: one is set \
                 without the other"
            )));
        }
    };
    let read = |variable: &str, path: &std::ffi::OsStr| {
        std::fs::read(path).map_err(|e| {
            refused(format!(
                "{variable}={}: {e}",
                std::path::Path::new(path).display()
            ))
        })
    };
    Ok(Some((
        read(CLIENT_CERT_VARIABLE, &cert)?,
        read(CLIENT_KEY_VARIABLE, &key)?,
    )))
}

/// The one-at-a-time counter of a store that has none: every call says so.
#[derive(Debug)]
struct Refused {
    reason: String,
}

impl Refused {
    fn error(&self) -> Error {
        Error::invalid_config(self.reason.clone())
    }
}

impl IdGenerator for Refused {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        Err(self.error())
    }

    async fn next_ids(&self, _n: u64) -> Result<IdBatch<u64>, Error> {
        Err(self.error())
    }
}
