//! A counter row whose era is past the last one (`u32::MAX`) is exhausted, whatever the era
//! holds: at `i64::MAX`, the rollover must not overflow the column (PostgreSQL's SQLSTATE 22003
//! was a store failure, MySQL's a corrupt row, SQLite's a REAL era), and the row is left as it is.

mod common;

use common::{execute, fresh_scope, urls};
use gdid_engine::{Authority, AuthorityError, backend::STORED_COUNTER_MAX};
use gdid_sql::SqlAuthority;

#[tokio::test]
async fn an_era_past_the_last_is_exhausted_even_at_the_largest_stored_integer() {
    for (dialect, url) in urls() {
        let authority = SqlAuthority::open(&url).await.unwrap();
        let number = Authority::number(&authority);
        let scope = fresh_scope("eras");
        for (era, next) in [
            (i64::MAX, STORED_COUNTER_MAX + 1), // the next block rolls the era over
            (i64::MAX, 1),
            (i64::from(u32::MAX) + 1, STORED_COUNTER_MAX + 1),
        ] {
            authority.allocate(&scope, "ids", 1).await.unwrap();
            execute(
                authority.store(),
                format!(
                    "UPDATE gdid_counters SET era = {era}, next_counter = {next} \
                     WHERE authority = {number} AND scope_name = '{scope}' \
                     AND sequence_name = 'ids'"
                ),
            )
            .await;
            // Twice: the first refusal left the row as it was.
            for _ in 0..2 {
                match authority.allocate(&scope, "ids", 1).await {
                    Err(AuthorityError::Exhausted) => {}
                    other => panic!("{dialect}: era {era}, next {next} gave {other:?}"),
                }
            }
            execute(
                authority.store(),
                format!(
                    "UPDATE gdid_counters SET era = 0, next_counter = 1 \
                     WHERE authority = {number} AND scope_name = '{scope}' \
                     AND sequence_name = 'ids'"
                ),
            )
            .await;
        }
    }
}
