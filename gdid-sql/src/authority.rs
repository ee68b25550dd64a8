//! [`SqlAuthority`]: a GDID authority whose counters live in a SQL table.

use gdid_core::AUTHORITY_MAX;
#[cfg(doc)]
use gdid_engine::Authority;
use gdid_engine::backend::numbering::{NumberCheck, claim};
use gdid_engine::{
    AuthorityError,
    backend::{
        Allocations, CounterFields, CounterKey, CounterStart, CounterStore, Numbering,
        StoredCounter, StoredInt,
    },
    plumbing::redact,
};

use std::sync::Arc;

use gdid_engine::backend::lineage::Lineage;
use tokio::sync::OnceCell;

use crate::counters;
use crate::error::Error;
use crate::lineage::{self, LineageSql};
use crate::numbering::SqlNumberRecord;
use crate::store::SqlStore;

/// A GDID authority backed by the `gdid_counters` table of a MySQL/MariaDB, PostgreSQL or SQLite
/// database. Each block is committed before it is returned: a crash loses ids, never repeats them.
///
/// The store's authority number is recorded in it (`gdid_authority`) on first use and checked
/// before the first block of every authority made on it: a store is one authority, whatever
/// number a caller passes later (see `gdid_engine::backend::numbering`).
///
/// ```no_run
/// use gdid_engine::BlockGenerator;
/// use gdid_sql::SqlAuthority;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let authority = SqlAuthority::open("sqlite:ids.sqlite").await?; // creates the tables; number 1
/// let ids = BlockGenerator::builder("shop", "order").authority(authority).build()?;
/// println!("{}", ids.next_id().await?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqlAuthority {
    store: SqlStore,
    numbering: Numbering<SqlNumberRecord>,
    /// The server's lineage SQL, once known (clones share it).
    lineage: Arc<OnceCell<Option<LineageSql>>>,
}

impl SqlAuthority {
    /// Connects to `url` (see [`SqlStore::connect`]), creates the tables if missing, and makes
    /// the store's authority: the number recorded in it, or, on first use, the number its
    /// counters already use, or 1 (recorded before this returns).
    ///
    /// # Errors
    ///
    /// As [`SqlStore::connect`] and [`ensure_schema`](Self::ensure_schema);
    /// [`Error::Authority`] when the store's number cannot be read or settled.
    pub async fn open(url: &str) -> Result<SqlAuthority, Error> {
        let store = SqlStore::connect(url).await?;
        SqlAuthority::of_store(store, &redact(url)).await
    }

    /// Connects to `url` (see [`SqlStore::connect`]), creates the tables if missing, and makes
    /// authority `number` of it: recorded in the store on first use, and refused if the store is
    /// recorded as another number.
    ///
    /// # Errors
    ///
    /// As [`SqlStore::connect`] and [`ensure_schema`](Self::ensure_schema);
    /// [`Error::AuthorityNumber`] above 15; [`Error::Authority`] with
    /// [`AuthorityError::Number`] when the store is another authority.
    pub async fn connect(url: &str, number: u8) -> Result<SqlAuthority, Error> {
        let store = SqlStore::connect(url).await?;
        let authority = SqlAuthority::new(store, number, &redact(url))?;
        authority.ensure_schema().await?;
        let numbering = &authority.numbering;
        numbering.check().ensure(numbering.record()).await?;
        Ok(authority)
    }

    /// The authority of an open store (as [`open`](Self::open)); `label` names it in errors and
    /// logs.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open).
    pub async fn of_store(store: SqlStore, label: &str) -> Result<SqlAuthority, Error> {
        let record = SqlNumberRecord::new(store.clone(), label);
        record.ensure_schema().await.map_err(Error::Schema)?;
        let number = claim(&record, None).await?;
        Ok(SqlAuthority {
            store,
            numbering: Numbering::new(record, NumberCheck::made(number), label),
            lineage: Arc::default(),
        })
    }

    /// Authority `number` on an open store; `label` names it in errors and logs. Nothing is sent
    /// yet: the number is checked against the store's record (or recorded) before the first
    /// block, and a store recorded as another number fails every allocation with
    /// [`AuthorityError::Number`].
    ///
    /// # Errors
    ///
    /// [`Error::AuthorityNumber`] above 15.
    pub fn new(store: SqlStore, number: u8, label: &str) -> Result<SqlAuthority, Error> {
        if number > AUTHORITY_MAX {
            return Err(Error::AuthorityNumber(number));
        }
        let record = SqlNumberRecord::new(store.clone(), label);
        Ok(SqlAuthority {
            store,
            numbering: Numbering::new(record, NumberCheck::new(number), label),
            lineage: Arc::default(),
        })
    }

