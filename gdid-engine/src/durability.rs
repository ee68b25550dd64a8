//! Whether a store's acknowledged blocks survive a crash and a failover: the server settings
//! uniqueness relies on, each read from the server and judged ([`Durability`]; `gdid check`).
//!
//! A block is handed out once the write that reserved it is acknowledged. What the server does
//! with that write afterwards decides whether its ids can come back:
//!
//! - **A crash** that loses an acknowledged write (PostgreSQL with `fsync = off`, MariaDB with
//!   `innodb_flush_log_at_trx_commit = 2`, a SQLite file in memory) leaves the counter where it
//!   was, on the same server: nothing can tell, and the block is issued again
//!   ([`Verdict::IssuedAgain`]).
//! - **A failover** to a replica that had not received the write loses it too, but the replica
//!   is another lineage: GDIDs move to a new era ([`lineage`](crate::backend::lineage)) and stay
//!   unique, while the `u64` counters, ranges and windows refuse to issue until an operator skips
//!   them forward ([`Verdict::LostOnFailover`]). A synchronous replica, or MongoDB's majority write
//!   concern, loses nothing ([`Verdict::Safe`]).
//!
//! ```
//! use gdid_engine::durability::{Durability, Setting, Verdict};
//!
//! let report = Durability::new(
//!     "PostgreSQL 15.19, primary",
//!     vec![
//!         Setting::new("fsync", "on", Verdict::Safe, "each commit is flushed to disk"),
//!         Setting::new("standbys", "1 asynchronous", Verdict::LostOnFailover, "a failover …"),
//!     ],
//! );
//! assert!(!report.is_safe());
//! assert_eq!(report.worst(), Verdict::LostOnFailover);
//! assert_eq!(report.at_risk().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["standbys"]);
//! ```

use std::fmt;

/// What a setting means for the blocks a store acknowledged, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Nothing acknowledged is lost, by a crash or by a failover.
    Safe,
    /// It could not be judged here (the server did not say, or another place decides: the
    /// primary of a standby, the server behind `gdid serve`).
    Unknown,
    /// A failover can lose acknowledged blocks. GDIDs stay unique (the new primary is another
    /// lineage: the counters move to a new era), but one-at-a-time counters, ranges and windows
    /// refuse to issue until `gdid sequences skip-ranges` / `skip-windows` or a raised floor
    /// moves them past what was lost.
    LostOnFailover,
    /// A crash can lose acknowledged blocks on the same server, where nothing can tell: their
    /// ids are issued again.
    IssuedAgain,
}

impl Verdict {
    /// A word or two for a report: `safe`, `unknown`, `lost on failover`, `issued again`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Unknown => "unknown",
            Verdict::LostOnFailover => "lost on failover",
            Verdict::IssuedAgain => "issued again",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One setting, as the server reported it, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The setting's name as the server spells it (`fsync`, `innodb_flush_log_at_trx_commit`),
    /// or what was looked at (`standbys`, `replicas`, `write concern`).
    pub name: String,
    /// Its value as read.
    pub value: String,
    /// What it means for acknowledged blocks.
    pub verdict: Verdict,
    /// Why, in a sentence: what the server does with an acknowledged write, and what to change
    /// when it is not safe.
    pub meaning: String,
}

impl Setting {
    /// A judged setting.
    pub fn new(
        name: impl Into<String>,
        value: impl Into<String>,
        verdict: Verdict,
        meaning: impl Into<String>,
    ) -> Setting {
        Setting {
            name: name.into(),
            value: value.into(),
            verdict,
            meaning: meaning.into(),
        }
    }
}

/// A store's server and every setting its uniqueness relies on, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Durability {
    /// The server: its kind, version and role (`PostgreSQL 15.19, primary`).
    pub server: String,
    /// The settings, in the order they were read.
    pub settings: Vec<Setting>,
}

impl Durability {
    /// A report of `server` with `settings`.
    pub fn new(server: impl Into<String>, settings: Vec<Setting>) -> Durability {
        Durability {
            server: server.into(),
            settings,
        }
    }

    /// Whether every setting is [`Verdict::Safe`] (and there is at least one).
    pub fn is_safe(&self) -> bool {
        self.worst() == Verdict::Safe
    }

    /// The worst verdict of its settings; [`Verdict::Unknown`] when there are none.
    pub fn worst(&self) -> Verdict {
        self.settings
            .iter()
            .map(|setting| setting.verdict)
            .max()
            .unwrap_or(Verdict::Unknown)
    }

    /// The settings that are not [`Verdict::Safe`].
    pub fn at_risk(&self) -> impl Iterator<Item = &Setting> {
        self.settings
            .iter()
            .filter(|setting| setting.verdict != Verdict::Safe)
    }
}

/// The report as `gdid check` prints it: the server, then each setting with its verdict and
/// meaning.
impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "server: {}", self.server)?;
        for setting in &self.settings {
            writeln!(
                f,
                "  {:<16} {} = {}",
                setting.verdict.label(),
                setting.name,
                setting.value
            )?;
            writeln!(f, "  {:<16} {}", "", setting.meaning)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_verdict_decides() {
        let setting = |verdict| Setting::new("x", "1", verdict, "");
        let report = Durability::new("s", vec![setting(Verdict::Safe)]);
        assert!(report.is_safe());
        for worse in [
            Verdict::Unknown,
            Verdict::LostOnFailover,
            Verdict::IssuedAgain,
        ] {
            let report = Durability::new("s", vec![setting(worse), setting(Verdict::Safe)]);
            assert!(!report.is_safe());
            assert_eq!(report.worst(), worse);
            assert_eq!(report.at_risk().count(), 1);
        }
        assert!(
            !Durability::new("s", vec![]).is_safe(),
            "nothing read is no proof"
        );
    }

    #[test]
    fn the_report_names_each_setting_with_its_verdict() {
        let report = Durability::new(
            "PostgreSQL 15, primary",
            vec![Setting::new(
                "fsync",
                "off",
                Verdict::IssuedAgain,
                "turn it on",
            )],
        );
        assert_eq!(
            report.to_string(),
            "server: PostgreSQL 15, primary\n  issued again     fsync = off\n                   turn it on\n"
        );
    }
}
