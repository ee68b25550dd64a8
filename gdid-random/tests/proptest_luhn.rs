//! The Luhn check digit over arbitrary numbers: appended, it validates; any one digit changed,
//! it does not; draws stay in their range.

use gdid_random::{IdRange, RandomIdGenerator, luhn};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

proptest! {
    #[test]
    fn a_check_digit_validates_and_catches_any_one_changed_digit(
        body in 0..u64::MAX / 10,
        position in any::<prop::sample::Index>(),
        delta in 1u8..10,
    ) {
        let number = luhn::with_check_digit(body).unwrap();
        prop_assert_eq!(luhn::validate(number), Ok(number));
        let text = number.to_string();
        prop_assert_eq!(luhn::parse(&text), Ok(number));
        let mut bytes = text.into_bytes();
        let at = position.index(bytes.len());
        bytes[at] = b'0' + (bytes[at] - b'0' + delta) % 10;
        let changed = String::from_utf8(bytes).unwrap();
        // A changed number may no longer fit a u64; it must never pass.
        prop_assert!(luhn::parse(&changed).is_err(), "{} passed", changed);
    }

    #[test]
    fn draws_stay_in_any_range(lo in any::<u64>(), width in 1u64..1_000, seed in any::<u64>()) {
        let lo = lo.min(u64::MAX - width);
        let hi = lo + width;
        let ids = RandomIdGenerator::with_rng(IdRange::new(lo..hi).unwrap(), StdRng::seed_from_u64(seed));
        for _ in 0..50 {
            let id = ids.draw();
            prop_assert!((lo..hi).contains(&id));
        }
    }
}
