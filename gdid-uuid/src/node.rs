//! [`UuidV1Generator`] and [`UuidV6Generator`]: UUIDs of a node id, a 100 ns timestamp and a clock
//! sequence (RFC 9562 versions 1 and 6), and the [`NodeId`].

use std::fmt;
use std::marker::PhantomData;

use gdid_engine::plumbing::RandomSource;
use gdid_engine::{Error, IdBatch, IdGenerator};
use uuid::Uuid;
use uuid::timestamp::UUID_TICKS_BETWEEN_EPOCHS;

use crate::clock::{Clock, SystemClock};
use crate::error::{TimestampOverflow, check_count};
use crate::sequence::Sequence;

/// The last 100 ns tick a v1/v6 UUID can hold (60 bits: the year 5236).
const MAX_TICKS: u64 = (1 << 60) - 1;

/// The 48-bit node id of v1 and v6 UUIDs.
///
/// RFC 9562 (§6.10) prefers a random node id to a network card's MAC address, which reveals the
/// machine: [`NodeId::random`] sets the multicast bit, so it never equals a real MAC address.
/// Give each process its own node id; two generators with the same node id are kept apart only
/// by their random 14-bit clock sequences.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId([u8; 6]);

impl NodeId {
    /// The node id of these six bytes (e.g. a MAC address).
    pub const fn from_bytes(bytes: [u8; 6]) -> Self {
        NodeId(bytes)
    }

    /// A random node id with the multicast bit (the lowest bit of the first byte) set.
    ///
    /// ```
    /// let node = gdid_uuid::NodeId::random();
    /// assert_eq!(node.as_bytes()[0] & 1, 1);
    /// ```
    pub fn random() -> Self {
        let [_, _, bytes @ ..] = RandomSource::thread().next_u64().to_be_bytes();
        let mut node = NodeId(bytes);
        node.0[0] |= 1;
        node
    }

    /// The six bytes.
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }
}

impl fmt::Display for NodeId {
    /// `02:42:ac:11:00:02`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeId({self})")
    }
}

mod sealed {
    pub trait Sealed {}
}

/// How the fields of a [`NodeUuidGenerator`] are laid out: [`V1`] or [`V6`].
pub trait Layout: sealed::Sealed + Send + Sync + 'static {
    /// The UUID version.
    const VERSION: u8;
    /// The UUID of these fields (`ticks` below 2^60, `clock_sequence` below 2^14).
    #[doc(hidden)]
    fn build(ticks: u64, clock_sequence: u16, node: &NodeId) -> Uuid;
}

/// Version 1: the timestamp's low bits first, so ids do not sort by time.
#[derive(Debug)]
pub enum V1 {}

/// Version 6: version 1's fields with the timestamp's high bits first, so ids sort by time.
#[derive(Debug)]
pub enum V6 {}

impl sealed::Sealed for V1 {}
impl sealed::Sealed for V6 {}

impl Layout for V1 {
    const VERSION: u8 = 1;
    #[inline]
    fn build(ticks: u64, clock_sequence: u16, node: &NodeId) -> Uuid {
        uuid::Builder::from_gregorian_timestamp(ticks, clock_sequence, &node.0).into_uuid()
    }
}

impl Layout for V6 {
    const VERSION: u8 = 6;
    #[inline]
    fn build(ticks: u64, clock_sequence: u16, node: &NodeId) -> Uuid {
        uuid::Builder::from_sorted_gregorian_timestamp(ticks, clock_sequence, &node.0).into_uuid()
    }
}

/// Version 1 UUIDs: see [`NodeUuidGenerator`].
pub type UuidV1Generator<C = SystemClock> = NodeUuidGenerator<V1, C>;

/// Version 6 UUIDs (version 1 reordered to sort by time): see [`NodeUuidGenerator`].
pub type UuidV6Generator<C = SystemClock> = NodeUuidGenerator<V6, C>;

