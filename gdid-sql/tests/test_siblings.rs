//! The one-at-a-time counter's row (key 0) starts after the sequence's other rows: a counter
//! made before it was keyed 0 handed out values from an authority's row. A sibling row that is
//! corrupt says nothing about how far it went: the counter must refuse to start (the corrupt
//! row named with its field), as MongoDB's does, and never start below the values it handed out.

mod common;

use common::{execute, fresh_scope, urls};
use gdid_engine::{Authority, Error, IdGenerator, OneAtATime};
use gdid_sql::SqlAuthority;

#[tokio::test]
async fn a_corrupt_sibling_row_is_named_not_skipped_when_the_counter_row_is_created() {
    for (dialect, url) in urls() {
        let authority = SqlAuthority::open(&url).await.unwrap();
        let number = gdid_engine::Authority::number(&authority);
        let other = if number == 2 { 3 } else { 2 };
        let scope = fresh_scope("siblings");
        // A counter of before the key 0 handed out 1 to 50 from the authority's row…
        authority.allocate(&scope, "legacy", 50).await.unwrap();
        // …another authority's row of the sequence is at 10…
        execute(
            authority.store(),
            format!(
                "INSERT INTO gdid_counters (authority, scope_name, sequence_name, era, \
                 next_counter) VALUES ({other}, '{scope}', 'legacy', 0, 10)"
            ),
        )
        .await;
        // …and the authority's row is corrupted.
        execute(
            authority.store(),
            format!(
                "UPDATE gdid_counters SET next_counter = -1 WHERE authority = {number} \
                 AND scope_name = '{scope}' AND sequence_name = 'legacy'"
            ),
        )
        .await;
        let counter = OneAtATime::new(authority.clone(), &scope, "legacy");
        match counter.next_id().await {
            Err(Error::Corrupt(message)) => assert!(
                message.contains(&format!("authority {number},"))
                    && message.contains("next_counter"),
                "{dialect}: {message}"
            ),
            other => panic!("{dialect}: a corrupt sibling row gave {other:?}"),
        }
    }
}
