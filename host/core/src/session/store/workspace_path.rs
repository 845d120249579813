//! The workspace path in a session file's header, written so that it reads back as the same
//! path: a UTF-8 path as its text (every file rho wrote before this stays as it was), and a
//! path that is not UTF-8 as its bytes (a JSON array of numbers). serde alone refuses the
//! latter, which made every prompt in such a workspace fail before its first line was saved.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The two ways a path is written.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Written<'a> {
    Text(std::borrow::Cow<'a, str>),
    Bytes(Vec<u8>),
}

/// Writes `path` as text when it is UTF-8, otherwise as its bytes.
pub(super) fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    match path.to_str() {
        Some(text) => Written::Text(text.into()).serialize(serializer),
        None => Written::Bytes(bytes_of(path)).serialize(serializer),
    }
}

/// Reads a path written by [`serialize`].
pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
    Ok(match Written::deserialize(deserializer)? {
        Written::Text(text) => PathBuf::from(text.into_owned()),
        Written::Bytes(bytes) => path_of(bytes),
    })
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
        assert!(serde_json::from_str::<Holder>(r#"{"cwd":7}"#).is_err());
        assert!(serde_json::from_str::<Holder>(r#"{"cwd":[256]}"#).is_err());
    }
}
