//! The `leb` form: `Gdid::decode_leb` on arbitrary bytes.
//!
//! - never panics, and error indexes stay inside the input;
//! - accepts exactly the canonical LEB128(era ≤ u32::MAX) · LEB128(u64) prefixes that an
//!   independent reference reader accepts, with the same values;
//! - the consumed length equals `leb_len()`; `encode_leb` (into a `Vec` or a `BytesMut`) and
//!   `write_leb` give back exactly the consumed bytes; every strict prefix of them is reported
//!   truncated;
//! - the id round-trips through the other variable-length form and the 12-byte form.
#![no_main]

#[path = "common/varint.rs"]
mod varint;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| varint::check(&varint::LEB, data));