/// Version 1 and 6 UUIDs: 60 bits of 100 ns ticks since 1582-10-15, a 14-bit clock sequence and
/// the 48-bit [`NodeId`].
///
/// **Unique per node, and increasing** (by time for v6; v1's field order does not sort): the
/// timestamp is taken from one atomic, one read-modify-write per id, never twice the same tick.
/// When more than one id falls in the same 100 ns, or the clock steps back, the tick goes on
/// from the last one given, as RFC 9562 §6.2 allows (above 10 million ids a second the
/// time runs ahead of the clock until it catches up). The clock sequence is drawn at random when
/// the generator is made: a restart that meets ticks an earlier run of the same node already used
/// (the clock set back, or an earlier run whose ticks ran ahead) repeats ids only if both runs drew
/// the same sequence, a chance of 1 in 16,384. Where that is too much, give each run its own node
/// id ([`NodeId::random`]).
///
/// ```
/// use gdid_uuid::{NodeId, UuidV6Generator};
///
/// # fn main() -> Result<(), gdid_uuid::TimestampOverflow> {
/// let ids = UuidV6Generator::new(NodeId::from_bytes([0x02, 0x42, 0xac, 0x11, 0x00, 0x02]));
/// let (a, b) = (ids.generate()?, ids.generate()?);
/// assert!(a < b);
/// assert_eq!(a.get_version_num(), 6);
/// assert_eq!(a.get_node_id(), Some([0x02, 0x42, 0xac, 0x11, 0x00, 0x02]));
/// # Ok(())
/// # }
/// ```
pub struct NodeUuidGenerator<L, C = SystemClock> {
    sequence: Sequence,
    clock: C,
    clock_sequence: u16,
    node: NodeId,
    layout: PhantomData<fn() -> L>,
}

impl<L: Layout> NodeUuidGenerator<L> {
    /// A generator for `node` on the system clock.
    pub fn new(node: NodeId) -> Self {
        NodeUuidGenerator::with_clock(node, SystemClock)
    }
}

impl<L: Layout, C: Clock> NodeUuidGenerator<L, C> {
    /// A generator for `node` that reads the time from `clock`.
    pub fn with_clock(node: NodeId, clock: C) -> Self {
        let [.., high, low] = RandomSource::thread().next_u64().to_be_bytes();
        NodeUuidGenerator {
            sequence: Sequence::new(MAX_TICKS),
            clock,
            clock_sequence: u16::from_be_bytes([high, low]) & 0x3fff,
            node,
            layout: PhantomData,
        }
    }

    /// The node id.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The 14-bit clock sequence, drawn when the generator was made.
    pub fn clock_sequence(&self) -> u16 {
        self.clock_sequence
    }

    /// One UUID, with a timestamp after every one this generator gave before.
    ///
    /// # Errors
    ///
    /// [`TimestampOverflow`] when the clock reads past the year 5236.
    #[inline]
    pub fn generate(&self) -> Result<Uuid, TimestampOverflow> {
        let tick = self.sequence.take(self.now()?, 1, L::VERSION)?;
        Ok(L::build(tick, self.clock_sequence, &self.node))
    }

    /// The clock in 100 ns ticks since 1582-10-15.
    #[inline]
    fn now(&self) -> Result<u64, TimestampOverflow> {
        let now = self.clock.now();
        now.as_secs()
            .checked_mul(10_000_000)
            .and_then(|ticks| ticks.checked_add(UUID_TICKS_BETWEEN_EPOCHS))
            .and_then(|ticks| ticks.checked_add(u64::from(now.subsec_nanos() / 100)))
            .filter(|&ticks| ticks <= MAX_TICKS)
            .ok_or(TimestampOverflow {
                version: L::VERSION,
            })
    }
}

impl<L, C: fmt::Debug> fmt::Debug for NodeUuidGenerator<L, C>
where
    L: Layout,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeUuidGenerator")
            .field("version", &L::VERSION)
            .field("node", &self.node)
            .field("clock_sequence", &self.clock_sequence)
            .field("clock", &self.clock)
            .finish()
    }
}

impl<L: Layout, C: Clock> IdGenerator for NodeUuidGenerator<L, C> {
    type Id = Uuid;

