//! [`Store::check`]: whether a store's acknowledged blocks survive a crash and a failover.
#![cfg(feature = "engine")]

use gdid_engine::durability::Durability;

use crate::{Store, StoreError};

impl Store {
    /// Reads the settings the store's uniqueness relies on from its server, and judges each
    /// ([`Verdict`](crate::Verdict)): whether a block it acknowledged can be lost, or its ids
    /// issued again, after a crash or a failover. `gdid check --store URL` prints it.
    ///
    /// | store | settings |
    /// |---|---|
    /// | PostgreSQL | `fsync`, `full_page_writes`, `synchronous_commit` (as the store's sessions have it), `synchronous_standby_names`, each streaming standby's `sync_state`, whether the server is a standby |
    /// | MariaDB, MySQL | `innodb_flush_log_at_trx_commit`, `sync_binlog` (with a binary log), `read_only`, whether it replicates from another, its replicas and semi-synchronous replication (enabled, acknowledging replicas, wait point, timeout) |
    /// | SQLite | the file (in memory, or on a file system in memory), `journal_mode`, `synchronous` |
    /// | MongoDB | the write concern blocks are written with (`w: "majority", j: true`, always), the server's role |
    /// | `memory:` | issued again by the next process |
    /// | `http://` | unknown here: check the store behind `gdid serve` |
    ///
    /// ```
    /// use gdid::Verdict;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let report = gdid::Store::open("memory:").await?.check().await?;
    /// assert_eq!(report.worst(), Verdict::IssuedAgain); // nothing outlives the process
    ///
    /// let file = std::env::temp_dir().join(format!("check-{}.sqlite", std::process::id()));
    /// let store = gdid::Store::open(&format!("sqlite:{}", file.display())).await?;
    /// let report = store.check().await?;
    /// let mode = report.settings.iter().find(|s| s.name == "journal_mode").unwrap();
    /// assert_eq!((mode.value.as_str(), mode.verdict), ("wal", Verdict::Safe));
    /// # std::fs::remove_file(&file).ok();
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Check`] when the server cannot be asked.
    pub async fn check(&self) -> Result<Durability, StoreError> {
        let report = self.backend().durability();
        report.await.map_err(|failed| StoreError::Check {
            url: self.label().to_owned(),
            kind: failed.kind,
            source: failed.source,
        })
    }
}
