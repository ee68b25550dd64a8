//! [`SqlAuthority`]: a GDID authority whose counters live in a SQL table.

use gdid_core::AUTHORITY_MAX;
use gdid_core::generator::{Authority, AuthorityError, Block, NameKind, validate_name};

use crate::counters::{self, size_sql};
use crate::error::Error;
use crate::store::{SqlStore, redact};

/// A GDID authority backed by the `gdid_counters` table of a MySQL/MariaDB, PostgreSQL or SQLite
/// database. Each block is committed before it is returned: a crash loses ids, never repeats them.
///
/// ```no_run
/// use gdid_core::generator::BlockGenerator;
/// use gdid_sql::SqlAuthority;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let authority = SqlAuthority::connect("sqlite:ids.sqlite", 1).await?; // creates the table
/// let ids = BlockGenerator::builder("shop", "order").authority(authority).build()?;
/// println!("{}", ids.next_id().await?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqlAuthority {
    store: SqlStore,
    number: u8,
    label: String,
}

impl SqlAuthority {
    /// Connects to `url` (see [`SqlStore::connect`]), creates the table if missing, and makes
    /// authority `number` of it.
    ///
    /// # Errors
    ///
    /// As [`SqlStore::connect`] and [`ensure_schema`](Self::ensure_schema);
    /// [`Error::AuthorityNumber`] above 15.
    pub async fn connect(url: &str, number: u8) -> Result<SqlAuthority, Error> {
        let store = SqlStore::connect(url).await?;
        let authority = SqlAuthority::new(store, number, &redact(url))?;
        authority.ensure_schema().await?;
        Ok(authority)
    }

    /// Authority `number` on an open store; `label` names it in errors and logs.
    ///
    /// # Errors
    ///
    /// [`Error::AuthorityNumber`] above 15.
    pub fn new(store: SqlStore, number: u8, label: &str) -> Result<SqlAuthority, Error> {
        if number > AUTHORITY_MAX {
            return Err(Error::AuthorityNumber(number));
        }
        Ok(SqlAuthority {
            store,
            number,
            label: label.to_owned(),
        })
    }

    /// Creates the counter table if it is missing. Idempotent, and safe to run from many
    /// processes at once.
    ///
    /// # Errors
    ///
    /// [`Error::Schema`] with the driver's error.
    pub async fn ensure_schema(&self) -> Result<(), Error> {
        counters::ensure_schema(&self.store)
            .await
            .map_err(Error::Schema)
    }

    /// The store.
    pub fn store(&self) -> &SqlStore {
        &self.store
    }
}

impl Authority for SqlAuthority {
    fn number(&self) -> u8 {
        self.number
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
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        let size_sql = size_sql(size)?;
        let row = counters::row_name(self.number, scope, sequence);
        let in_row = |error| counters::in_row(&row, error);
        // The first use creates the row; an insert racing ours is ignored, and the update is
        // tried again. A row deleted between the two is created again: twice at most.
        for _ in 0..3 {
            let number = i16::from(self.number);
            if let Some((era, next)) =
                counters::reserve(&self.store, number, scope, sequence, size_sql)
                    .await
                    .map_err(in_row)?
            {
                return Block::reserved_before(self.number, era, next, size).map_err(in_row);
            }
            counters::create_row(&self.store, number, scope, sequence).await?;
        }
        Err(AuthorityError::Corrupt(format!("{row} keeps disappearing")))
    }
}
