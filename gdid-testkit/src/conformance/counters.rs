//! Stored counters written behind an authority's back: the era rolls over at `COUNTER_MAX`, and a
//! counter no authority writes is a typed error naming it, never a block.

use gdid_core::COUNTER_MAX;
use gdid_engine::backend::STORED_COUNTER_MAX;
use gdid_engine::{Authority, AuthorityError, BLOCK_SIZE_MAX};

use super::{Counters, assert_fails_naming, fresh};

/// A counter set 5 below `COUNTER_MAX` in era 7: a block of 6 ends the era at `COUNTER_MAX`, the
/// next block starts era 8 at 0, and the one after follows it.
pub async fn the_era_rolls_over_at_counter_max<B: Counters>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(2).await, 2).await;
    let scope = fresh("rollover");
    authority.allocate(&scope, "s", 1).await.unwrap(); // creates the counter
    let near_max = i64::try_from(COUNTER_MAX - 5).unwrap();
    backend
        .set_counter(&authority, &scope, "s", 7, near_max)
        .await;
    let last_of_era = authority.allocate(&scope, "s", 6).await.unwrap();
    assert_eq!(
        (
            last_of_era.era(),
            last_of_era.start(),
            last_of_era.last().counter()
        ),
        (7, COUNTER_MAX - 5, COUNTER_MAX),
        "{store}"
    );
    let first_of_next = authority.allocate(&scope, "s", 10).await.unwrap();
    assert_eq!(
        (first_of_next.era(), first_of_next.start()),
        (8, 0),
        "{store}"
    );
    let then = authority.allocate(&scope, "s", 10).await.unwrap();
    assert_eq!((then.era(), then.start()), (8, 10), "{store}");
}

/// The largest block is a whole era, on every store: 2^60 ids from counter 0 of a new era, whose
/// next counter, 2^60, is the largest a store keeps; the next block starts the era after, and a
/// size of one more is refused before anything is written.
pub async fn the_largest_block_is_a_whole_era<B: Counters>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(2).await, 2).await;
    let scope = fresh("whole_era");
    let whole = authority.allocate(&scope, "s", BLOCK_SIZE_MAX).await;
    let whole = whole.unwrap_or_else(|e| panic!("{store}: {e}"));
    assert_eq!(
        (whole.era(), whole.start(), whole.last().counter()),
        (1, 0, COUNTER_MAX),
        "{store}"
    );
    let stored = backend.counter_text(&authority, &scope, "s").await;
    let refused = authority.allocate(&scope, "s", BLOCK_SIZE_MAX + 1).await;
    assert!(
        matches!(refused, Err(AuthorityError::InvalidSize(_))),
        "{store}: {refused:?}"
    );
    assert_eq!(
        backend.counter_text(&authority, &scope, "s").await,
        stored,
        "{store}: a refused size moved the counter"
    );
    let after = authority.allocate(&scope, "s", 1).await.unwrap();
    assert_eq!((after.era(), after.start()), (2, 0), "{store}");
}

/// A counter whose era is past the last one (`u32::MAX`) is exhausted, whatever the era holds:
/// at `i64::MAX` the rollover must not overflow the stored integer (a store failure, or a corrupt
/// record, on some stores), and the counter is left as it is, however often it is asked.
pub async fn an_era_past_the_last_is_exhausted_and_left_as_it_is<B: Counters>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(2).await, 2).await;
    let scope = fresh("eras");
    authority.allocate(&scope, "s", 1).await.unwrap(); // creates the counter
    let next_past_max = STORED_COUNTER_MAX + 1; // the next block rolls the era over
    for (era, next) in [
        (i64::MAX, next_past_max),
        (i64::MAX, 1),
        (i64::from(u32::MAX) + 1, next_past_max),
    ] {
        backend
            .set_counter(&authority, &scope, "s", era, next)
            .await;
        let stored = backend.counter_text(&authority, &scope, "s").await;
        for _ in 0..2 {
            match authority.allocate(&scope, "s", 1).await {
                Err(AuthorityError::Exhausted) => {}
                other => panic!("{store}: era {era}, next {next} gave {other:?}"),
            }
            assert_eq!(
                backend.counter_text(&authority, &scope, "s").await,
                stored,
                "{store}: era {era}, next {next}: the counter moved"
            );
        }
    }
}

/// A corrupt counter (negative, beyond the counter range, of another type, missing: each store
/// says which it can hold) is a typed error naming its row or document and its field, however
/// often it is asked, and is left as it is: the update used to move it toward valid-looking
/// values (a counter of -1 became 0, then 1, and id 1 was issued again).
pub async fn a_corrupt_counter_stays_corrupt_and_names_its_field<B: Counters>(backend: &B) {
    let store = backend.store();
    let authority = backend.connect(&backend.place(1).await, 1).await;
    let scope = fresh("corrupt");
    let cases = backend.counter_corruptions();
    assert!(cases.len() >= 3, "{store}: {cases:?}");
    for case in cases {
        authority.allocate(&scope, case, 1).await.unwrap();
        let names = backend
            .corrupt_counter(&authority, &scope, case, case)
            .await;
        let before = backend.counter_text(&authority, &scope, case).await;
        let what = format!("{store} {case}");
        let is_corrupt = |e: &AuthorityError| matches!(e, AuthorityError::Corrupt(_));
        let allocate = || authority.allocate(&scope, case, 5);
        assert_fails_naming(&what, 3, &names, is_corrupt, allocate).await;
        let after = backend.counter_text(&authority, &scope, case).await;
        assert_eq!(after, before, "{store} {case}: the corrupt counter moved");
    }
}