    async fn next_id(&self) -> Result<Uuid, Error> {
        Ok(self.generate()?)
    }

    /// `n` UUIDs (1 to [`MAX_BATCH`](crate::MAX_BATCH)) of consecutive ticks, taken in one step.
    async fn next_ids(&self, n: u64) -> Result<IdBatch<Uuid>, Error> {
        check_count(n)?;
        let first = self.sequence.take(self.now()?, n, L::VERSION)?;
        Ok(IdBatch::singles((first..=first + (n - 1)).map(|tick| {
            L::build(tick, self.clock_sequence, &self.node)
        })))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use uuid::{Variant, Version};

    use super::*;
    use crate::clock::ManualClock;

    const NODE: NodeId = NodeId::from_bytes([1, 2, 3, 4, 5, 6]);

    fn ticks(id: Uuid) -> u64 {
        id.get_timestamp().unwrap().to_gregorian().0
    }

    #[test]
    fn v1_and_v6_hold_the_same_fields_in_their_own_order() {
        let clock = ManualClock::new(Duration::from_nanos(1_700_000_000_123_456_700));
        let v1 = UuidV1Generator::with_clock(NODE, clock.clone());
        let v6 = UuidV6Generator::with_clock(NODE, clock);
        let (a, b) = (v1.generate().unwrap(), v6.generate().unwrap());
        assert_eq!(a.get_version(), Some(Version::Mac));
        assert_eq!(b.get_version(), Some(Version::SortMac));
        for (id, generator_sequence) in [(a, v1.clock_sequence()), (b, v6.clock_sequence())] {
            assert_eq!(id.get_variant(), Variant::RFC4122);
            assert_eq!(id.get_node_id(), Some([1, 2, 3, 4, 5, 6]));
            assert_eq!(
                ticks(id),
                UUID_TICKS_BETWEEN_EPOCHS + 17_000_000_001_234_567
            );
            assert_eq!(
                id.get_timestamp().unwrap().to_gregorian().1,
                generator_sequence
            );
        }
    }

    #[test]
    fn ticks_never_repeat_when_the_clock_stands_still_or_steps_back() {
        let clock = ManualClock::new(Duration::from_secs(1_700_000_000));
        let ids = UuidV6Generator::with_clock(NODE, clock.clone());
        let mut last = ids.generate().unwrap();
        for step in 0..1_000 {
            if step == 500 {
                clock.set(Duration::from_secs(1_600_000_000));
            }
            let id = ids.generate().unwrap();
            assert!(id > last);
            assert_eq!(ticks(id), ticks(last) + 1);
            last = id;
        }
    }

    #[test]
    fn a_random_node_id_has_the_multicast_bit_and_prints_as_a_mac_address() {
        assert_eq!(NodeId::random().as_bytes()[0] & 1, 1);
        assert_ne!(NodeId::random(), NodeId::random());
        assert_eq!(NODE.to_string(), "01:02:03:04:05:06");
        assert_eq!(format!("{NODE:?}"), "NodeId(01:02:03:04:05:06)");
    }

    #[test]
    fn a_clock_at_the_end_of_durations_is_an_error_not_a_wrapped_time() {
        let clock = ManualClock::new(Duration::new(u64::MAX / 10_000_000, 999_999_999));
        let ids = UuidV6Generator::with_clock(NODE, clock);
        assert_eq!(ids.generate(), Err(TimestampOverflow { version: 6 }));
    }

    #[test]
    fn past_the_year_5236_is_an_error() {
        // The last whole second before 2^60 ticks after 1582-10-15 (in the year 5236).
        let last_second = (MAX_TICKS - UUID_TICKS_BETWEEN_EPOCHS) / 10_000_000;
        let clock = ManualClock::new(Duration::from_secs(last_second));
        let ids = UuidV1Generator::with_clock(NODE, clock.clone());
        assert!(ids.generate().is_ok());
        clock.set(Duration::from_secs(last_second + 1));
        assert_eq!(ids.generate(), Err(TimestampOverflow { version: 1 }));
    }
}
