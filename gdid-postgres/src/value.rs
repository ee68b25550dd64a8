//! The `gdid` type: 12 bytes, fixed length, passed by reference, stored without a length header
//! (`STORAGE = plain`), equal and ordered as its bytes (the id's order).
//!
//! Its text input reads any form `gdid convert --from auto` reads (`era:authority:counter`, 24 hex
//! digits, an ELink); its output is `era:authority:counter`. Its binary form, in and out, is the
//! 12 bytes.

use std::ffi::CStr;

use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::{Datum, FromDatum, IntoDatum};
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::prelude::*;
use pgrx::{PgMemoryContexts, StringInfo, pg_sys, rust_regtypein};

use crate::error::raise;

/// A `gdid` value: [`gdid::Gdid`] as PostgreSQL holds it. Ordered as its bytes, as `gdid::Gdid`
/// is: the derived `=`, `<`, … operators and the btree operator class follow that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, PostgresEq, PostgresOrd)]
#[repr(transparent)]
pub struct Gdid(pub gdid::Gdid);

/// The bytes of a `gdid` datum.
type Bytes = [u8; gdid::Gdid::SIZE];

/// Their number, as PostgreSQL's functions take lengths.
const SIZE: i32 = 12;
const _: () = assert!(gdid::Gdid::SIZE == 12);

impl FromDatum for Gdid {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            return None;
        }
        // SAFETY: a non-null datum of type gdid points to its 12 bytes (INTERNALLENGTH = 12,
        // ALIGNMENT = char): readable, of alignment 1, whatever the pointer's.
        let bytes = unsafe { datum.cast_mut_ptr::<Bytes>().read_unaligned() };
        Some(Gdid(gdid::Gdid::from_bytes(bytes)))
    }
}

impl IntoDatum for Gdid {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // SAFETY: palloc in the current memory context returns memory for one `Bytes` (alignment
        // 1), which PostgreSQL frees with the context; it is written whole before it is handed
        // over.
        let raw = unsafe { PgMemoryContexts::CurrentMemoryContext.palloc_struct::<Bytes>() };
        // SAFETY: `raw` is valid for one `Bytes`, as above.
        unsafe { raw.write(self.0.to_bytes()) };
        Some(raw.into())
    }

    fn type_oid() -> pg_sys::Oid {
        rust_regtypein::<Self>()
    }
}

// SAFETY: an argument declared `gdid` in SQL is a gdid datum, which `FromDatum` reads.
unsafe impl<'fcx> ArgAbi<'fcx> for Gdid
where
    Self: 'fcx,
{
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        // SAFETY: the caller (pgrx) passes an argument of this function's SQL type, gdid.
        unsafe { arg.unbox_arg_using_from_datum() }
            .unwrap_or_else(|| error!("a gdid argument of a STRICT function is NULL"))
    }
}

// SAFETY: the datum returned is a gdid datum, the function's declared SQL return type.
unsafe impl BoxRet for Gdid {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: a gdid datum palloc'd in the current memory context, as returns must be.
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

// SAFETY: `gdid` is the SQL type this extension creates for `Gdid` (below).
unsafe impl SqlTranslatable for Gdid {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(Gdid);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::ThisExtension;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("gdid"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("gdid")));
}

/// Reads `text` in any text form of a GDID, or raises `invalid_text_representation` naming the
/// input and what is wrong with it.
pub(crate) fn parse(text: &str) -> Gdid {
    gdid::Gdid::parse_any(text).map(Gdid).unwrap_or_else(|reason| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type gdid: {text:?}: {reason}"),
            Some("A gdid is written era:authority:counter (0:1:7), as 24 hex digits or as an ELink."),
        )
    })
}

/// The text input function: any text form.
#[pg_extern(immutable, parallel_safe, strict, requires = ["gdid_shell_type"])]
fn gdid_in(input: &CStr) -> Gdid {
    match input.to_str() {
        Ok(text) => parse(text),
        Err(_) => raise(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type gdid: {input:?} is not UTF-8"),
            None,
        ),
    }
}

/// The text output function: `era:authority:counter`.
#[pg_extern(immutable, parallel_safe, strict, requires = ["gdid_shell_type"])]
fn gdid_out(id: Gdid) -> &'static CStr {
    let mut buffer = [0; gdid::Gdid::TEXT_MAX_LEN];
    let text = id.0.encode_text(&mut buffer);
    let mut out = StringInfo::new();
    out.push_str(text);
    // SAFETY: the StringInfo is palloc'd, NUL-terminated by push_str, and holds ASCII digits and
    // colons only (no interior NUL); PostgreSQL frees it with the memory context.
    unsafe { out.leak_cstr() }
}

