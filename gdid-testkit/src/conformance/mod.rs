//! The conformance suite: each behaviour of an authority, a one-at-a-time counter, a sharded
//! layout and a window store written once, run against every store.
//!
//! A backend provides the store under test through the traits here (its "dialect" for the
//! suite): how to reach an authority of a number, how to create a sharded counter, how to get
//! window shards, and how to write behind their backs for the corrupt-data cases. Then one line
//! per store runs the suite, a `#[tokio::test]` per case, each visible in the test output as
//! `STORE::GROUP::CASE`:
//!
//! ```text
//! gdid_testkit::conformance!(sqlite {
//!     authority, counters, counter, numbers, processes => Sql::open("SQLite");
//!     sharded => Sharded::open("SQLite").await;
//!     windows => Shards::open("SQLite");
//! });
//! ```
//!
//! Each `$open` is an expression of type `Option<_>` (`None`: the store is not configured and the
//! test is skipped, see [`server`](crate::server)). The groups:
//!
//! | group | trait | cases |
//! |---|---|---|
//! | `authority` | [`StoreUnderTest`] | [`authority`] |
//! | `counters` | [`Counters`] | [`counters`]: stored counters written behind the authority |
//! | `counter` | [`Counters`] | [`counter`] |
//! | `numbers` | [`Counters`] | [`numbers`] |
//! | `sequences` | [`Counters`] whose authority is a `CounterStore` ([`sequences::Sequences`]) | [`sequences`]: floors, listing, spellings |
//! | `processes` | [`StoreUnderTest`] whose places are URLs (`String`): a worker process reaches them | [`processes`] |
//! | `sharded` | [`Ranges`] | [`sharded`] |
//! | `windows` | [`Windows`] | [`windows`] |

use std::future::Future;
use std::pin::Pin;

use gdid_engine::windows::WindowShard;
use gdid_engine::{Authority, IdGenerator, Pick, RangeLayout, backend::CounterRow};

pub mod authority;
pub mod counter;
pub mod counters;
pub mod numbers;
pub mod processes;
pub mod sequences;
pub mod sharded;
pub mod windows;

/// A store that keeps authorities: where an authority of each number lives, and how to reach it.
pub trait StoreUnderTest: Send + Sync + 'static {
    /// The store's authority.
    type Authority: Authority + Clone;
    /// Where a store is: a URL, a database and collection, an in-memory map.
    type Place: Clone + Send + Sync + 'static;

    /// The store's name in messages: `SQLite`, `MariaDB`, `PostgreSQL`, `MongoDB`, `memory`.
    fn store(&self) -> &str;

    /// The store of authority `number` for this test: the same place at every call with the same
    /// number, used by no other number (a store records its number).
    fn place(&self, number: u8) -> impl Future<Output = Self::Place> + Send;

    /// Authority `number` on `place`, through a connection (pool, client) of its own.
    fn connect(
        &self,
        place: &Self::Place,
        number: u8,
    ) -> impl Future<Output = Self::Authority> + Send;
}

/// A store whose counters the suite can read and write behind the authority's back, whose
/// authority number is recorded in it, and whose authority keeps one-at-a-time counters.
pub trait Counters: StoreUnderTest<Authority: CounterRow> {
    /// Sets the stored counter of (scope, sequence) of `authority` (its row or document exists).
    fn set_counter(
        &self,
        authority: &Self::Authority,
        scope: &str,
        sequence: &str,
        era: i64,
        next: i64,
    ) -> impl Future<Output = ()> + Send;

    /// The ways [`corrupt_counter`](Self::corrupt_counter) knows to corrupt a stored counter.
    fn counter_corruptions(&self) -> Vec<&'static str>;

    /// Corrupts the stored counter of (scope, sequence) of `authority` as `case` says; returns
    /// what the error must name (its row or document and its field).
    fn corrupt_counter(
        &self,
        authority: &Self::Authority,
        scope: &str,
        sequence: &str,
        case: &str,
    ) -> impl Future<Output = Vec<String>> + Send;

    /// The stored counter of (scope, sequence) of `authority` as text, to see it unchanged.
    fn counter_text(
        &self,
        authority: &Self::Authority,
        scope: &str,
        sequence: &str,
    ) -> impl Future<Output = String> + Send;

    /// A store with nothing in it: no counter, no recorded number.
    fn empty_place(&self) -> impl Future<Output = Self::Place> + Send;

    /// The authority whose number the store at `place` records (or its counters use).
    fn open(&self, place: &Self::Place) -> impl Future<Output = Self::Authority> + Send;

    /// Authority `number` on `place`, not checked against the store's record until it is used.
    fn unchecked(
        &self,
        place: &Self::Place,
        number: u8,
    ) -> impl Future<Output = Self::Authority> + Send;

    /// How many counters of authority `number` the store of `authority` holds.
    fn counters_of(
        &self,
        authority: &Self::Authority,
        number: u8,
    ) -> impl Future<Output = u64> + Send;

