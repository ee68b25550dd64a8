//! What a schema says of a `Gdid` in a readable format (JSON): a string, the colon text
//! `era:authority:counter` as serde writes it, or the 24-digit hex form serde also reads. One
//! description for every schema language (features `schemars`, `utoipa`).
//!
//! The pattern bounds each number as the parser does (era at most 4294967295, authority at most
//! 15, counter at most 1152921504606846975), so a string the schema accepts is an id. The parser
//! is more lenient than the pattern (surrounding whitespace, leading zeros): a schema describes
//! the canonical forms, which every reader of the schema can produce.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::{AUTHORITY_MAX, COUNTER_MAX};

/// The schema's name in a document's definitions.
pub(crate) const NAME: &str = "Gdid";

/// The schema's description.
pub(crate) const DESCRIPTION: &str = "A GDID: era:authority:counter in decimal (era up to 4294967295, authority 0-15, counter up to 1152921504606846975), as written; the 24-digit hex form of its 12 bytes is read too.";

/// An example, as serde writes it.
pub(crate) const EXAMPLE: &str = "1293:3:57";

/// The pattern (ECMA 262, anchored) of the colon text and the hex form.
pub(crate) fn pattern() -> String {
    format!(
        "^(?:{}:{}:{}|(?:0[xX])?[0-9A-Fa-f]{{24}})$",
        decimal_at_most(u64::from(u32::MAX)),
        decimal_at_most(u64::from(AUTHORITY_MAX)),
        decimal_at_most(COUNTER_MAX),
    )
}

/// A regular expression of the decimal numbers 0 to `max` without leading zeros: the shorter
/// numbers, then, for each digit of `max`, the numbers that share its digits before it and
/// have a smaller one there, then `max` itself.
fn decimal_at_most(max: u64) -> String {
    let digits = max.to_string();
    let len = digits.len();
    let mut choices = Vec::new();
    if len > 1 {
        choices.push(format!("0|[1-9][0-9]{{0,{}}}", len - 2));
    }
    for (at, digit) in digits.bytes().enumerate() {
        let lowest = if at == 0 && len > 1 { b'1' } else { b'0' };
        if digit > lowest {
            let rest = len - at - 1;
            let tail = if rest > 0 {
                format!("[0-9]{{{rest}}}")
            } else {
                String::new()
            };
            choices.push(format!(
                "{}{}{tail}",
                &digits[..at],
                digit_range(lowest, digit - 1)
            ));
        }
    }
    choices.push(digits);
    format!("(?:{})", choices.join("|"))
}

/// `[a-b]`, or the one digit when `a == b`.
fn digit_range(a: u8, b: u8) -> String {
    if a == b {
        (a as char).to_string()
    } else {
        format!("[{}-{}]", a as char, b as char)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_numbers_up_to_max_are_one_alternation() {
        assert_eq!(decimal_at_most(7), "(?:[0-6]|7)");
        assert_eq!(decimal_at_most(15), "(?:0|[1-9][0-9]{0,0}|1[0-4]|15)");
        assert_eq!(
            decimal_at_most(305),
            "(?:0|[1-9][0-9]{0,1}|[1-2][0-9]{2}|30[0-4]|305)"
        );
    }
}