/// The binary receive function: exactly 12 bytes.
#[pg_extern(immutable, parallel_safe, strict, requires = ["gdid_shell_type"])]
fn gdid_recv(mut internal: pgrx::Internal) -> Gdid {
    // SAFETY: a type's receive function is called with the message buffer, a StringInfo, as its
    // `internal` argument. `pq_getmsgbytes` raises an ERROR if fewer than 12 bytes are left and
    // returns a pointer to 12 readable bytes otherwise (read unaligned: alignment 1);
    // `pq_getmsgend` raises one if any byte is left over.
    unsafe {
        let buffer = internal
            .get_mut::<pg_sys::StringInfoData>()
            .unwrap_or_else(|| error!("gdid_recv was called without a message buffer"));
        let bytes = pg_sys::pq_getmsgbytes(buffer, SIZE)
            .cast::<Bytes>()
            .read_unaligned();
        pg_sys::pq_getmsgend(buffer);
        Gdid(gdid::Gdid::from_bytes(bytes))
    }
}

/// The binary send function: the 12 bytes.
#[pg_extern(immutable, parallel_safe, strict, requires = ["gdid_shell_type"])]
fn gdid_send(id: Gdid) -> Vec<u8> {
    id.0.to_bytes().to_vec()
}

// PostgreSQL's byte hashes (common/hashfn.h), which `hash_any` and `hashbytea` call; pgrx does
// not bind that header. They read `keylen` bytes and raise no error.
unsafe extern "C" {
    fn hash_bytes(k: *const u8, keylen: i32) -> u32;
    fn hash_bytes_extended(k: *const u8, keylen: i32, seed: u64) -> u64;
}

/// A hash of the 12 bytes by PostgreSQL's own `hash_any`, as `bytea`'s: stable across releases of
/// this extension and of Rust, as a hash index needs.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_hash(id: Gdid) -> i32 {
    let bytes = id.0.to_bytes();
    // SAFETY: `hash_any` reads `len` bytes from the pointer, here a live 12-byte array.
    let hash = unsafe { hash_bytes(bytes.as_ptr(), SIZE) };
    // The bits of PostgreSQL's int4 hash, as `hashtext` returns them.
    hash.cast_signed()
}

/// The seeded 64-bit hash of the 12 bytes (`hash_any_extended`, as `hashbyteaextended`), for hash partitioning.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_hash_extended(id: Gdid, seed: i64) -> i64 {
    let bytes = id.0.to_bytes();
    // SAFETY: as in `gdid_hash`.
    let hash = unsafe { hash_bytes_extended(bytes.as_ptr(), SIZE, seed.cast_unsigned()) };
    hash.cast_signed()
}

/// The larger of two ids: `max(gdid)`'s step.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_larger(left: Gdid, right: Gdid) -> Gdid {
    left.max(right)
}

/// The smaller of two ids: `min(gdid)`'s step.
#[pg_extern(immutable, parallel_safe, strict)]
fn gdid_smaller(left: Gdid, right: Gdid) -> Gdid {
    left.min(right)
}

extension_sql!("CREATE TYPE gdid;", name = "gdid_shell_type", bootstrap);

extension_sql!(
    r#"
CREATE TYPE gdid (
    INPUT = gdid_in,
    OUTPUT = gdid_out,
    RECEIVE = gdid_recv,
    SEND = gdid_send,
    INTERNALLENGTH = 12,
    ALIGNMENT = char,
    STORAGE = plain
);
COMMENT ON TYPE gdid IS 'A GDID: era (32 bits), authority (4 bits), counter (60 bits), as 12 bytes whose order is the id''s order';
"#,
    name = "gdid_type",
    creates = [Type(Gdid)],
    requires = ["gdid_shell_type", gdid_in, gdid_out, gdid_recv, gdid_send]
);

extension_sql!(
    r#"
CREATE OPERATOR CLASS gdid_hash_ops DEFAULT FOR TYPE gdid USING hash AS
    OPERATOR 1 = (gdid, gdid),
    FUNCTION 1 gdid_hash(gdid),
    FUNCTION 2 gdid_hash_extended(gdid, bigint);
"#,
    name = "gdid_hash_ops",
    requires = ["gdid_type", gdid_hash, gdid_hash_extended, gdid_eq]
);

extension_sql!(
    r#"
CREATE AGGREGATE max(gdid) (SFUNC = gdid_larger, STYPE = gdid, SORTOP = >, COMBINEFUNC = gdid_larger, PARALLEL = SAFE);
CREATE AGGREGATE min(gdid) (SFUNC = gdid_smaller, STYPE = gdid, SORTOP = <, COMBINEFUNC = gdid_smaller, PARALLEL = SAFE);
"#,
    name = "gdid_min_max",
    requires = ["gdid_type", gdid_larger, gdid_smaller, gdid_lt, gdid_gt]
);
