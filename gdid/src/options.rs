//! [`OpenOptions`]: how [`Store::options`](crate::Store::options) opens a store, or several as
//! one generator's authorities ([`Stores`](crate::Stores)).
#![cfg(feature = "engine")]

use std::sync::Arc;

use gdid_engine::backend::numbering::claim;
use gdid_engine::durability::Durability;
use gdid_engine::plumbing::redact;
use gdid_engine::plumbing::scheme::Scheme;

use crate::backend::Backend;
use crate::error::StoreError;
use crate::store::Store;

impl Store {
    /// Opens the store of `url`: `sqlite:PATH` (the file is created), `mysql://…` or
    /// `mariadb://…`, `postgres://…` or `postgresql://…`, `mongodb://…` or `mongodb+srv://…`
    /// (database `gdid` unless the URL names one; the server is pinged), or `memory:` /
    /// `memory:NAME` (in this process only, for tests and examples: not durable, its ids start
    /// again with every run; one `NAME` is one store within the process). Creates the schema
    /// and settles the store's authority number: the one recorded in it, or the one its
    /// counters already use, or 1 (recorded before this returns).
    ///
    /// Only GDIDs carry the number. To use a store for one-at-a-time or sharded counters or
    /// hi-lo windows alone, open it [`unnumbered`](OpenOptions::unnumbered): no number is read
    /// or recorded, so the store stays free to become any authority later.
    ///
    /// ```
    /// use gdid::IdGenerator;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("memory:").await?;
    /// let ids = store.block_generator("shop", "orders").build()?;
    /// assert_eq!(ids.next_id().await?.to_string(), "0:1:1");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::UnsupportedScheme`], [`StoreError::FeatureDisabled`] (naming the feature to
    /// enable), [`StoreError::InvalidUrl`], [`StoreError::Connect`], [`StoreError::Schema`],
    /// [`StoreError::Authority`]. No message holds the URL's password.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::options().open(url).await
    }

    /// Opens the stores of `urls` as the authorities of one generator, in preference order:
    /// [`OpenOptions::open_all`] with the default options.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let stores = gdid::Store::open_all(&["memory:", "memory:"]).await?;
    /// assert_eq!(stores.numbers(), [Some(1), Some(2)]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`OpenOptions::open_all`].
    pub async fn open_all<U: AsRef<str>>(urls: &[U]) -> Result<crate::Stores, StoreError> {
        Store::options().open_all(urls).await
    }

    /// How to open a store, when the defaults of [`open`](Self::open) do not fit:
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::options()
    ///     .default_mongodb_database("billing") // when the URL names none; "gdid" otherwise
    ///     .open("mongodb://127.0.0.1:27017")
    ///     .await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }
}

/// How [`Store::options`] opens a store, or several.
#[derive(Clone, Default)]
pub struct OpenOptions {
    default_mongodb_database: Option<String>,
    mongodb_collection: Option<String>,
    authority: Option<u8>,
    authorities: Option<Vec<u8>>,
    unnumbered: bool,
    create_nothing: bool,
    max_connections: Option<u32>,
    http: HttpClient,
}

/// How the client of `http://…` and `https://…` stores shows itself and whom it trusts.
#[derive(Clone, Default)]
struct HttpClient {
    /// The bearer token.
    token: Option<String>,
    /// PEM certificates trusted beside the system's.
    roots: Vec<Vec<u8>>,
    /// The client's own PEM certificate chain and private key.
    identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for OpenOptions {
    /// Without the token: whether there is one only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("default_mongodb_database", &self.default_mongodb_database)
            .field("mongodb_collection", &self.mongodb_collection)
            .field("authority", &self.authority)
            .field("authorities", &self.authorities)
            .field("unnumbered", &self.unnumbered)
            .field("create_nothing", &self.create_nothing)
            .field("max_connections", &self.max_connections)
            .field("http_token", &self.http.token.as_ref().map(|_| "…"))
            .field("http_roots", &self.http.roots.len())
            .field("http_identity", &self.http.identity.is_some())
            .finish()
    }
}

impl OpenOptions {
    /// The MongoDB database used when the URL names none (`gdid` unless set).
    pub fn default_mongodb_database(mut self, name: &str) -> Self {
        self.default_mongodb_database = Some(name.to_owned());
        self
    }