    /// Creates the counter table and the number record if they are missing. Idempotent, and
    /// safe to run from many processes at once.
    ///
    /// # Errors
    ///
    /// [`Error::Schema`] with the driver's error.
    pub async fn ensure_schema(&self) -> Result<(), Error> {
        let record = self.numbering.record();
        record.ensure_schema().await.map_err(Error::Schema)
    }

    /// Where the store keeps its authority number.
    pub fn number_record(&self) -> &SqlNumberRecord {
        self.numbering.record()
    }

    /// The store.
    pub fn store(&self) -> &SqlStore {
        &self.store
    }

    /// The SQL of the server's lineage (`None` for SQLite), asked of the server once, when the
    /// store record is also settled on it ([`lineage::settle`]).
    async fn lineage(&self) -> Counters<Option<&LineageSql>> {
        let lineage = self
            .lineage
            .get_or_try_init(|| async {
                let lineage = LineageSql::of(&self.store).await?;
                if let Some(lineage) = &lineage {
                    lineage::settle(&self.store, lineage).await?;
                }
                Ok(lineage)
            })
            .await
            .map_err(counters::driver_error)?;
        Ok(lineage.as_ref())
    }

    /// The store, with its server's lineage ([`SqlAuthority::lineage`]).
    async fn on_server(&self) -> Counters<counters::OnServer<'_>> {
        Ok(counters::OnServer {
            store: &self.store,
            lineage: self.lineage().await?,
        })
    }
}

/// What the statements of `counters.rs` return.
type Counters<T> = Result<T, AuthorityError>;

/// The store side of the authority: the statements of `counters.rs`; the rules are gdid-engine's
/// ([`reserve`](gdid_engine::backend::reserve)), which make it an [`Authority`] and a
/// [`CounterRow`](gdid_engine::backend::CounterRow).
impl CounterStore for SqlAuthority {
    const FIELDS: CounterFields = counters::FIELDS;

    type Numbers = SqlNumberRecord;

    fn numbering(&self) -> &Numbering<SqlNumberRecord> {
        &self.numbering
    }

    fn max_sequences_per_scope(&self) -> Option<u64> {
        self.store.max_sequences_per_scope()
    }

    async fn sequences_beside(&self, key: &CounterKey<'_>) -> Counters<u64> {
        counters::sequences_beside(&self.store, key).await
    }

    fn record_name(&self, key: &CounterKey<'_>) -> String {
        counters::row_name(key)
    }

    async fn advance(
        &self,
        key: &CounterKey<'_>,
        size: i64,
        at: Allocations,
    ) -> Counters<Option<[StoredInt; 2]>> {
        counters::advance(self.on_server().await?, key, size, at).await
    }

    async fn raise(&self, key: &CounterKey<'_>, era: i64, next: i64) -> Counters<bool> {
        counters::raise(self.on_server().await?, key, era, next).await
    }

    async fn lower(&self, key: &CounterKey<'_>, era: i64, from: i64, to: i64) -> Counters<bool> {
        counters::lower(self.on_server().await?, key, era, from, to).await
    }

    async fn lineage(&self, key: &CounterKey<'_>) -> Counters<Lineage> {
        counters::lineage_of(self.on_server().await?, key).await
    }

    async fn records(&self) -> Counters<Vec<StoredCounter>> {
        counters::records(&self.store).await
    }

    async fn spellings(&self, key: &CounterKey<'_>) -> Counters<Vec<(String, String)>> {
        counters::spellings(&self.store, key).await
    }

    async fn read(&self, key: &CounterKey<'_>) -> Counters<Option<[StoredInt; 2]>> {
        counters::read(&self.store, key).await
    }

    async fn insert_if_absent(&self, key: &CounterKey<'_>, start: CounterStart) -> Counters<()> {
        // A row new here starts at the store's floor era once the store record is this
        // server's: settled first (a switch since this authority first reached the server).
        if let Some(lineage) = self.lineage().await? {
            lineage::settle(&self.store, lineage)
                .await
                .map_err(counters::driver_error)?;
        }
        counters::create_row(&self.store, key, start).await
    }
}
