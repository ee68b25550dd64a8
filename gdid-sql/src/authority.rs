//! [`SqlAuthority`]: a GDID authority whose counters live in a SQL table.

use gdid_core::AUTHORITY_MAX;
use gdid_core::generator::numbering::{NumberCheck, claim};
use gdid_core::generator::{Authority, AuthorityError, Block, NameKind, redact, validate_name};

use crate::counters::{self, RowStart, size_sql};
use crate::error::Error;
use crate::numbering::SqlNumberRecord;
use crate::store::SqlStore;

/// A GDID authority backed by the `gdid_counters` table of a MySQL/MariaDB, PostgreSQL or SQLite
/// database. Each block is committed before it is returned: a crash loses ids, never repeats them.
///
/// The store's authority number is recorded in it (`gdid_authority`) on first use and checked
/// before the first block of every authority made on it: a store is one authority, whatever
/// number a caller passes later (see `gdid_core::generator::numbering`).
///
/// ```no_run
/// use gdid_core::generator::BlockGenerator;
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
    record: SqlNumberRecord,
    check: NumberCheck,
    label: String,
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
        authority.check.ensure(&authority.record).await?;
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
            record,
            check: NumberCheck::made(number),
            label: label.to_owned(),
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
        Ok(SqlAuthority {
            record: SqlNumberRecord::new(store.clone(), label),
            store,
            check: NumberCheck::new(number),
            label: label.to_owned(),
        })
    }

    /// Creates the counter table and the number record if they are missing. Idempotent, and
    /// safe to run from many processes at once.
    ///
    /// # Errors
    ///
    /// [`Error::Schema`] with the driver's error.
    pub async fn ensure_schema(&self) -> Result<(), Error> {
        self.record.ensure_schema().await.map_err(Error::Schema)
    }

    /// Where the store keeps its authority number.
    pub fn number_record(&self) -> &SqlNumberRecord {
        &self.record
    }

    /// The store.
    pub fn store(&self) -> &SqlStore {
        &self.store
    }
}

impl Authority for SqlAuthority {
    fn number(&self) -> u8 {
        self.check.number()
    }

    fn label(&self) -> String {
        self.label.clone()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        let number = self
            .check
            .before_block(&self.record, scope, sequence)
            .await?;
        self.reserve(number, scope, sequence, size, RowStart::Fresh)
            .await
    }
}

impl SqlAuthority {
    /// Reserves `size` counters of the row keyed (`key`, scope, sequence): the block of authority
    /// `key`, or, with key [`COUNTER_KEY`], values of the store's one-at-a-time counter; a missing
    /// row is created as `start` says.
    pub(crate) async fn reserve(
        &self,
        key: u8,
        scope: &str,
        sequence: &str,
        size: u64,
        start: RowStart,
    ) -> Result<Block, AuthorityError> {
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        let size_sql = size_sql(size)?;
        let row = counters::row_name(key, scope, sequence);
        let in_row = |error| counters::in_row(&row, error);
        // The first use creates the row; an insert racing ours is ignored, and the update is
        // tried again. A row deleted between the two is created again: twice at most.
        for _ in 0..3 {
            let sql_key = i16::from(key);
            if let Some((era, next)) =
                counters::reserve(&self.store, sql_key, scope, sequence, size_sql)
                    .await
                    .map_err(in_row)?
            {
                return Block::reserved_before(key, era, next, size).map_err(in_row);
            }
            counters::create_row(&self.store, sql_key, scope, sequence, start).await?;
        }
        Err(AuthorityError::Corrupt(format!("{row} keeps disappearing")))
    }
}

/// The key of the one-at-a-time counters' rows, whatever the store's authority number: their
/// values are the store's, not an authority's (see [`SqlCounter`](crate::SqlCounter)).
pub(crate) const COUNTER_KEY: u8 = gdid_core::generator::numbering::COUNTER_KEY;
