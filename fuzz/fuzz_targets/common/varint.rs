//! Shared by the `leb` and `compact` targets: both forms are LEB128(era) · LEB128(u64) and differ
//! only in how the u64 packs the authority and the counter.

use bytes::BytesMut;
use gdid_core::{BufferTooSmall, DecodeError, Gdid};

type Decode = fn(&[u8]) -> Result<(Gdid, usize), DecodeError>;

pub struct Form {
    pub decode: Decode,
    pub encode: fn(&Gdid, &mut Vec<u8>),
    pub encode_bytes: fn(&Gdid, &mut BytesMut),
    pub write: fn(&Gdid, &mut [u8]) -> Result<usize, BufferTooSmall>,
    pub len: fn(&Gdid) -> usize,
    /// The u64 the form stores after the era.
    pub packed: fn(&Gdid) -> u64,
    /// The other form, which must round-trip the same id.
    pub other: &'static Form,
}

pub static LEB: Form = Form {
    decode: Gdid::decode_leb,
    encode: |g, out| g.encode_leb(out),
    encode_bytes: |g, out| g.encode_leb(out),
    write: Gdid::write_leb,
    len: Gdid::leb_len,
    packed: Gdid::id64,
    other: &COMPACT,
};

pub static COMPACT: Form = Form {
    decode: Gdid::decode_compact,
    encode: |g, out| g.encode_compact(out),
    encode_bytes: |g, out| g.encode_compact(out),
    write: Gdid::write_compact,
    len: Gdid::compact_len,
    packed: |g| (g.counter() << 4) | u64::from(g.authority()),
    other: &LEB,
};

pub fn check(form: &Form, data: &[u8]) {
    let decoded = (form.decode)(data);

    // An independent reader of canonical LEB128 accepts exactly the same inputs.
    let reference = read_uleb(data, u64::from(u32::MAX)).and_then(|(era, n)| {
        read_uleb(&data[n..], u64::MAX).map(|(packed, m)| (era, packed, n + m))
    });
    match (&decoded, reference) {
        (Ok((g, used)), Some((era, packed, n))) => {
            assert_eq!(
                *used, n,
                "consumed length differs from the reference reader"
            );
            assert_eq!(u64::from(g.era()), era);
            assert_eq!((form.packed)(g), packed);
        }
        (Err(_), None) => {}
        (got, want) => panic!("decoder {got:?} but reference reader {want:?} on {data:02x?}"),
    }

    let (g, used) = match decoded {
        Ok(ok) => ok,
        Err(e) => {
            let _ = e.to_string();
            let index = match e {
                DecodeError::Truncated { index, .. }
                | DecodeError::NonCanonical { index, .. }
                | DecodeError::Overflow { index, .. } => index,
                _ => 0,
            };
            assert!(
                index <= data.len(),
                "error index {index} past the input: {e}"
            );
            return;
        }
    };

    // The consumed length is the encoded length, and re-encoding gives exactly those bytes
    // (only canonical encodings are accepted).
    assert!(used <= data.len());
    assert!((2..=Gdid::VARINT_MAX_LEN).contains(&used));
    assert_eq!(used, (form.len)(&g));
    let consumed = &data[..used];
    let mut encoded = Vec::new();
    (form.encode)(&g, &mut encoded);
    assert_eq!(encoded, consumed, "re-encoding {g} differs from the input");
    // Encoding appends, whatever the `BufMut`.
    let mut appended = vec![0xa5];
    (form.encode)(&g, &mut appended);
    assert_eq!(&appended[1..], consumed);
    let mut buf = BytesMut::from(&b"prefix"[..]);
    (form.encode_bytes)(&g, &mut buf);
    assert_eq!(&buf[6..], consumed);
    let mut out = [0u8; Gdid::VARINT_MAX_LEN];
    assert_eq!((form.write)(&g, &mut out), Ok(used));
    assert_eq!(&out[..used], consumed);
    assert!((form.write)(&g, &mut out[..used - 1]).is_err());

    // Decoding only looks at the consumed prefix, and every strict prefix is truncated.
    assert_eq!((form.decode)(consumed), Ok((g, used)));
    for cut in 0..used {
        assert!(
            matches!(
                (form.decode)(&consumed[..cut]),
                Err(DecodeError::Truncated { .. })
            ),
            "prefix of {cut} bytes of {consumed:02x?} is not reported truncated"
        );
    }

    // The other variable-length form and the 12-byte form carry the same id.
    let mut other = Vec::new();
    (form.other.encode)(&g, &mut other);
    assert_eq!((form.other.decode)(&other), Ok((g, other.len())));
    assert_eq!(Gdid::from_slice(&g.to_bytes()), Ok(g));
}

/// Canonical unsigned LEB128 no greater than `max`, the slow and obvious way.
fn read_uleb(data: &[u8], max: u64) -> Option<(u64, usize)> {
    let mut value: u128 = 0;
    for (i, &byte) in data.iter().enumerate() {
        if i >= 10 {
            return None;
        }
        value |= u128::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            // Canonical: the last group is not zero, unless it is the only one.
            if i > 0 && byte == 0 {
                return None;
            }
            return u64::try_from(value)
                .ok()
                .filter(|v| *v <= max)
                .map(|v| (v, i + 1));
        }
    }
    None
}
