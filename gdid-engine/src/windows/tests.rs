//! The claim protocol on in-memory shards whose every operation yields once before it acts: two
//! agents joined in one task then run in lockstep, one operation each in turn, which makes the
//! interleavings that break label ordering happen every time.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use super::{AgentError, FIRST_VALUE, Window, WindowAgent, WindowGenerator, WindowShard};
use crate::IdGenerator;

/// One store: its identity, claims (start → end) and windows, by (sequence, start).
#[derive(Debug, Default)]
struct Store {
    identity: Option<String>,
    claims: BTreeMap<(String, u64), u64>,
    windows: BTreeMap<(String, u64), Window>,
}

/// A handle on a [`Store`]: clones reach the same store, as two URLs of one database do.
#[derive(Debug, Clone, Default)]
struct MemoryShard(Arc<Mutex<Store>>);

impl MemoryShard {
    /// Yields to the other agent, then runs `f` on the store.
    async fn step<T>(&self, f: impl FnOnce(&mut Store) -> T) -> Result<T, Infallible> {
        tokio::task::yield_now().await;
        Ok(f(&mut self.0.lock().unwrap()))
    }
}

impl WindowShard for MemoryShard {
    type Error = Infallible;

    async fn prune(&self, sequence: &str, keep: u64) -> Result<u64, Infallible> {
        self.step(|s| {
            let used: Vec<(String, u64)> = s
                .windows
                .iter()
                .filter(|((q, _), w)| q == sequence && w.next_hi >= w.end)
                .map(|(k, _)| k.clone())
                .collect();
            let keep = usize::try_from(keep).unwrap_or(usize::MAX);
            let pruned = used.len().saturating_sub(keep);
            for k in &used[..pruned] {
                s.windows.remove(k);
            }
            pruned as u64
        })
        .await
    }

    async fn prepare(&self) -> Result<(), Infallible> {
        self.step(|_| ()).await
    }

    async fn identity(&self, candidate: &str) -> Result<String, Infallible> {
        self.step(|s| {
            s.identity
                .get_or_insert_with(|| candidate.to_owned())
                .clone()
        })
        .await
    }

    async fn ping(&self) -> Result<(), Infallible> {
        self.step(|_| ()).await
    }

    async fn sequences(&self) -> Result<Vec<String>, Infallible> {
        self.step(|s| s.claims.keys().map(|(q, _)| q.clone()).collect())
            .await
    }

    async fn high_water(&self, sequence: &str) -> Result<u64, Infallible> {
        self.step(|s| {
            let claims = s.claims.iter().filter(|((q, _), _)| q == sequence);
            let windows = s.windows.iter().filter(|((q, _), _)| q == sequence);
            claims
                .map(|(_, end)| *end)
                .chain(windows.map(|(_, w)| w.end))
                .max()
                .unwrap_or(0)
        })
        .await
    }

    async fn open_windows(&self, sequence: &str) -> Result<u64, Infallible> {
        self.step(|s| {
            let open = s
                .windows
                .iter()
                .filter(|((q, _), w)| q == sequence && w.next_hi < w.end);
            open.count() as u64
        })
        .await
    }

    async fn windows(&self, sequence: &str) -> Result<Vec<Window>, Infallible> {
        self.step(|s| {
            let of_sequence = s.windows.iter().filter(|((q, _), _)| q == sequence);
            of_sequence.map(|(_, w)| *w).collect()
        })
        .await
    }

    async fn claim(&self, sequence: &str, start: u64, end: u64) -> Result<bool, Infallible> {
        self.step(|s| match s.claims.entry((sequence.to_owned(), start)) {
            Entry::Vacant(free) => {
                free.insert(end);
                true
            }
            Entry::Occupied(_) => false,
        })
        .await
    }

    async fn open(&self, sequence: &str, start: u64, end: u64) -> Result<(), Infallible> {
        self.step(|s| {
            let window = Window {
                start,
                end,
                next_hi: start,
            };
            s.windows.insert((sequence.to_owned(), start), window);
        })
        .await
    }

