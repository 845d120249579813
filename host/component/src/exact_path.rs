//! Paths rho writes into its own files and reads back (a session file's workspace, a trust
//! record's plugin root, where a plugin was installed from), written so that they read back as
//! the same path: a UTF-8 path as its text (so every file written before this reads as it
//! did), and a path that is not UTF-8 as its bytes, an array of numbers in JSON and TOML
//! alike. serde alone refuses the latter, which made every prompt in such a workspace fail
//! before its first line was saved, and `rho plugins trust` and `install` fail there.
//!
//! Use with `#[serde(with = "rho_component::exact_path")]`, or `exact_path::option` for an
//! `Option<PathBuf>`. What is only shown, never read back, goes through
//! [`lossy_path`](crate::lossy_path) instead.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

/// Writes `path` as text when it is UTF-8, otherwise as its bytes.
pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    match path.to_str() {
        Some(text) => serializer.serialize_str(text),
        None => serializer.collect_seq(bytes_of(path)),
    }
}

/// Reads a path written by [`serialize`]; anything else is an error that says what was
/// expected.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
    deserializer.deserialize_any(PathVisitor)
}

/// Text, or an array of bytes.
struct PathVisitor;

impl<'de> Visitor<'de> for PathVisitor {
    type Value = PathBuf;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a path: its text, or an array of its bytes")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<PathBuf, E> {
        Ok(PathBuf::from(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PathBuf, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        Ok(path_of(bytes))
    }
}

/// The same for an `Option<PathBuf>` (`None` is written as nothing when the field is skipped,
/// or as `null`).
pub mod option {
    use std::path::PathBuf;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the path as [`super::serialize`] does, or `None`.
    pub fn serialize<S: Serializer>(
        path: &Option<PathBuf>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match path {
            Some(path) => serializer.serialize_some(&Exact(path)),
            None => serializer.serialize_none(),
        }
    }

    /// Reads what [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<PathBuf>, D::Error> {
        Ok(Option::<Read>::deserialize(deserializer)?.map(|read| read.0))
    }

    struct Exact<'a>(&'a std::path::Path);

    impl serde::Serialize for Exact<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            super::serialize(self.0, serializer)
        }
    }

    struct Read(PathBuf);

    impl<'de> Deserialize<'de> for Read {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            super::deserialize(deserializer).map(Read)
        }
    }
}

#[cfg(unix)]
fn bytes_of(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn path_of(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

// Elsewhere a path that is not UTF-8 has no byte form rho reads back; its text (with U+FFFD)
// is the best there is.
#[cfg(not(unix))]
fn bytes_of(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn path_of(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        cwd: PathBuf,
    }

    #[test]
    fn a_utf8_path_is_text_and_one_that_is_not_is_bytes_and_both_read_back() {
        let plain = Holder {
            cwd: PathBuf::from("/w/café"),
        };
        let text = serde_json::to_string(&plain).unwrap();
        assert_eq!(text, r#"{"cwd":"/w/café"}"#);
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), plain);
        let odd = Holder {
            cwd: PathBuf::from(OsStr::from_bytes(b"/w/caf\xe9")),
        };
        let text = serde_json::to_string(&odd).unwrap();
        assert_eq!(text, r#"{"cwd":[47,119,47,99,97,102,233]}"#);
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), odd);
        // Anything else is refused, not guessed.
        let wrong = serde_json::from_str::<Holder>(r#"{"cwd":7}"#).unwrap_err();
        assert!(
            wrong
                .to_string()
                .contains("expected a path: its text, or an array of its bytes"),
            "{wrong}"
        );
        assert!(serde_json::from_str::<Holder>(r#"{"cwd":[256]}"#).is_err());
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Maybe {
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "super::option"
        )]
        from: Option<PathBuf>,
    }

    #[test]
    fn an_optional_path_round_trips_in_toml_too() {
        let odd = Maybe {
            from: Some(PathBuf::from(OsStr::from_bytes(b"/s/caf\xe9"))),
        };
        let text = toml::to_string(&odd).unwrap();
        assert_eq!(text, "from = [47, 115, 47, 99, 97, 102, 233]\n");
        assert_eq!(toml::from_str::<Maybe>(&text).unwrap(), odd);
        let plain = Maybe {
            from: Some(PathBuf::from("/s/json-tools")),
        };
        let text = toml::to_string(&plain).unwrap();
        assert_eq!(text, "from = \"/s/json-tools\"\n");
        assert_eq!(toml::from_str::<Maybe>(&text).unwrap(), plain);
        let none = Maybe { from: None };
        assert_eq!(toml::to_string(&none).unwrap(), "");
        assert_eq!(toml::from_str::<Maybe>("").unwrap(), none);
    }
}
