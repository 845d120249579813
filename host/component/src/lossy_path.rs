//! Paths written as text: serde's own `Path` serializer fails on a path that is not UTF-8,
//! which would lose a whole answer (every diagnostic of a listing) for one odd file name.
//! These write such a path with U+FFFD in place of the bytes that are not text, as
//! [`Path::to_string_lossy`] does; use them with `#[serde(serialize_with = "...")]` and
//! `#[schemars(with = "String")]` (`option::serialize` and `Option<String>` for an
//! `Option<PathBuf>`).

use std::path::Path;

use serde::Serializer;

/// Writes `path` as text, replacing what is not UTF-8.
pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// The same for an `Option<PathBuf>`, as [`exact_path::option`](crate::exact_path::option) is
/// for `exact_path`.
pub mod option {
    use std::path::{Path, PathBuf};

    use serde::{Serialize, Serializer};

    /// Writes `path` as text (replacing what is not UTF-8), or `null`.
    pub fn serialize<S: Serializer>(
        path: &Option<PathBuf>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        path.as_deref()
            .map(Path::to_string_lossy)
            .serialize(serializer)
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    use super::*;

    #[derive(serde::Serialize)]
    struct Holder {
        #[serde(serialize_with = "option::serialize")]
        path: Option<PathBuf>,
    }

    #[test]
    fn a_path_that_is_not_utf8_is_written_with_replacement_characters() {
        let odd = PathBuf::from(OsStr::from_bytes(b"/plugins/caf\xe9"));
        // What serde alone does with it: the whole value fails.
        assert!(serde_json::to_string(&odd).is_err());
        let text = serde_json::to_string(&Holder { path: Some(odd) }).unwrap();
        assert_eq!(text, "{\"path\":\"/plugins/caf\u{fffd}\"}");
        let none = serde_json::to_string(&Holder { path: None }).unwrap();
        assert_eq!(none, r#"{"path":null}"#);
    }
}