    async fn take(&self, sequence: &str, n: u64) -> Result<Option<(u64, u64)>, Infallible> {
        self.step(|s| {
            let open = s
                .windows
                .iter_mut()
                .find(|((q, _), w)| q == sequence && w.next_hi < w.end)?;
            let window = open.1;
            let count = n.min(window.end - window.next_hi);
            let first = window.next_hi;
            window.next_hi += count;
            Some((first, count))
        })
        .await
    }
}

async fn agent(
    window_size: u64,
    min_open: u64,
    shards: &[(&str, &MemoryShard)],
) -> WindowAgent<MemoryShard> {
    let mut agent = WindowAgent::new(window_size, min_open).unwrap();
    for (label, shard) in shards {
        agent.add_shard(label, (*shard).clone()).await.unwrap();
    }
    agent
}

/// Every window on `stores`, checked pairwise: none holds 0, no two share a value.
async fn assert_disjoint_and_above_zero(stores: &[&MemoryShard], sequence: &str) -> usize {
    let mut all = Vec::new();
    for store in stores {
        all.extend(store.windows(sequence).await.unwrap());
    }
    all.sort_by_key(|w| w.start);
    for window in &all {
        assert!(window.start >= FIRST_VALUE, "{window:?} holds 0");
    }
    for pair in all.windows(2) {
        assert!(pair[0].end <= pair[1].start, "overlap: {pair:?}");
    }
    all.len()
}

/// Agent P (labels X "a", Y "b") and agent Q (labels X "b", Y "a"), in lockstep. Ordered by
/// label, P claims on X then Y and Q on Y then X: each wins its first shard and loses its second,
/// at every attempt, until both give up with `Contended` (and shards X and Y are left with
/// different high-water marks, from which later agents open overlapping windows). Ordered by the
/// stores' identities, both claim on one shard first, and one of them wins each round.
#[tokio::test(flavor = "current_thread")]
async fn agents_given_shards_in_opposite_label_orders_neither_livelock_nor_overlap() {
    let (x, y) = (MemoryShard::default(), MemoryShard::default());
    let p = agent(100, 3, &[("a", &x), ("b", &y)]).await;
    let q = agent(1000, 3, &[("b", &x), ("a", &y)]).await;
    let (from_p, from_q) = tokio::join!(p.run_once(&["order"]), q.run_once(&["order"]));
    for (agent, result) in [("P", from_p), ("Q", from_q)] {
        let report = result.unwrap_or_else(|e| panic!("agent {agent}: {e}"));
        assert_eq!(report.created.len(), 6, "agent {agent}: {report:?}");
    }
    // Later agents, in lockstep too, find one chain of claims.
    let z = agent(1000, 6, &[("x", &x), ("y", &y)]).await;
    let v = agent(10, 9, &[("y", &y), ("x", &x)]).await;
    let (from_z, from_v) = tokio::join!(z.run_once(&["order"]), v.run_once(&["order"]));
    from_z.unwrap();
    from_v.unwrap();
    let count = assert_disjoint_and_above_zero(&[&x, &y], "order").await;
    assert!(count >= 9 * 2, "{count} windows");
}

/// One store given twice, under two names, is refused: it would be claimed on twice, in an order
/// no other agent shares.
#[tokio::test]
async fn one_store_under_two_labels_is_refused() {
    let (x, y) = (MemoryShard::default(), MemoryShard::default());
    let mut agent = agent(10, 1, &[("sqlite:/tmp/a.sqlite", &x), ("y", &y)]).await;
    let err = agent
        .add_shard("sqlite:/tmp/./a.sqlite", x.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Config(_)), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("\"sqlite:/tmp/a.sqlite\" and \"sqlite:/tmp/./a.sqlite\" are one store"),
        "{message}"
    );
    assert_eq!(agent.shards().count(), 2);
}

