//! The birthday arithmetic: how likely random ids collide, to pick the range.
//!
//! Drawing `n` ids uniformly from a range of `N` values:
//!
//! - the expected number of ids that repeat an earlier one is `n - N + N·(1 - 1/N)^n`, about
//!   `n² / 2N` while `n` is small next to `N` ([`expected_collisions`]);
//! - the probability that at least one repeats is about `1 - e^(-n(n-1)/2N)` ([`collision_probability`]):
//!   one half near `n = 1.18·√N`, so 12-digit ids (`N = 9·10^11`) see a first collision
//!   around a million records;
//! - with a unique index and retry, an insert into a range filled to ratio `f` needs `1/(1-f)`
//!   attempts on average, and fails `k` times in a row with probability `f^k`
//!   ([`attempts_for`]).
//!
//! ```
//! use gdid_random::birthday;
//!
//! let range = 9e11; // 12-digit ids
//! assert!((birthday::collision_probability(1_120_000.0, range) - 0.5).abs() < 0.01);
//! assert!((birthday::expected_collisions(1e6, range) - 0.555).abs() < 0.01);
//! // At 50% full, 20 attempts fail together about once in a million inserts.
//! assert_eq!(birthday::attempts_for(0.5, 1e-6), 20);
//! ```

/// The expected number of draws, of `n`, that repeat an earlier draw, in a range of `range`
/// values.
pub fn expected_collisions(n: f64, range: f64) -> f64 {
    if n <= 0.0 || range <= 0.0 {
        return 0.0;
    }
    // n - N + N(1 - 1/N)^n, with ln_1p and exp_m1 to keep precision when N is large.
    let distinct = -range * (n * (-1.0 / range).ln_1p()).exp_m1();
    (n - distinct).max(0.0)
}

/// The probability that `n` draws from a range of `range` values hold at least one repeat.
pub fn collision_probability(n: f64, range: f64) -> f64 {
    if n < 2.0 || range <= 0.0 {
        return 0.0;
    }
    -(-n * (n - 1.0) / (2.0 * range)).exp_m1()
}

/// The expected attempts of one insert into a range filled to ratio `fill` (0 to 1).
pub fn expected_attempts(fill: f64) -> f64 {
    if fill >= 1.0 {
        f64::INFINITY
    } else {
        1.0 / (1.0 - fill.max(0.0))
    }
}

/// The attempts an insert should be allowed so that, at fill ratio `fill`, all of them collide
/// with probability at most `failure`: the least `k ≥ 1` with `fill^k ≤ failure`.
pub fn attempts_for(fill: f64, failure: f64) -> usize {
    if fill <= 0.0 {
        return 1;
    }
    if fill >= 1.0 || failure <= 0.0 {
        return usize::MAX;
    }
    let (mut attempts, mut all_collide) = (1, fill);
    while all_collide > failure {
        attempts += 1;
        all_collide *= fill;
    }
    attempts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_match_exact_counts() {
        // 2 draws from 2 values: expected repeats 1/2 exactly; the probability's exponential
        // form (1 - e^-1/2) is the large-range approximation, rough for tiny ranges.
        assert!((collision_probability(2.0, 2.0) - 0.393).abs() < 0.01);
        assert!((expected_collisions(2.0, 2.0) - 0.5).abs() < 1e-9);
        assert!((expected_collisions(3.0, 3.0) - 8.0 / 9.0).abs() < 1e-9);
        assert_eq!(expected_collisions(0.0, 10.0), 0.0);
        assert_eq!(expected_attempts(0.5), 2.0);
        assert_eq!(expected_attempts(1.0), f64::INFINITY);
        assert_eq!(attempts_for(0.0, 1e-9), 1);
        assert_eq!(attempts_for(0.9, 0.01), 44);
    }
}