    /// Makes the store of `authority` one of before numbers were recorded: the record goes, and
    /// every counter says authority `number`.
    fn forget_number(
        &self,
        authority: &Self::Authority,
        number: u8,
    ) -> impl Future<Output = ()> + Send;

    /// Writes a counter of authority `number` for (scope, sequence) as an older version did.
    fn insert_counter(
        &self,
        authority: &Self::Authority,
        number: u8,
        scope: &str,
        sequence: &str,
        next: i64,
    ) -> impl Future<Output = ()> + Send;
}

/// Why a sharded counter could not be created, by kind.
#[derive(Debug)]
pub enum Setup {
    /// The layout was refused: another one is recorded or stored, or the stored one is corrupt.
    Layout(String),
    /// Anything else.
    Other(String),
}

/// A store of sharded counters (ranges).
pub trait Ranges: Clone + Send + Sync + 'static {
    /// The sharded counter.
    type Counter: IdGenerator<Id = u64> + Send + Sync + 'static;

    /// The store's name in messages.
    fn store(&self) -> &str;

    /// The same store through a connection (pool, client) of its own.
    fn reconnect(&self) -> impl Future<Output = Self> + Send;

    /// Creates (or opens) the sharded counter of `sequence` with `layout`.
    fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> impl Future<Output = Result<Self::Counter, Setup>> + Send;

    /// The stored ranges of `sequence`: `(range, next, max)` in range order.
    fn stored_ranges(&self, sequence: &str) -> impl Future<Output = Vec<(i64, i64, i64)>> + Send;

    /// Removes the layout record of `sequence` (as before layouts were recorded) and range `k`.
    fn forget_layout(&self, sequence: &str, k: i64) -> impl Future<Output = ()> + Send;

    /// Uses up every range of `sequence` (next past max), then stores a range numbered `range`
    /// (out of the layout's bounds) with values left; returns what the error must name.
    fn add_stray_range(
        &self,
        sequence: &str,
        range: i64,
    ) -> impl Future<Output = Vec<String>> + Send;

    /// The ways [`corrupt_range`](Self::corrupt_range) knows to corrupt a stored range.
    fn range_corruptions(&self) -> Vec<&'static str>;

    /// Corrupts the `next` of range 0 of `sequence` (a layout of one range of 1,000 from 0) as
    /// `case` says; returns what the error must name.
    fn corrupt_range(&self, sequence: &str, case: &str)
    -> impl Future<Output = Vec<String>> + Send;
}

/// A shard that can be made to go down.
pub struct GoingDown<S> {
    /// The shard, up.
    pub shard: S,
    /// Takes it down when awaited.
    pub stop: Pin<Box<dyn Future<Output = ()> + Send>>,
}

impl<S> std::fmt::Debug for GoingDown<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GoingDown")
    }
}

/// A store of hi-lo window shards.
pub trait Windows: Send + Sync + 'static {
    /// The shard.
    type Shard: WindowShard + Clone + 'static;

    /// The store's name in messages.
    fn store(&self) -> &str;

    /// `n` shards, distinct stores of this kind, each labelled by its URL (as `gdid agent` labels
    /// them), each through a connection of its own.
    fn shards(&self, n: usize) -> impl Future<Output = Vec<(String, Self::Shard)>> + Send;

    /// The first `n` stores of [`shards`](Self::shards) reached under other URLs (another
    /// spelling of the host or scheme), each labelled by it.
    fn respelled(&self, n: usize) -> impl Future<Output = Vec<(String, Self::Shard)>> + Send;

    /// A shard no server answers for.
    fn unreachable(&self) -> impl Future<Output = Self::Shard> + Send;

    /// A shard (not one of [`shards`](Self::shards)) that can be made to go down.
    fn going_down(&self) -> impl Future<Output = GoingDown<Self::Shard>> + Send;

    /// Moves the start of the window of `sequence` on the first shard after its end: `case` 0
    /// moves the start past the end, 1 the end below the start. Returns what the error must name.
    fn start_after_end(
        &self,
        sequence: &str,
        case: usize,
    ) -> impl Future<Output = Vec<String>> + Send;

    /// The stored windows of `sequence` on the first shard as text, to see them unchanged.
    fn windows_text(&self, sequence: &str) -> impl Future<Output = String> + Send;
}

/// Asks `attempt` `times` times: each answer is an error of the kind `is_kind` accepts, whose
/// message names each of `names`. `what` says which case in a failure.
pub(crate) async fn assert_fails_naming<T, E, F>(
    what: &str,
    times: usize,
    names: &[String],
    is_kind: impl Fn(&E) -> bool,
    mut attempt: impl FnMut() -> F,
) where
    T: std::fmt::Debug,
    E: std::fmt::Display,
    F: Future<Output = Result<T, E>>,
{
    for _ in 0..times {
        let err = match attempt().await {
            Ok(got) => panic!("{what}: {got:?} instead of an error"),
            Err(err) => err,
        };
        assert!(is_kind(&err), "{what}: another kind of error: {err}");
        let message = err.to_string();
        for name in names {
            assert!(
                message.contains(name.as_str()),
                "{what}: {name:?} not in {message}"
            );
        }
    }
}

