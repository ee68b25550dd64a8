//! proptest strategies for [`Gdid`]s (feature `proptest`): for a user's property tests of code
//! that stores, sorts or sends ids.
//!
//! ```
//! use gdid_core::proptest::{any_gdid, increasing};
//! use proptest::prelude::*;
//!
//! proptest! {
//!     fn the_text_form_round_trips(id in any_gdid()) {
//!         prop_assert_eq!(id.to_string().parse::<gdid_core::Gdid>(), Ok(id));
//!     }
//!
//!     fn a_sorted_run_stays_sorted(ids in increasing(1..50)) {
//!         prop_assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
//!     }
//! }
//! // In a test module each function above is a `#[test]`; here they run when called.
//! the_text_form_round_trips();
//! a_sorted_run_stays_sorted();
//! ```

use core::ops::{Range, RangeInclusive};

use alloc::vec::Vec;
use proptest::prelude::*;

use crate::{AUTHORITY_MAX, COUNTER_MAX, Gdid};

/// Any id, every era, authority and counter possible, with extra weight on small eras and
/// counters (the ids a young deployment issues, and those the variable-length forms make
/// short).
pub fn any_gdid() -> impl Strategy<Value = Gdid> {
    ids(prop_oneof![0..300u32, any::<u32>()], 0..=AUTHORITY_MAX)
}

/// Ids of era `era`, any authority and counter.
pub fn gdid_of_era(era: u32) -> impl Strategy<Value = Gdid> {
    ids(Just(era), 0..=AUTHORITY_MAX)
}

/// Ids of authority `authority` (0 to 15), any era and counter.
///
/// # Panics
///
/// When `authority` is above 15 ([`AUTHORITY_MAX`]).
pub fn gdid_of_authority(authority: u8) -> impl Strategy<Value = Gdid> {
    assert!(
        authority <= AUTHORITY_MAX,
        "authority {authority} is above {AUTHORITY_MAX}"
    );
    ids(prop_oneof![0..300u32, any::<u32>()], authority..=authority)
}

/// Runs of `len` ids (a length in that range), strictly increasing: the ids one generator
/// hands out one after the other, across eras and authorities.
pub fn increasing(len: Range<usize>) -> impl Strategy<Value = Vec<Gdid>> {
    proptest::collection::btree_set(any_gdid(), len).prop_map(|ids| ids.into_iter().collect())
}

/// Ids of the eras of `era` and the authorities of `authority`, counters weighted as
/// [`any_gdid`] says.
fn ids(
    era: impl Strategy<Value = u32>,
    authority: RangeInclusive<u8>,
) -> impl Strategy<Value = Gdid> {
    let counter = prop_oneof![0..100_000u64, 0..=COUNTER_MAX];
    (era, authority, counter).prop_map(|(era, authority, counter)| {
        Gdid::from_parts(era, authority, counter).expect("every part is in its range")
    })
}
