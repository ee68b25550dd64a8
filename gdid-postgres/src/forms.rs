//! The parts and the other forms of a `gdid`: `gdid_era`, `gdid_authority`, `gdid_counter`,
//! `gdid_hex`, `gdid_elink`, any form by its name (`gdid_to_form`, `gdid_from_form`: the names
//! of `gdid convert` and `gdid serve`), and the casts from and to `bytea` and from `text`.
//!
//! ```sql
//! SELECT gdid_era(id), gdid_authority(id), gdid_counter(id), gdid_hex(id), gdid_elink(id),
//!        gdid_to_form(id, 'compact')
//! FROM (VALUES ('1293:3:57'::gdid)) AS t (id);
//! -- 1293 | 3 | 57 | 0000050d3000000000000039 | … | 8d0a9307
//! SELECT gdid_from_form('8d0a9307', 'compact');   -- 1293:3:57
//! ALTER TABLE orders ALTER COLUMN id TYPE gdid USING id::gdid;   -- a BYTEA column of GDIDs
//! ```

use gdid::Form;
use pgrx::prelude::*;

use crate::error::raise;
use crate::value::{Gdid, parse};

/// The era, 0 to 2^32 - 1.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_era(id: Gdid) -> i64 {
    i64::from(id.0.era())
}

/// The authority, 0 to 15.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_authority(id: Gdid) -> i32 {
    i32::from(id.0.authority())
}

/// The counter, 0 to 2^60 - 1.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_counter(id: Gdid) -> i64 {
    // 60 bits: never negative as an i64.
    id.0.counter().cast_signed()
}

/// The 24 lowercase hex digits of the 12 bytes.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_hex(id: Gdid) -> String {
    Form::Hex.write(id.0)
}

/// The id written in `form`: `text`, `hex`, `leb`, `compact` (the encodings as hex digits) or
/// `elink` (seed 0), as `gdid convert --to` and `gdid serve` name them.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_to_form(id: Gdid, form: &str) -> String {
    form_named(form).write(id.0)
}

/// The id `value` written in `form` (as [`gdid_to_form`] names it).
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_from_form(value: &str, form: &str) -> Gdid {
    let form = form_named(form);
    form.read(value).map(Gdid).unwrap_or_else(|e| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid {form} value {value:?}: {e}"),
            None,
        )
    })
}

/// The form named `name`, or an error that lists the names.
fn form_named(name: &str) -> Form {
    name.parse().unwrap_or_else(|e| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{name:?}: {e}"),
            None,
        )
    })
}

/// The ELink (NFX/Azos) of the id, spelled with `seed` (0 to 255; 0 by default, so that the same
/// id always shows the same link, as `gdid inspect` shows it).
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_elink(id: Gdid, seed: default!(i32, 0)) -> String {
    let seed = u8::try_from(seed).unwrap_or_else(|_| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("gdid_elink's seed is {seed}: it must be from 0 to 255"),
            None,
        )
    });
    id.0.to_elink(seed)
}

/// `bytea` → `gdid`: exactly 12 bytes, the id's own (a `BYTEA` column of GDIDs migrates with
/// `USING id::gdid`).
#[pg_cast(immutable, parallel_safe, strict)]
fn bytea_to_gdid(bytes: &[u8]) -> Gdid {
    gdid::Gdid::from_slice(bytes).map(Gdid).unwrap_or_else(|_| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
            format!(
                "a bytea of {} bytes is not a gdid: a gdid is 12 bytes",
                bytes.len()
            ),
            None,
        )
    })
}

/// `gdid` → `bytea`: the 12 bytes.
#[pg_cast(immutable, parallel_safe, strict)]
fn gdid_to_bytea(id: Gdid) -> Vec<u8> {
    id.0.to_bytes().to_vec()
}

/// `text` → `gdid`: any text form, as the type's input reads.
#[pg_cast(immutable, parallel_safe, strict)]
fn text_to_gdid(text: &str) -> Gdid {
    parse(text)
}
