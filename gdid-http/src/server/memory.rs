//! The memory the replies of `POST /v1/ids` may hold at once, in all and on one connection.
//!
//! A reply is held from the moment its ids are spelled until its last byte is written, so a
//! client that asks for the largest replies and never reads (HTTP/2 streams with a zero window,
//! say) would make the server keep them all. Each reply therefore takes its size from two
//! budgets before anything is issued: its connection's (so one connection cannot take the
//! whole) and the server's (so every connection together cannot exhaust the machine). Without
//! them it is answered 503 `busy` at once (a request waiting for memory would hold memory too);
//! the bytes come back when the reply is written or its connection dropped.

use std::sync::Arc;

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::ApiError;

/// Budgets count KiB: a semaphore takes at most `u32::MAX` permits at once.
const UNIT: usize = 1024;

/// The server's budget of reply memory.
pub(crate) struct ReplyMemory {
    total: Arc<Semaphore>,
    per_connection: usize,
}

/// One connection's budget, given to each of its requests (as an extension) by the accept loop.
#[derive(Clone)]
pub(crate) struct ConnectionMemory(Arc<Semaphore>);

/// The memory of one reply, given back when dropped (with the reply's body).
#[derive(Debug)]
pub(crate) struct Held {
    _total: OwnedSemaphorePermit,
    _connection: Option<OwnedSemaphorePermit>,
}

impl ReplyMemory {
    /// `total` bytes in all and `per_connection` on one connection, each at least `largest` (a
    /// reply of the largest size must fit).
    pub(crate) fn new(total: usize, per_connection: usize, largest: usize) -> Self {
        ReplyMemory {
            total: Arc::new(Semaphore::new(units(total.max(largest)))),
            per_connection: units(per_connection.max(largest)),
        }
    }

    /// A new connection's budget.
    pub(crate) fn connection(&self) -> ConnectionMemory {
        ConnectionMemory(Arc::new(Semaphore::new(self.per_connection)))
    }

    /// `bytes` of reply memory on `connection` (none when the router is served by other
    /// means), now or never: a request waiting for memory would itself hold memory.
    pub(crate) fn hold(
        &self,
        connection: Option<&ConnectionMemory>,
        bytes: usize,
    ) -> Result<Held, ApiError> {
        let wanted = u32::try_from(units(bytes)).unwrap_or(u32::MAX);
        let busy = |_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the server holds as many unsent replies as its memory allows: read the replies \
                 already asked for, ask for fewer ids at once, or try again",
            )
        };
        let connection = connection
            .map(|own| own.0.clone().try_acquire_many_owned(wanted))
            .transpose()
            .map_err(busy)?;
        let total = self
            .total
            .clone()
            .try_acquire_many_owned(wanted)
            .map_err(busy)?;
        Ok(Held {
            _total: total,
            _connection: connection,
        })
    }
}

fn units(bytes: usize) -> usize {
    bytes.div_ceil(UNIT).clamp(1, u32::MAX as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_takes_at_most_its_share_and_all_at_most_the_total() {
        let memory = ReplyMemory::new(8 * UNIT, 4 * UNIT, 2 * UNIT);
        let (one, two, three) = (
            memory.connection(),
            memory.connection(),
            memory.connection(),
        );
        let first = memory.hold(Some(&one), 4 * UNIT).unwrap();
        let over_share = memory.hold(Some(&one), 1).unwrap_err();
        assert_eq!(
            (over_share.status, over_share.code),
            (StatusCode::SERVICE_UNAVAILABLE, "busy")
        );
        let _second = memory.hold(Some(&two), 4 * UNIT).unwrap();
        let over_total = memory.hold(Some(&three), 1).unwrap_err();
        assert_eq!(over_total.code, "busy");
        // Given back with the reply: the first connection's share and the total.
        drop(first);
        memory.hold(Some(&three), 4 * UNIT).unwrap();
    }

    #[test]
    fn a_refused_reply_takes_nothing() {
        let memory = ReplyMemory::new(4 * UNIT, 4 * UNIT, UNIT);
        let (one, two) = (memory.connection(), memory.connection());
        let _most = memory.hold(Some(&one), 3 * UNIT).unwrap();
        // Over the total: the second connection's share is not kept either.
        assert!(memory.hold(Some(&two), 2 * UNIT).is_err());
        memory.hold(Some(&two), UNIT).unwrap();
    }

    #[test]
    fn the_largest_reply_always_fits() {
        let memory = ReplyMemory::new(1, 1, 3 * UNIT);
        let connection = memory.connection();
        let held = memory.hold(Some(&connection), 3 * UNIT).unwrap();
        drop(held);
        memory.hold(None, 3 * UNIT - 1).unwrap();
    }
}