/// The claim order is the identity order, whatever the labels and the order of `add_shard`.
#[tokio::test]
async fn claims_follow_the_store_identities_not_the_labels() {
    let (x, y) = (MemoryShard::default(), MemoryShard::default());
    let first = agent(10, 1, &[("b", &x), ("a", &y)]).await;
    let second = agent(10, 1, &[("a", &x), ("b", &y)]).await;
    let identity = |s: &MemoryShard| s.0.lock().unwrap().identity.clone().unwrap();
    let order = |agent: &WindowAgent<MemoryShard>| -> Vec<String> {
        agent.shards().map(|(_, s)| identity(s)).collect()
    };
    assert_eq!(order(&first), order(&second));
    let mut sorted = order(&first);
    sorted.sort();
    assert_eq!(order(&first), sorted);
}

/// The first window of a sequence starts at 1: 0 is never an id.
#[tokio::test]
async fn the_first_window_starts_at_1() {
    let x = MemoryShard::default();
    let agent = agent(10, 1, &[("x", &x)]).await;
    agent.run_once(&["order"]).await.unwrap();
    let windows = x.windows("order").await.unwrap();
    assert_eq!(
        windows,
        [Window {
            start: 1,
            end: 11,
            next_hi: 1
        }]
    );
    let ids = WindowGenerator::new(vec![("x".into(), x)], "order", 4).unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
}

/// A window written when windows started at 0 never serves 0.
#[tokio::test]
async fn a_window_starting_at_0_never_serves_0() {
    let x = MemoryShard::default();
    x.open("order", 0, 3).await.unwrap();
    let ids = WindowGenerator::new(vec![("x".into(), x.clone())], "order", 1).unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    assert_eq!(ids.next_id().await.unwrap(), 2);
    assert!(ids.next_id().await.is_err());

    x.open("order", 3, 6).await.unwrap();
    x.open("other", 0, 1).await.unwrap();
    x.open("other", 1, 4).await.unwrap();
    let batch = WindowGenerator::new(vec![("x".into(), x)], "other", 10)
        .unwrap()
        .next_ids(3)
        .await
        .unwrap();
    assert_eq!(batch.iter().collect::<Vec<_>>(), [1, 2, 3]);
}

/// Without a history to keep, the agent deletes no window; with one, each run deletes the
/// used-up windows beyond it on every shard, and never an open window or a claim.
#[tokio::test]
async fn the_agent_prunes_used_up_windows_beyond_the_history_it_keeps() {
    let (x, y) = (MemoryShard::default(), MemoryShard::default());
    let shards = vec![("x".into(), x.clone()), ("y".into(), y.clone())];
    let ids = WindowGenerator::new(shards, "order", 2).unwrap();
    let not_keeping = agent(2, 1, &[("x", &x), ("y", &y)]).await;
    for _ in 0..4 {
        let report = not_keeping.run_once(&["order"]).await.unwrap();
        // A window of 2 opened on each shard, then both used up.
        assert_eq!((report.created.len(), report.pruned), (2, 0), "{report:?}");
        ids.next_ids(4).await.unwrap();
    }
    assert_eq!(x.windows("order").await.unwrap().len(), 4);

    let keeping = agent(2, 1, &[("x", &x), ("y", &y)])
        .await
        .keep_used_windows(1);
    let report = keeping.run_once(&["order"]).await.unwrap();
    assert_eq!(report.created.len(), 2, "{report:?}");
    assert_eq!(report.pruned, 2 * 3, "{report:?}");
    for shard in [&x, &y] {
        let windows = shard.windows("order").await.unwrap();
        let used: Vec<_> = windows.iter().filter(|w| w.next_hi == w.end).collect();
        let open = windows.iter().filter(|w| w.next_hi < w.end).count();
        assert_eq!((used.len(), open), (1, 1), "{windows:?}");
        // The latest used-up window is the one kept: round 4's, 13..15 or 15..17.
        assert!(used[0].start >= 13, "{windows:?}");
        // Every claim stays: 5 rounds of 2 windows, each claimed on both shards.
        assert_eq!(shard.0.lock().unwrap().claims.len(), 10);
    }
    assert_eq!(ids.next_ids(4).await.unwrap().iter().min(), Some(17));
    assert_disjoint_and_above_zero(&[&x, &y], "order").await;
}
