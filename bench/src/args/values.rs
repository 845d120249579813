//! The checks of the command line's numbers: counts of at least 1.

/// A count of at least 1.
pub(super) fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number".into()),
    }
}

/// [`positive`] as a `u64` (milliseconds).
pub(super) fn positive_u64(text: &str) -> Result<u64, String> {
    positive(text).map(|n| n as u64)
}

/// One plugin count of `--sizes` (spaces around it allowed: `10, 20`).
pub(super) fn size(text: &str) -> Result<usize, String> {
    positive(text.trim())
}
