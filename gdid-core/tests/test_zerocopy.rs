//! zerocopy (feature `zerocopy`): bytes of ids viewed in place when 4-aligned, copied or
//! refused otherwise, and refused when their length is not a multiple of 12.

use std::borrow::Cow;

use gdid_core::Gdid;
use gdid_core::proptest::increasing;
use gdid_core::zerocopy::{ViewError, bytes_of, view, view_or_copy};
use proptest::prelude::*;
use zerocopy::FromBytes;

/// `ids`' bytes at offset `shift` of a 4-aligned buffer (a `Vec<u32>`'s storage).
fn buffer_at(ids: &[Gdid], shift: usize) -> (Vec<u32>, usize) {
    let len = shift + ids.len() * Gdid::SIZE;
    let mut words = vec![0u32; len.div_ceil(4) + 1];
    let bytes: &mut [u8] = zerocopy::IntoBytes::as_mut_bytes(&mut words[..]);
    for (i, id) in ids.iter().enumerate() {
        let at = shift + i * Gdid::SIZE;
        bytes[at..at + Gdid::SIZE].copy_from_slice(&id.to_bytes());
    }
    (words, len)
}

fn bytes(words: &[u32]) -> &[u8] {
    zerocopy::IntoBytes::as_bytes(words)
}

#[test]
fn aligned_bytes_are_viewed_in_place() {
    let ids = [
        Gdid::from_parts(1, 2, 3).unwrap(),
        Gdid::from_parts(7, 15, 1 << 59).unwrap(),
    ];
    let (words, len) = buffer_at(&ids, 0);
    let input = &bytes(&words)[..len];
    let viewed = view(input).unwrap();
    assert_eq!(viewed, ids);
    assert_eq!(
        viewed.as_ptr().cast::<u8>(),
        input.as_ptr(),
        "a view, not a copy"
    );
    match view_or_copy(input).unwrap() {
        Cow::Borrowed(viewed) => assert_eq!(viewed.as_ptr().cast::<u8>(), input.as_ptr()),
        Cow::Owned(_) => panic!("aligned bytes were copied"),
    }
    assert_eq!(bytes_of(viewed), input);
    assert_eq!(view(&[]).unwrap(), &[] as &[Gdid]);
}

#[test]
fn unaligned_bytes_are_an_error_or_a_copy() {
    let ids = [
        Gdid::from_parts(1, 2, 3).unwrap(),
        Gdid::from_parts(1, 2, 4).unwrap(),
    ];
    for shift in 1..4 {
        let (words, len) = buffer_at(&ids, shift);
        let input = &bytes(&words)[shift..len];
        assert_eq!(view(input), Err(ViewError::Unaligned), "shift {shift}");
        match view_or_copy(input).unwrap() {
            Cow::Owned(copied) => assert_eq!(copied, ids),
            Cow::Borrowed(_) => panic!("unaligned bytes were viewed"),
        }
    }
}

#[test]
fn a_length_not_a_multiple_of_12_is_an_error() {
    let (words, _) = buffer_at(&[Gdid::ZERO; 3], 0);
    for len in [1, 11, 13, 23, 25, 35] {
        let input = &bytes(&words)[..len];
        assert_eq!(view(input), Err(ViewError::Length { len }));
        assert_eq!(view_or_copy(input), Err(ViewError::Length { len }));
        assert_eq!(
            view_or_copy(&bytes(&words)[1..=len]),
            Err(ViewError::Length { len }),
            "unaligned too"
        );
    }
    assert_eq!(
        ViewError::Length { len: 13 }.to_string(),
        "13 bytes are not a whole number of 12-byte ids"
    );
}

#[test]
fn zerocopys_own_api_reads_ids_anywhere() {
    let id = Gdid::from_parts(1293, 3, 57).unwrap();
    let mut unaligned = [0u8; 13];
    unaligned[1..].copy_from_slice(&id.to_bytes());
    assert_eq!(Gdid::read_from_bytes(&unaligned[1..]), Ok(id));
}

proptest! {
    #[test]
    fn every_run_of_ids_is_viewed_or_copied_unchanged(ids in increasing(0..40), shift in 0usize..4) {
        let (words, len) = buffer_at(&ids, shift);
        let input = &bytes(&words)[shift..len];
        prop_assert_eq!(&*view_or_copy(input).unwrap(), &ids[..]);
        prop_assert_eq!(view(input).is_ok(), shift == 0 || ids.is_empty());
    }
}
