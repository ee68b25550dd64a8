#![cfg(feature = "serde")]
//! serde: readable formats get the colon text, binary formats the 12 bytes; the `with` helpers.

use gdid_core::Gdid;
use serde::{Deserialize, Serialize};
use serde_test::{Configure, Token, assert_de_tokens, assert_de_tokens_error, assert_tokens};

const SAMPLE: Gdid = gdid_core::gdid!("1293:3:57");
const SAMPLE_BYTES: [u8; 12] = SAMPLE.to_bytes();

fn sample() -> Gdid {
    SAMPLE
}

#[test]
fn readable_formats_get_the_colon_text() {
    assert_tokens(&sample().readable(), &[Token::Str("1293:3:57")]);
    // The hex form is accepted too.
    assert_de_tokens(
        &sample().readable(),
        &[Token::Str("0x0000050d3000000000000039")],
    );
}

#[test]
fn binary_formats_get_the_twelve_bytes() {
    assert_tokens(&sample().compact(), &[Token::Bytes(&SAMPLE_BYTES)]);
    let mut seq = vec![Token::Seq { len: Some(12) }];
    seq.extend(SAMPLE_BYTES.iter().map(|b| Token::U8(*b)));
    seq.push(Token::SeqEnd);
    assert_de_tokens(&sample().compact(), &seq);
}

#[test]
fn bad_input_gets_a_precise_error() {
    assert_de_tokens_error::<serde_test::Readable<Gdid>>(
        &[Token::Str("1:18:3")],
        "GDID parsing failed: the authority segment at byte 2 is out of range: the maximum is 15",
    );
    assert_de_tokens_error::<serde_test::Compact<Gdid>>(
        &[Token::Bytes(&[1, 2, 3])],
        "GDID parsing failed: expected 12 bytes, found 3",
    );
    assert_de_tokens_error::<serde_test::Compact<Gdid>>(
        &[
            Token::Seq { len: Some(2) },
            Token::U8(1),
            Token::U8(2),
            Token::SeqEnd,
        ],
        "invalid length 2, expected a GDID as era:authority:counter text, 24 hex digits or 12 bytes",
    );
    assert_de_tokens_error::<serde_test::Readable<Gdid>>(
        &[Token::I64(5)],
        "invalid type: integer `5`, expected a GDID as era:authority:counter text, 24 hex digits or 12 bytes",
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Forms {
    plain: Gdid,
    #[serde(with = "gdid_core::serde::text")]
    text: Gdid,
    #[serde(with = "gdid_core::serde::hex")]
    hex: Gdid,
    #[serde(with = "gdid_core::serde::bytes")]
    bytes: Gdid,
    #[serde(with = "gdid_core::serde::compact")]
    compact: Gdid,
}

#[test]
fn with_helpers_pick_one_form_whatever_the_format() {
    let id = sample();
    let forms = Forms {
        plain: id,
        text: id,
        hex: id,
        bytes: id,
        compact: id,
    };
    let json = serde_json::to_string(&forms).unwrap();
    assert_eq!(
        json,
        r#"{"plain":"1293:3:57","text":"1293:3:57","hex":"0000050d3000000000000039","bytes":[0,0,5,13,48,0,0,0,0,0,0,57],"compact":[141,10,147,7]}"#
    );
    assert_eq!(serde_json::from_str::<Forms>(&json).unwrap(), forms);
}

#[test]
fn compact_helper_rejects_trailing_and_truncated_bytes() {
    #[derive(Deserialize, Debug)]
    struct Only {
        #[serde(with = "gdid_core::serde::compact")]
        #[allow(dead_code)]
        id: Gdid,
    }
    let err = serde_json::from_str::<Only>(r#"{"id":[141,10,147,7,0]}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("GDID parsing failed: 1 bytes after the compact form"),
        "{err}"
    );
    let err = serde_json::from_str::<Only>(r#"{"id":[141,10,147]}"#).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "GDID parsing failed: input ends inside the counter<<4|authority at byte 3"
        ),
        "{err}"
    );
}
