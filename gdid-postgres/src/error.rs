//! Raising an SQL error: its code, its message, and a hint when one helps.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises an `ERROR` of `code` saying `message` (and `hint`): the statement fails, and the
/// transaction with it.
#[track_caller]
pub(crate) fn raise(code: PgSqlErrorCode, message: String, hint: Option<&str>) -> ! {
    let mut report = ErrorReport::new(code, message, "gdid");
    if let Some(hint) = hint {
        report = report.set_hint(hint);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("an ERROR does not return")
}
