//! The Luhn check digit (ISO/IEC 7812-1) of card and account numbers: it catches every single-digit
//! error and most swaps of adjacent digits.

/// Why a number was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LuhnError {
    /// The text is empty, too long for a `u64`, or holds something other than ASCII digits.
    #[error("{text:?} is not a number: {reason}")]
    NotANumber {
        /// The text (at most 40 characters of it).
        text: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// The last digit is not the check digit of the others.
    #[error("{number}: check digit {found}, expected {expected}")]
    WrongCheckDigit {
        /// The number.
        number: u64,
        /// Its last digit.
        found: u8,
        /// The check digit of the digits before it.
        expected: u8,
    },
}

/// The check digit to append to `body`.
///
/// ```
/// assert_eq!(gdid_random::luhn::check_digit(7_992_739_871), 3);
/// ```
pub fn check_digit(body: u64) -> u8 {
    // Double every second digit from the right of the body (the check digit will be rightmost).
    let (mut sum, mut rest, mut double) = (0u32, body, true);
    loop {
        let digit = u32::from(u8::try_from(rest % 10).unwrap_or(0));
        sum += if double {
            let d = digit * 2;
            if d > 9 { d - 9 } else { d }
        } else {
            digit
        };
        double = !double;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    u8::try_from((10 - sum % 10) % 10).unwrap_or(0)
}

/// `body` with its check digit appended, or `None` when that passes `u64::MAX`.
pub fn with_check_digit(body: u64) -> Option<u64> {
    body.checked_mul(10)?
        .checked_add(u64::from(check_digit(body)))
}

/// Checks the last digit of `number`.
///
/// # Errors
///
/// [`LuhnError::WrongCheckDigit`].
pub fn validate(number: u64) -> Result<u64, LuhnError> {
    let found = u8::try_from(number % 10).unwrap_or(0);
    let expected = check_digit(number / 10);
    if found == expected {
        Ok(number)
    } else {
        Err(LuhnError::WrongCheckDigit {
            number,
            found,
            expected,
        })
    }
}

/// Parses a number of ASCII digits and checks its last digit.
///
/// ```
/// use gdid_random::luhn;
///
/// assert_eq!(luhn::parse("79927398713"), Ok(79_927_398_713));
/// assert!(luhn::parse("79927398710").is_err());
/// assert!(luhn::parse("7992 7398 713").is_err());
/// ```
///
/// # Errors
///
/// [`LuhnError::NotANumber`] or [`LuhnError::WrongCheckDigit`].
pub fn parse(text: &str) -> Result<u64, LuhnError> {
    let not_a_number = |reason: String| LuhnError::NotANumber {
        text: text.chars().take(40).collect(),
        reason,
    };
    if text.is_empty() {
        return Err(not_a_number("empty".into()));
    }
    if let Some((at, c)) = text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        return Err(not_a_number(format!("{c:?} at byte {at} is not a digit")));
    }
    let number = text
        .parse::<u64>()
        .map_err(|_| not_a_number(format!("{} digits do not fit a u64", text.len())))?;
    validate(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers() {
        // Test card numbers published by the card networks.
        for valid in [
            4_111_111_111_111_111_u64,
            5_555_555_555_554_444,
            378_282_246_310_005,
        ] {
            assert_eq!(validate(valid), Ok(valid));
        }
        assert_eq!(check_digit(0), 0);
        assert_eq!(with_check_digit(u64::MAX / 10 + 1), None);
        assert_eq!(
            parse("4111111111111112"),
            Err(LuhnError::WrongCheckDigit {
                number: 4_111_111_111_111_112,
                found: 2,
                expected: 1
            })
        );
        assert!(matches!(parse(""), Err(LuhnError::NotANumber { .. })));
        let err = parse("99999999999999999999").unwrap_err().to_string();
        assert!(err.contains("do not fit"), "{err}");
        let err = parse("12a4").unwrap_err().to_string();
        assert!(err.contains("'a' at byte 2"), "{err}");
    }

    #[test]
    fn every_single_digit_error_is_caught() {
        let number = with_check_digit(123_456_789).unwrap();
        let text = number.to_string();
        for position in 0..text.len() {
            for replacement in b'0'..=b'9' {
                let mut bytes = text.clone().into_bytes();
                if bytes[position] == replacement {
                    continue;
                }
                bytes[position] = replacement;
                let changed = String::from_utf8(bytes).unwrap();
                assert!(parse(&changed).is_err(), "{changed} passed");
            }
        }
    }
}
