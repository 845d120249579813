//! Environment variable names: the one rule for a variable a config file or a package names
//! for rho to read or pass on (`env_from_env`, `api_key_env`, a WASM component's `env`).

/// Whether `name` can name an environment variable portably: ASCII letters, digits and `_`,
/// not starting with a digit, not empty. A value pasted where a name belongs (a key, a token)
/// almost never passes, so callers refuse it without quoting it.
pub fn valid_env_name(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_letters_digits_and_underscores_not_leading_digits() {
        for ok in ["HOME", "_X", "API_KEY_2", "a"] {
            assert!(valid_env_name(ok), "{ok}");
        }
        for bad in ["", "2X", "A-B", "A B", "sk-abc123", "É"] {
            assert!(!valid_env_name(bad), "{bad}");
        }
    }
}
