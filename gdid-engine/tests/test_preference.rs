//! `Preference::Fastest`, each client's "closest authority": the fastest authority serves, the
//! next fastest takes over when it fails, and the others are still probed. Tokio's paused clock
//! makes the latencies exact.

use std::sync::Arc;
use std::time::Duration;

use gdid_engine::{
    BlockGenerator, MemoryAuthority, PROBE_EVERY,
    testing::{FaultyAuthority, Latency},
};

fn at(millis: u64) -> Arc<FaultyAuthority<MemoryAuthority>> {
    Arc::new(
        FaultyAuthority::new(MemoryAuthority::new(0))
            .latency(Latency::Fixed(Duration::from_millis(millis))),
    )
}

/// Authorities 1, 2 and 3 answering in 30, 5 and 15 ms, listed in that order.
fn three() -> [Arc<FaultyAuthority<MemoryAuthority>>; 3] {
    [at(30), at(5), at(15)]
}

fn numbered(
    authorities: &[Arc<FaultyAuthority<MemoryAuthority>>; 3],
    fastest: bool,
) -> BlockGenerator {
    let mut builder = BlockGenerator::builder("s", "q")
        .fixed_block_size(10)
        .no_prefetch();
    for (k, authority) in authorities.iter().enumerate() {
        let number = u8::try_from(k + 1).unwrap();
        builder = builder.authority(Renumbered(authority.clone(), number));
    }
    if fastest {
        builder = builder.prefer_fastest();
    }
    builder.build().unwrap()
}

/// An authority under another number (each `MemoryAuthority` here is authority 0).
struct Renumbered(Arc<FaultyAuthority<MemoryAuthority>>, u8);

impl gdid_engine::Authority for Renumbered {
    fn number(&self) -> u8 {
        self.1
    }

    fn label(&self) -> String {
        format!("authority {}", self.1)
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<gdid_engine::Block, gdid_engine::AuthorityError> {
        let block = self.0.allocate(scope, sequence, size).await?;
        gdid_engine::Block::new(block.era(), self.1, block.start(), block.len())
    }
}

/// How many of `n` ids each authority issued, by number 1 to 3.
async fn served(ids: &BlockGenerator, n: usize) -> [usize; 3] {
    let mut counts = [0; 3];
    for _ in 0..n {
        let id = ids.next_id().await.unwrap();
        counts[usize::from(id.authority()) - 1] += 1;
    }
    counts
}

#[tokio::test(start_paused = true)]
async fn the_fastest_serves_and_the_others_are_still_probed() {
    let authorities = three();
    let ids = numbered(&authorities, true);
    // 200 blocks of 10.
    let counts = served(&ids, 2000).await;
    assert!(counts[1] > 1600, "authority 2 (5 ms) served {counts:?}");
    // Each slower one was asked at least once every PROBE_EVERY rounds, or close to it.
    let probes = usize::try_from(200 / PROBE_EVERY).unwrap();
    for k in [0, 2] {
        assert!(
            counts[k] >= 10 * (probes / 2 - 1),
            "authority {} probed too little: {counts:?}",
            k + 1
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_next_fastest_takes_over_when_the_fastest_fails() {
    let authorities = three();
    let ids = numbered(&authorities, true);
    served(&ids, 200).await;
    authorities[1].set_down(true);
    let counts = served(&ids, 1000).await;
    assert_eq!(counts[1], 0, "{counts:?}");
    assert!(
        counts[2] > counts[0] * 3,
        "authority 3 (15 ms) should serve before 1 (30 ms): {counts:?}"
    );
    authorities[1].set_down(false);
    tokio::time::sleep(Duration::from_secs(5)).await; // its back-off ends
    let counts = served(&ids, 1000).await;
    assert!(
        counts[1] > 700,
        "authority 2 is back and fastest: {counts:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn by_default_the_first_listed_serves_however_slow() {
    let authorities = three();
    let ids = numbered(&authorities, false);
    assert_eq!(served(&ids, 1000).await, [1000, 0, 0]);
}
