//! Creating a sequence's layout, atomically, on any [`RangeStore`]: the one routine every backend
//! shares.
//!
//! 1. Read the layout record. If there is none, the range records stored before layouts were
//!    recorded (if any) must be ranges of the layout asked for; then the record is written with
//!    one insert-if-absent, and read back: of creators racing on a fresh sequence, the first
//!    write wins and every creator reads the same record.
//! 2. A record of another layout refuses the one asked for
//!    ([`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig)), before any range record
//!    is written.
//! 3. The missing range records are written, each with an insert-if-absent (every creator of
//!    this layout writes identical ones), and the stored ranges are checked again.

use super::{RangeLayout, RangeStore};
use crate::generator_error::Error;

/// Makes `layout` the layout of the store's sequence, or finds it is already, and creates its
/// missing range records.
///
/// # Errors
///
/// [`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig) for another layout,
/// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt) for stored records that cannot be right,
/// the store's errors.
pub(super) async fn establish<S: RangeStore>(store: &S, layout: RangeLayout) -> Result<(), Error> {
    let recorded = match store.read_layout().await? {
        Some(recorded) => recorded,
        None => {
            // Ranges stored before layouts were recorded: they must be this layout's.
            let stored = store.list().await?;
            if let Err(reason) = layout.check_stored(&stored) {
                // Or a creator of another layout recorded it and wrote its ranges since the
                // read above: then that is what to say.
                return Err(match store.read_layout().await? {
                    Some(recorded) if recorded != layout => refused_for(store, layout, recorded),
                    _ => refused(store, layout, &reason.to_string()),
                });
            }
            store.insert_layout(layout).await?;
            store.read_layout().await?.ok_or_else(|| {
                Error::store(format!(
                    "{} was written, then not found",
                    store.layout_record()
                ))
            })?
        }
    };
    if recorded != layout {
        return Err(refused_for(store, layout, recorded));
    }
    let first_missing = checked_against_record(store, layout).await?;
    if first_missing == layout.ranges() {
        return Ok(());
    }
    for k in first_missing..layout.ranges() {
        store.insert_range(k, layout.range(k)).await?;
    }
    let complete = checked_against_record(store, layout).await?;
    if complete != layout.ranges() {
        return Err(Error::corrupt(format!(
            "{}: {complete} ranges are stored after creating all {}",
            store.layout_record(),
            layout.ranges()
        )));
    }
    Ok(())
}

/// The first range of `layout` (the recorded layout) that the store lacks.
///
/// # Errors
///
/// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt) when the stored ranges disagree with their
/// layout record.
async fn checked_against_record<S: RangeStore>(
    store: &S,
    layout: RangeLayout,
) -> Result<u32, Error> {
    let stored = store.list().await?;
    layout.check_stored(&stored).map_err(|reason| {
        Error::corrupt(format!(
            "the ranges of {:?} disagree with {} ({layout}): {reason}",
            store.sequence(),
            store.layout_record()
        ))
    })
}

/// The error for asking `layout` of a sequence created with `recorded`.
fn refused_for<S: RangeStore>(store: &S, layout: RangeLayout, recorded: RangeLayout) -> Error {
    refused(
        store,
        layout,
        &format!("the sequence was created with {recorded}, which is its layout for good"),
    )
}

/// The error for asking `layout` of a sequence that has another.
fn refused<S: RangeStore>(store: &S, layout: RangeLayout, reason: &str) -> Error {
    Error::invalid_config(format!(
        "{layout} refused as the range layout of {:?}: {reason}; going on could repeat ids",
        store.sequence()
    ))
}
