//! Authority numbers belong to the store (hole 1 of the uniqueness issue).

use gdid_engine::backend::numbering::NumberConflict;
use gdid_engine::{Authority, AuthorityError};

use super::{Counters, fresh};

/// The first use of a store records its number (1 for a fresh store); reopened, it is the same.
/// An authority of another number on it is refused at its first block, every time, with the
/// recorded and the asked numbers, and reserves nothing. A store of before the record keeps the
/// number its counters use, and goes on where they were.
pub async fn authority_numbers_belong_to_the_store_not_to_the_caller<B: Counters>(backend: &B) {
    let store = backend.store();
    let place = backend.empty_place().await;
    let scope = fresh("numbers");

    let first = backend.open(&place).await;
    assert_eq!(first.number(), 1, "{store}: a fresh store is authority 1");
    let block = first.allocate(&scope, "s", 10).await.unwrap();
    assert_eq!(block.authority(), 1, "{store}");
    assert_eq!(
        backend.open(&place).await.number(),
        1,
        "{store}: reopened, the same number"
    );
    let again = backend.unchecked(&place, 1).await;
    assert_eq!(again.allocate(&scope, "s", 1).await.unwrap().start(), 11);

    let other = backend.unchecked(&place, 5).await;
    for _ in 0..2 {
        match other.allocate(&scope, "s", 10).await {
            Err(AuthorityError::Number(NumberConflict::Recorded {
                recorded, asked, ..
            })) => assert_eq!((recorded, asked), (1, 5), "{store}"),
            other => panic!("{store}: {other:?} instead of the recorded number's conflict"),
        }
    }
    assert_eq!(
        backend.counters_of(&first, 5).await,
        0,
        "{store}: authority 5 reserved nothing"
    );

    // A store of before the record: its counters say which authority it was.
    backend.forget_number(&first, 4).await;
    let old = backend.open(&place).await;
    assert_eq!(old.number(), 4, "{store}: the number its counters use");
    let next = old.allocate(&scope, "s", 1).await.unwrap();
    assert_eq!(
        (next.authority(), next.start()),
        (4, 12),
        "{store}: continued"
    );
}
