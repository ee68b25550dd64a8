//! SQLite's settings: the file (in memory, on a file system in memory), `journal_mode`,
//! `synchronous`.

use std::path::{Path, PathBuf};

use gdid_engine::durability::{Durability, Setting, Verdict};
use sqlx::{Row, SqlitePool};

/// What SQLite said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SqliteSettings {
    version: String,
    /// The main database's file; empty for a database in memory.
    file: String,
    /// The file system the file is on (`ext4`, `tmpfs`), where it could be found.
    file_system: Option<String>,
    journal_mode: String,
    /// `PRAGMA synchronous`: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
    synchronous: i64,
}

pub(super) async fn read(pool: &SqlitePool) -> Result<Durability, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    let version: String = sqlx::query_scalar("SELECT sqlite_version()")
        .fetch_one(&mut *connection)
        .await?;
    let file: String = sqlx::query("PRAGMA database_list")
        .fetch_all(&mut *connection)
        .await?
        .iter()
        .find(|row| row.try_get::<String, _>(1).is_ok_and(|name| name == "main"))
        .map(|row| row.try_get(2))
        .transpose()?
        .unwrap_or_default();
    let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut *connection)
        .await?;
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(&mut *connection)
        .await?;
    Ok(judge_sqlite(&SqliteSettings {
        version,
        file_system: file_system_of(Path::new(&file)),
        file,
        journal_mode,
        synchronous,
    }))
}

fn judge_sqlite(s: &SqliteSettings) -> Durability {
    let mut settings = Vec::new();
    let ram = s
        .file_system
        .as_deref()
        .filter(|fs| matches!(*fs, "tmpfs" | "ramfs"));
    settings.push(if s.file.is_empty() {
        Setting::new(
            "file",
            "(in memory)",
            Verdict::IssuedAgain,
            "the database lives in this process's memory: the next process issues every id \
             again; give a file",
        )
    } else if let Some(fs) = ram {
        Setting::new(
            "file",
            format!("{} ({fs})", s.file),
            Verdict::IssuedAgain,
            "the file is on a file system in memory: a reboot loses it, and every id is issued \
             again; keep it on a disk",
        )
    } else {
        Setting::new(
            "file",
            match &s.file_system {
                Some(fs) => format!("{} ({fs})", s.file),
                None => s.file.clone(),
            },
            Verdict::Safe,
            "a file on disk (copying it back from a backup brings old counters back: fence \
             after a restore)",
        )
    });
    let journal = s.journal_mode.to_ascii_lowercase();
    settings.push(match journal.as_str() {
        "wal" | "delete" | "truncate" | "persist" => Setting::new(
            "journal_mode",
            &journal,
            Verdict::Safe,
            "a crash rolls an unfinished write back, never a committed one",
        ),
        _ => Setting::new(
            "journal_mode",
            &journal,
            Verdict::IssuedAgain,
            "no journal on disk: a crash in the middle of a write can corrupt the counters; use \
             WAL",
        ),
    });
    let name = ["OFF", "NORMAL", "FULL", "EXTRA"]
        .get(usize::try_from(s.synchronous).unwrap_or(usize::MAX))
        .copied()
        .unwrap_or("?");
    settings.push(match s.synchronous {
        2 | 3 => Setting::new(
            "synchronous",
            name,
            Verdict::Safe,
            "each commit is flushed to disk before it is acknowledged",
        ),
        _ => Setting::new(
            "synchronous",
            name,
            Verdict::IssuedAgain,
            "commits are not flushed to disk each time: a power loss rolls the last ones back, \
             and their ids are issued again; use FULL",
        ),
    });
    Durability::new(format!("SQLite {}", s.version), settings)
}

/// The type of the file system `file` is on (`/proc/self/mounts`: the longest mount point
/// above it), `None` where that cannot be read (not Linux, or no such file).
fn file_system_of(file: &Path) -> Option<String> {
    let file = std::fs::canonicalize(file).ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let (_device, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            let point = PathBuf::from(unescape_mount_point(point));
            file.starts_with(&point)
                .then(|| (point.components().count(), kind.to_owned()))
        })
        .max_by_key(|(depth, _)| *depth)
        .map(|(_, kind)| kind)
}

/// A mount point as `/proc/self/mounts` writes it: space, tab, newline and backslash as octal
/// escapes (`\040`).
fn unescape_mount_point(point: &str) -> String {
    let mut out = String::with_capacity(point.len());
    let mut rest = point;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|digits| u8::from_str_radix(digits, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durability::verdict_of;

    fn safe_sqlite() -> SqliteSettings {
        SqliteSettings {
            version: "3.46.0".into(),
            file: "/var/lib/ids.sqlite".into(),
            file_system: Some("ext4".into()),
            journal_mode: "wal".into(),
            synchronous: 2,
        }
    }

    #[test]
    fn sqlite_verdicts() {
        assert!(judge_sqlite(&safe_sqlite()).is_safe());
        let judged = |change: Change| {
            let mut s = safe_sqlite();
            change(&mut s);
            judge_sqlite(&s)
        };
        type Change = fn(&mut SqliteSettings);
        let unsafe_changes: [(&str, Change); 6] = [
            ("file", |s| s.file.clear()),
            ("file", |s| s.file_system = Some("tmpfs".into())),
            ("journal_mode", |s| s.journal_mode = "memory".into()),
            ("journal_mode", |s| s.journal_mode = "off".into()),
            ("synchronous", |s| s.synchronous = 1),
            ("synchronous", |s| s.synchronous = 0),
        ];
        for (name, change) in unsafe_changes {
            let report = judged(change);
            assert_eq!(verdict_of(&report, name), Verdict::IssuedAgain, "{report}");
        }
        assert!(judged(|s| s.journal_mode = "delete".into()).is_safe());
    }

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape_mount_point("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(unescape_mount_point("/a\\\\b"), "/a\\\\b");
        assert_eq!(unescape_mount_point("/a\\134b"), "/a\\b");
    }
}
