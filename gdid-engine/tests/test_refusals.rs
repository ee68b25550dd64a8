//! Every refusal an authority can answer with, through a generator: what the one decision
//! (`ErrorKind::recourse`) says, and what the generator does about it: another authority serves
//! (again, next, repair), the caller's wait ends at once (stop; repair when every authority
//! refused so), or it goes on until the request timeout (again, next). Tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use gdid_engine::testing::Refusing;
use gdid_engine::{
    AuthorityError, BlockGenerator, ErrorDetail, ErrorKind, InvalidName, MemoryAuthority, NameKind,
    NumberConflict, Recourse,
};
use tokio::time::Instant;

/// A refusal (made afresh for each use), its kind, and the recourse the decision gives it.
type Refusal = (fn() -> AuthorityError, ErrorKind, Recourse);

/// Every refusal.
fn refusals() -> Vec<Refusal> {
    vec![
        (
            || AuthorityError::Conflict("deadlock".into()),
            ErrorKind::Conflict,
            Recourse::Again,
        ),
        (
            || AuthorityError::Contention {
                record: "the row".into(),
                attempts: 20,
                last: None,
            },
            ErrorKind::Conflict,
            Recourse::Again,
        ),
        (
            || AuthorityError::store("connection refused"),
            ErrorKind::Unavailable,
            Recourse::Next,
        ),
        (
            || AuthorityError::Corrupt("next is -1".into()),
            ErrorKind::Corrupt,
            Recourse::Repair,
        ),
        (
            || AuthorityError::InvalidBlock("start past the end".into()),
            ErrorKind::Corrupt,
            Recourse::Repair,
        ),
        (
            || AuthorityError::Exhausted,
            ErrorKind::Exhausted,
            Recourse::Repair,
        ),
        (
            || {
                AuthorityError::Number(NumberConflict::Recorded {
                    store: "s".into(),
                    recorded: 2,
                    asked: 1,
                })
            },
            ErrorKind::Foreign,
            Recourse::Repair,
        ),
        (
            || AuthorityError::Switched {
                record: "the row".into(),
                remedy: "gdid sequences fence".into(),
            },
            ErrorKind::Foreign,
            Recourse::Repair,
        ),
        (
            || {
                AuthorityError::InvalidName(InvalidName {
                    kind: NameKind::Sequence,
                    name: "a b".into(),
                    reason: "a space".into(),
                })
            },
            ErrorKind::Config,
            Recourse::Stop,
        ),
        (
            || AuthorityError::InvalidSize(0),
            ErrorKind::Config,
            Recourse::Stop,
        ),
    ]
}

const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// A generator over the refusing authority alone, or followed by a healthy one.
fn generator(refusing: &Arc<Refusing>, healthy: bool) -> BlockGenerator {
    let mut builder = BlockGenerator::builder("app", "refused")
        .authority(Arc::clone(refusing))
        .request_timeout(REQUEST_TIMEOUT);
    if healthy {
        builder = builder.authority(MemoryAuthority::new(2));
    }
    builder.build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn every_refusal_has_one_answer_and_the_generator_keeps_it() {
    for (refusal, kind, recourse) in refusals() {
        let message = refusal().to_string();
        assert_eq!(refusal().kind(), kind, "{message}");
        assert_eq!(refusal().recourse(), recourse, "{message}");
        assert_eq!(kind.is_transient(), !recourse.is_lasting(), "{message}");

        // Alone: a lasting refusal is said at once, a transient one waited out.
        let refusing = Arc::new(Refusing::new(refusal));
        let started = Instant::now();
        let error = generator(&refusing, false).next_id().await.unwrap_err();
        let waited = started.elapsed();
        if recourse.is_lasting() {
            assert_eq!(error.recourse(), recourse, "{message}: {error}");
            assert_eq!(waited, Duration::ZERO, "{message}: said at once");
            assert_eq!(error.kind(), kind, "{message}: {error}");
            assert_eq!(refusing.calls(), 1, "{message}");
        } else {
            // No id within the request timeout: an outage to the caller, to try again.
            assert_eq!(error.recourse(), Recourse::Next, "{message}: {error}");
            assert_eq!(waited, REQUEST_TIMEOUT, "{message}: waited out");
            assert!(refusing.calls() > 1, "{message}");
        }
        if recourse == Recourse::Stop {
            assert!(
                !matches!(error.detail(), ErrorDetail::Unavailable { .. }),
                "{message}: the refusal itself, not an outage: {error:?}"
            );
        }

        // Followed by a healthy authority: every refusal but the caller's own is served around.
        let refusing = Arc::new(Refusing::new(refusal));
        let served = generator(&refusing, true).next_id().await;
        match recourse {
            Recourse::Stop => assert!(served.is_err(), "{message}: no authority changes it"),
            _ => assert_eq!(served.unwrap().authority(), 2, "{message}"),
        }
    }
}

/// A timeout is `next`, and a counter that went backwards `repair`: the causes the generator
/// itself finds.
#[tokio::test(start_paused = true)]
async fn a_hung_authority_is_next_and_every_lasting_cause_ends_the_wait() {
    let hung = gdid_engine::testing::FaultyAuthority::new(MemoryAuthority::new(1));
    hung.set_hang(true);
    let ids = BlockGenerator::builder("app", "hung")
        .authority(hung)
        .allocation_timeout(Duration::from_secs(1))
        .request_timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let error = ids.next_id().await.unwrap_err();
    assert_eq!(error.recourse(), Recourse::Next, "{error}");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
}