    /// The MongoDB collection of the counter documents, which records the store's authority
    /// number (`gdid_counters` unless set): each counter collection is a store of its own.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::options()
    ///     .mongodb_collection("billing_counters")
    ///     .open("mongodb://127.0.0.1:27017/ids")
    ///     .await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub fn mongodb_collection(mut self, name: &str) -> Self {
        self.mongodb_collection = Some(name.to_owned());
        self
    }

    /// Opens the store as authority `number` (0 to 15) rather than the one it settles on by
    /// itself: a fresh store records `number`; a store that has recorded another number is
    /// refused with [`StoreError::Authority`] holding
    /// [`NumberConflict::Recorded`](gdid_engine::backend::numbering::NumberConflict::Recorded),
    /// before any id is issued. A number above 15 is [`StoreError::AuthorityNumber`].
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::options().authority(3).open("sqlite:ids.sqlite").await?;
    /// assert_eq!(store.authority_number(), Some(3));
    /// # Ok(())
    /// # }
    /// ```
    pub fn authority(mut self, number: u8) -> Self {
        self.authority = Some(number);
        self
    }

    /// The authority number of each store [`open_all`](Self::open_all) opens, in the same
    /// order: one per store (or, by default, none: each store's own). Each is refused, as
    /// [`authority`](Self::authority) says, when its store has recorded another.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let stores = gdid::Store::options()
    ///     .authorities(&[4, 2])
    ///     .open_all(&["memory:", "memory:"])
    ///     .await?;
    /// assert_eq!(stores.numbers(), [Some(4), Some(2)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn authorities(mut self, numbers: &[u8]) -> Self {
        self.authorities = Some(numbers.to_vec());
        self
    }

    /// Opens stores without an authority number, neither read nor recorded: for one-at-a-time
    /// and sharded counters and hi-lo windows, whose ids carry none, so that a store used for
    /// them alone stays free to become any authority later. Such a store's
    /// [`authority_number`](Store::authority_number) is `None` and it is no authority of a
    /// block generator; [`open_all`](Self::open_all) reaches every store given (none is left
    /// out). Asking for an [`authority`](Self::authority) as well is
    /// [`StoreError::Unnumbered`].
    ///
    /// ```
    /// use gdid::IdGenerator;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::options().unnumbered().open("memory:").await?;
    /// let invoices = store.one_at_a_time("billing", "invoices");
    /// assert_eq!(invoices.next_id().await?, 1);
    /// assert_eq!(store.authority_number(), None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn unnumbered(mut self) -> Self {
        self.unnumbered = true;
        self
    }

    /// Opens stores to read them, creating nothing: no SQLite file (a missing one is
    /// [`StoreError::Connect`] naming its path, a configuration error), no schema, table or index,
    /// and no authority number is read or recorded (as [`unnumbered`](Self::unnumbered)). A store
    /// without its gdid tables then has no [`sequences`](Store::sequences); whatever needs the
    /// tables (issuing ids) fails on them. For tools that only look (`gdid sequences list`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let missing = std::env::temp_dir().join("gdid-doc-no-such-dir/none.sqlite");
    /// let url = format!("sqlite:{}", missing.display());
    /// assert!(gdid::Store::options().create_nothing().open(&url).await.is_err());
    /// assert!(!missing.exists());
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_nothing(mut self) -> Self {
        self.create_nothing = true;
        self.unnumbered = true;
        self
    }

    /// At most `n` connections to the server of a MySQL/MariaDB or PostgreSQL store (10
    /// unless set): 1 for a process that reserves blocks rarely and must hold little. The
    /// other stores ignore it.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::Store::options()
    ///     .max_connections(1)
    ///     .open("postgres://gdid_issuer@127.0.0.1/ids?schema=gdid")
    ///     .await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = Some(n);
        self
    }

    /// The bearer token sent to `http://…` and `https://…` stores (authority servers run by
    /// `gdid serve`). Unless set, the `GDID_TOKEN` environment variable's, if any.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let token = std::fs::read_to_string("/run/secrets/gdid-token")?;
    /// let stores = gdid::Store::options()
    ///     .http_token(token.trim())
    ///     .open_all(&["https://ids-1.internal:8443", "https://ids-2.internal:8443"])
    ///     .await?;
    /// let orders = stores.block_generator("shop", "orders").build()?;
    /// # let _ = orders;
    /// # Ok(())
    /// # }
    /// ```
    pub fn http_token(mut self, token: &str) -> Self {
        self.http.token = Some(token.to_owned());
        self
    }

    /// A PEM certificate to trust for `https://…` stores beside the system's (a private CA's,
    /// or a server's self-signed one). `SSL_CERT_FILE`, when set, replaces the system's.
    pub fn http_root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.http.roots.push(pem.to_vec());
        self
    }

    /// The client's own PEM certificate chain and private key for `https://…` stores whose
    /// server asks for one (mutual TLS: `gdid serve --tls-client-ca`). Unless set, the files
    /// named by the `GDID_TLS_CLIENT_CERT` and `GDID_TLS_CLIENT_KEY` environment variables, if
    /// both are.
    pub fn http_client_certificate_pem(mut self, chain_pem: &[u8], key_pem: &[u8]) -> Self {
        self.http.identity = Some((chain_pem.to_vec(), key_pem.to_vec()));
        self
    }

    /// Opens the store of `url`, as [`Store::open`] does.
    ///
    /// # Errors
    ///
    /// As [`Store::open`]; [`StoreError::AuthorityNumber`] for an
    /// [`authority`](Self::authority) above 15; [`StoreError::Unnumbered`] for an authority
    /// asked of an [`unnumbered`](Self::unnumbered) store.
    pub async fn open(&self, url: &str) -> Result<Store, StoreError> {
        let asked = self.authority;
        check_number(url, asked)?;
        self.check_unnumbered(url)?;
        let (label, backend) = self.connect(url, false, !self.create_nothing).await?;
        if self.unnumbered {
            return Ok(Store::unnumbered(label, backend));
        }
        let number =
            claim(backend.record(), asked)
                .await
                .map_err(|source| StoreError::Authority {
                    url: label.clone(),
                    source,
                })?;
        Ok(Store::numbered(label, backend, number))
    }

    /// Reads and judges the settings of `url`'s server, as [`Store::check`] does, but without
    /// reading or recording an authority number, and without needing the schema: nothing is
    /// created, as [`create_nothing`](Self::create_nothing) says (a missing SQLite file is an
    /// error; a standby, which takes no writes, is checked too): what `gdid check --store URL`
    /// runs.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let report = gdid::Store::options().check("memory:").await?;
    /// assert!(!report.is_safe());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open) for the URL, but no [`StoreError::Authority`];
    /// [`StoreError::Check`] when the server cannot be asked.
    pub async fn check(&self, url: &str) -> Result<Durability, StoreError> {
        // Nothing is created: a read-only standby is asked as any server; one that cannot be
        // reached is refused at once.
        let (label, backend) = self.connect(url, false, false).await?;
        let report = backend.durability().await;
        report.map_err(|failed| StoreError::Check {
            url: label,
            kind: failed.kind,
            source: failed.source,
        })
    }

    /// Opens the stores of `urls` as the authorities of one generator, in preference order
    /// ([`Stores::block_generator`](crate::Stores::block_generator)), by the rules of
    /// `gdid_engine::backend::numbering`: each store is the authority recorded in it, or the one
    /// [`authorities`](Self::authorities) asks for (refused when its record says otherwise); a
    /// fresh store takes the lowest number, from 1, that no store listed with it holds (fresh
    /// stores in the order of their URLs, whatever the order given, so that processes listing
    /// them in other orders at once agree); two stores never share a number. With several URLs,
    /// a store that cannot be reached now is opened to connect on first use: it serves when
    /// [`authorities`](Self::authorities) gives its number (checked when it answers), and is left
    /// out otherwise ([`Stores::left_out`](crate::Stores::left_out)), and then a store with no
    /// record is given no number (it might take the unread store's). A single URL must be
    /// reachable.
    ///
    /// ```
    /// use gdid::IdGenerator;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let stores = gdid::Store::open_all(&["memory:primary", "memory:standby"]).await?;
    /// let ids = stores.block_generator("shop", "orders").build()?; // fails over in that order
    /// assert_eq!(ids.next_id().await?.authority(), 1);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open) for each URL (a single URL: as [`open`](Self::open));
    /// [`StoreError::NoStores`]; [`StoreError::AuthorityCount`] when
    /// [`authorities`](Self::authorities) gives another count of numbers than of URLs;
    /// [`StoreError::Numbers`] when the numbers cannot be settled (an
    /// [`AuthorityError::Number`](crate::AuthorityError::Number) for a conflict);
    /// [`StoreError::Unnumbered`] for authorities asked of [`unnumbered`](Self::unnumbered)
    /// stores.
    pub async fn open_all<U: AsRef<str>>(&self, urls: &[U]) -> Result<crate::Stores, StoreError> {
        if self.unnumbered {
            if urls.is_empty() {
                return Err(StoreError::NoStores);
            }
            let mut stores = Vec::with_capacity(urls.len());
            for url in urls {
                let store = self.open(url.as_ref()).await?;
                stores.push((store.label().to_owned(), Some(store)));
            }
            return Ok(crate::Stores::of(stores));
        }
        // One number per store, or none: a single number given for several stores (`authority`)
        // is refused, never dropped.
        let asked: Vec<Option<u8>> = match (&self.authorities, self.authority) {
            (Some(numbers), _) if numbers.len() == urls.len() => {
                numbers.iter().copied().map(Some).collect()
            }
            (None, Some(number)) if urls.len() == 1 => vec![Some(number)],
            (None, None) => vec![None; urls.len()],
            (numbers, _) => {
                return Err(StoreError::AuthorityCount {
                    numbers: numbers.as_ref().map_or(1, Vec::len),
                    stores: urls.len(),
                });
            }
        };
        if urls.len() <= 1 {
            let url = urls.first().ok_or(StoreError::NoStores)?.as_ref();
            let store = OpenOptions {
                authority: asked[0],
                ..self.clone()
            }
            .open(url)
            .await?;
            return Ok(crate::Stores::of(vec![(
                store.label().to_owned(),
                Some(store),
            )]));
        }
        for (url, asked) in urls.iter().zip(&asked) {
            check_number(url.as_ref(), *asked)?;
        }
        let mut opened = Vec::with_capacity(urls.len());
        for url in urls {
            opened.push(self.connect(url.as_ref(), true, true).await?);
        }
        // The stores are numbered in the order of their labels, not the order given: two
        // processes listing the same fresh stores in other orders at once then give them the
        // same numbers. (Each in the order given, the one would record 1 in one store and the
        // other 1 in the other, and the two stores could never be listed together again.)
        let mut by_label: Vec<usize> = (0..opened.len()).collect();
        by_label.sort_by(|&i, &j| opened[i].0.cmp(&opened[j].0));
        let records: Vec<_> = by_label
            .iter()
            .map(|&i| (opened[i].1.record(), asked[i]))
            .collect();
        let sorted = gdid_engine::backend::numbering::assign(&records)
            .await
            .map_err(|source| StoreError::Numbers {
                urls: opened.iter().map(|(label, _)| label.clone()).collect(),
                source,
            })?;
        let mut numbers = vec![None; opened.len()];
        for (&i, number) in by_label.iter().zip(sorted) {
            numbers[i] = number;
        }
        Ok(crate::Stores::of(
            opened
                .into_iter()
                .zip(numbers)
                .map(|((label, backend), number)| {
                    let store = number.map(|n| Store::numbered(label.clone(), backend, n));
                    (label, store)
                })
                .collect(),
        ))
    }

    /// Refuses an authority asked of an [`unnumbered`](Self::unnumbered) store.
    fn check_unnumbered(&self, url: &str) -> Result<(), StoreError> {
        match (self.unnumbered, self.authority, &self.authorities) {
            (false, _, _) | (true, None, None) => Ok(()),
            _ => Err(StoreError::Unnumbered {
                url: redact(url.trim()),
                what: "an authority number cannot be asked for as well",
            }),
        }
    }

    /// The store of `url` (its label and backend), connected and (with `create`) its schema
    /// created; `lazy`: set up to connect on first use when it cannot be reached now; without
    /// `create`, nothing is created (no SQLite file, no table). The one place that asks which
    /// kind of store a URL names.
    async fn connect(
        &self,
        url: &str,
        lazy: bool,
        create: bool,
    ) -> Result<(String, Arc<dyn Backend>), StoreError> {
        #[cfg(not(any(feature = "sqlite", feature = "mysql", feature = "postgres")))]
        let _ = create; // only a SQL store creates anything on opening
        let url = url.trim();
        let label = redact(url);
        let (scheme, rest) = crate::url::scheme_of(url)?;
        let backend: Arc<dyn Backend> = match scheme {
            Scheme::Memory => crate::memory::MemoryBackend::open(rest, &label, lazy),
            #[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
            Scheme::Sqlite | Scheme::MySql | Scheme::Postgres => {
                let store = crate::open_sql::SqlBackend::open(
                    scheme,
                    url,
                    &label,
                    lazy,
                    create,
                    self.max_connections,
                )
                .await?;
                Arc::new(crate::database::Database::new(store))
            }
            #[cfg(feature = "mongodb")]
            Scheme::MongoDb => {
                let database = self
                    .default_mongodb_database
                    .as_deref()
                    .unwrap_or(crate::open_mongo::DEFAULT_DATABASE);
                let collection = self
                    .mongodb_collection
                    .as_deref()
                    .unwrap_or(crate::open_mongo::COUNTERS);
                let store =
                    crate::open_mongo::MongoBackend::open(url, &label, database, collection, lazy)
                        .await?;
                Arc::new(crate::database::Database::new(store))
            }
            #[cfg(feature = "http")]
            Scheme::Http => crate::open_http::HttpBackend::open(
                url,
                &label,
                self.http.token.as_deref(),
                &self.http.roots,
                self.http.identity.as_ref(),
            )?,
            // `scheme_of` refused the schemes of features this build lacks.
            #[allow(unreachable_patterns)]
            scheme => return Err(crate::url::feature_off(url, scheme)),
        };
        Ok((label, backend))
    }
}

/// Refuses an authority number above 15 for the store of `url`.
fn check_number(url: &str, asked: Option<u8>) -> Result<(), StoreError> {
    match asked {
        Some(number) if number > gdid_core::AUTHORITY_MAX => Err(StoreError::AuthorityNumber {
            url: redact(url.trim()),
            number,
        }),
        _ => Ok(()),
    }
}