/// A name no earlier run has used (see [`fresh`](crate::fresh)).
pub(crate) fn fresh(name: &str) -> String {
    crate::fresh(name)
}

/// Expands each case of the conformance groups named into a `#[tokio::test]` of module `$store`
/// (a module per group within it) that runs it on the backend its `$open` gives, an expression
/// of type `Option<_>` (`None`: the store is not configured, the test is skipped).
///
/// ```text
/// gdid_testkit::conformance!(sqlite {
///     authority, counters => Sql::open("SQLite");
///     sharded => Sharded::open("SQLite").await;
/// });
/// ```
#[macro_export]
macro_rules! conformance {
    ($store:ident { $( $($group:ident),+ => $open:expr );+ $(;)? }) => {
        mod $store {
            #[allow(unused_imports)]
            use super::*;
            $( $( $crate::__conformance_group!($group, $open); )+ )+
        }
    };
}

/// One group of [`conformance!`]: a module of tests.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_group {
    (authority, $open:expr) => {
        $crate::__conformance_cases!(authority, $open;
            concurrent_allocation_is_disjoint_and_loses_nothing,
            the_first_use_race_on_a_missing_counter,
            a_restart_never_repeats_an_id,
            a_closed_generator_gives_its_tail_back,
            a_tail_reserved_after_is_not_given_back,
            generators_closing_at_once_never_repeat_an_id,
            bad_names_and_sizes_are_refused);
    };
    (counters, $open:expr) => {
        $crate::__conformance_cases!(counters, $open;
            the_era_rolls_over_at_counter_max,
            the_largest_block_is_a_whole_era,
            an_era_past_the_last_is_exhausted_and_left_as_it_is,
            a_corrupt_counter_stays_corrupt_and_names_its_field);
    };
    (counter, $open:expr) => {
        $crate::__conformance_cases!(counter, $open;
            the_one_at_a_time_counter_is_continuous_under_concurrency,
            the_one_at_a_time_counter_does_not_depend_on_the_authority_number,
            a_corrupt_sibling_is_named_not_skipped_when_the_counter_starts);
    };
    (sequences, $open:expr) => {
        $crate::__conformance_cases!(sequences, $open;
            a_floor_moves_a_counter_forward_and_never_back,
            a_floor_raised_while_allocating_is_never_crossed,
            sequences_are_listed_with_their_last_allocations,
            a_second_spelling_of_a_stored_name_is_refused);
    };
    (numbers, $open:expr) => {
        $crate::__conformance_cases!(numbers, $open;
            authority_numbers_belong_to_the_store_not_to_the_caller);
    };
    (processes, $open:expr) => {
        mod processes {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn processes_killed_and_restarted_never_repeat_an_id() {
                let Some(backend) = $open else { return };
                let test = concat!(
                    module_path!(),
                    "::processes_killed_and_restarted_never_repeat_an_id"
                );
                // The harness names tests without the crate.
                let test = test.split_once("::").map_or(test, |(_, rest)| rest);
                $crate::conformance::processes::killed_and_restarted_never_repeat_an_id(
                    &backend, test,
                )
                .await;
            }
        }
    };
    (sharded, $open:expr) => {
        $crate::__conformance_cases!(sharded, $open;
            twelve_digit_ids_stay_in_their_ranges,
            exhausted_ranges_are_skipped_until_all_are_used_up,
            batches_span_ranges_when_they_must,
            concurrent_takers_never_get_the_same_id,
            another_layout_for_the_same_sequence_is_refused,
            ranges_without_a_layout_record_are_checked_then_recorded,
            a_range_number_out_of_bounds_is_an_error_naming_it,
            a_corrupt_range_is_an_error_naming_it_never_an_id,
            racing_layouts_leave_exactly_one);
    };
    (windows, $open:expr) => {
        $crate::__conformance_cases!(windows, $open;
            clients_use_the_windows_the_agent_opens,
            concurrent_takes_never_cross_a_window_end,
            two_agents_at_once_never_create_overlapping_windows,
            the_agent_refuses_to_run_with_a_shard_down,
            adding_a_shard_is_one_call,
            a_window_with_start_after_end_is_an_error_naming_it,
            agents_given_the_shards_in_opposite_orders_and_spellings_never_overlap,
            one_store_under_two_urls_is_refused,
            used_up_windows_are_pruned_to_the_latest);
    };
}

/// The cases of one group of [`conformance!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($group:ident, $open:expr; $($case:ident),+) => {
        mod $group {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let Some(backend) = $open else { return };
                    $crate::conformance::$group::$case(&backend).await;
                }
            )+
        }
    };
}
