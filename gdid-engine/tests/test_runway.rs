//! The runway of a block generator: nothing wasted on a graceful close or drop, and how soon the
//! store is used again after an outage. On tokio's paused clock, over in-memory authorities (the
//! stores' own give-back is tested on every store by the conformance suite,
//! `gdid_testkit::conformance::authority`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use gdid_core::Gdid;
use gdid_engine::{
    BlockGenerator, CounterState, Error, ErrorDetail, MemoryAuthority,
    testing::{FaultyAuthority, Latency},
};

type Faulty = Arc<FaultyAuthority<MemoryAuthority>>;

fn faulty(number: u8) -> Faulty {
    Arc::new(FaultyAuthority::new(MemoryAuthority::new(number)))
}

/// A generator of `app/<sequence>` over (a handle on) `authority`, with the default settings.
fn generator(sequence: &str, authority: &Faulty) -> BlockGenerator {
    BlockGenerator::builder("app", sequence)
        .authority(Arc::clone(authority))
        .build()
        .unwrap()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Serves `n` ids at `per_second`, on the paused clock.
async fn serve(ids: &BlockGenerator, n: u64, per_second: u64, seen: &mut HashSet<Gdid>) {
    let pause = Duration::from_secs(1) / u32::try_from(per_second).unwrap();
    for _ in 0..n {
        let id = ids.next_id().await.unwrap();
        assert!(seen.insert(id), "{id} served twice");
        tokio::time::sleep(pause).await;
    }
}

#[tokio::test(start_paused = true)]
async fn close_gives_back_the_current_and_the_pending_block() {
    let authority = faulty(1);
    authority.set_latency(Latency::Fixed(ms(10)));
    let ids = generator("close", &authority);
    let mut seen = HashSet::new();
    serve(&ids, 12, 1_000, &mut seen).await; // past the low-water mark: a block is pending
    tokio::time::sleep(ms(50)).await;
    let stored = authority.inner().state("app", "close").unwrap();
    assert!(stored.next > 17, "a second block was reserved: {stored:?}");
    let given = ids.close().await.unwrap();
    assert_eq!(given, stored.next - 13, "the rest of both blocks went back");
    assert_eq!(
        authority.inner().state("app", "close"),
        Some(CounterState { era: 0, next: 13 })
    );
    assert!(matches!(
        ids.next_id().await.map_err(Error::into_detail),
        Err(ErrorDetail::Closed { .. })
    ));
    assert_eq!(
        ids.close().await.unwrap(),
        0,
        "closing twice gives nothing more"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_last_clone_gives_back_in_a_task() {
    let authority = faulty(1);
    let ids = generator("drop", &authority);
    let clone = ids.clone();
    ids.next_id().await.unwrap();
    drop(ids);
    tokio::time::sleep(ms(10)).await;
    assert!(
        authority.inner().state("app", "drop").unwrap().next > 2,
        "a clone still holds it"
    );
    drop(clone);
    tokio::time::sleep(ms(10)).await;
    assert_eq!(
        authority.inner().state("app", "drop"),
        Some(CounterState { era: 0, next: 2 })
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_that_is_down_at_close_loses_the_tail_and_never_repeats_it() {
    let authority = faulty(1);
    let ids = generator("down", &authority);
    let first = ids.next_id().await.unwrap();
    authority.set_down(true);
    assert!(ids.close().await.is_err(), "the store said no");
    authority.set_down(false);
    let again = generator("down", &authority);
    let next = again.next_id().await.unwrap();
    assert!(
        next.counter() > 16,
        "{first} then {next}: the lost tail is skipped"
    );
}

#[tokio::test(start_paused = true)]
async fn short_runs_and_races_with_other_generators_never_repeat_an_id() {
    let authority = faulty(3);
    let mut seen = HashSet::new();
    let mut wasted = 0;
    for run in 0..40u64 {
        let a = generator("race", &authority);
        let b = generator("race", &authority);
        for i in 0..(run % 7 + 1) {
            for ids in [&a, &b] {
                if (run + i) % 3 != 0 || std::ptr::eq(ids, &a) {
                    let id = ids.next_id().await.unwrap();
                    assert!(seen.insert(id), "{id} served twice");
                }
            }
        }
        let (first, second) = if run % 2 == 0 { (a, b) } else { (b, a) };
        first.close().await.unwrap();
        if run % 5 == 0 {
            drop(second);
            tokio::task::yield_now().await;
        } else {
            second.close().await.unwrap();
        }
        let stored = authority.inner().state("app", "race").unwrap();
        wasted = stored.next - 1 - seen.len() as u64;
    }
    assert!(
        wasted < 40 * 16,
        "closing gave most tails back: {wasted} ids lost"
    );
}

/// A prefetch failing through an outage retries at most a second apart: once the store is back,
/// it is used within a second (before, the pause doubled up to 10 s).
#[tokio::test(start_paused = true)]
async fn after_an_outage_the_store_is_used_again_within_a_second() {
    let authority = faulty(1);
    authority.set_latency(Latency::Fixed(ms(10)));
    let ids = BlockGenerator::builder("app", "outage")
        .authority(Arc::clone(&authority))
        .cover(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    serve(&ids, 3_000, 1_000, &mut seen).await;
    authority.set_down(true);
    while ids.stats().authorities[0].failures == 0 {
        serve(&ids, 100, 1_000, &mut seen).await;
    }
    serve(&ids, 8_000, 1_000, &mut seen).await; // 8 s of failed prefetches: the cover holds
    let before = authority.inner().allocations();
    authority.set_down(false);
    let back = tokio::time::Instant::now();
    while authority.inner().allocations() == before {
        serve(&ids, 1, 1_000, &mut seen).await;
        assert!(
            back.elapsed() <= Duration::from_secs(1) + ms(20),
            "not used again within 1 s"
        );
    }
}

/// A young generator's first blocks are measured over a few milliseconds: at 100,000 ids/s, 16
/// ids taken within one millisecond read as 16,000 ids/s, and the block sized for them covered 3
/// of the 10 s configured until the third block, 1.6 s later. The rate is checked again 100 ms
/// after such a block came: the ids in hand cover the configured time from then on, one store
/// round trip later (the first block, the first sized one, the probe's: 100 ms + 3 round trips).
#[tokio::test(start_paused = true)]
async fn a_young_generator_covers_its_configured_time_100_ms_after_its_first_sized_block() {
    for (latency_ms, ids_per_ms) in [(10, 100), (50, 100), (10, 1_000), (200, 10)] {
        let authority = faulty(1);
        authority.set_latency(Latency::Fixed(ms(latency_ms)));
        let cover = Duration::from_secs(10);
        let ids = BlockGenerator::builder("app", "young")
            .authority(Arc::clone(&authority))
            .cover(cover)
            .build()
            .unwrap();
        let start = tokio::time::Instant::now();
        let rate = ids_per_ms as f64 * 1_000.0;
        let mut seen = HashSet::new();
        while start.elapsed() < Duration::from_secs(3) {
            for _ in 0..ids_per_ms {
                let id = ids.next_id().await.unwrap();
                assert!(seen.insert(id), "{id} served twice");
            }
            tokio::time::sleep(ms(1)).await;
            if start.elapsed() > ms(100 + 3 * latency_ms + 1) {
                let in_hand = ids.stats().ids_in_hand as f64;
                assert!(
                    in_hand >= rate * cover.as_secs_f64(),
                    "{ids_per_ms} ids/ms, store latency {latency_ms} ms: at {:?} the ids in hand \
                     ({in_hand}) cover {:.1} s of the {cover:?} configured",
                    start.elapsed(),
                    in_hand / rate
                );
            }
        }
    }
}
