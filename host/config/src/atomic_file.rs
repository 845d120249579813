//! Atomic replacement of a file rho owns: a reader, or a crash at any point, sees the old file
//! or the new one whole, never a torn one.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Temporary names are unique per process and write.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Replaces `path`, a file in `dir`, with `bytes`: a fresh temporary file in `dir` named
/// `<tmp_prefix><pid>-<n>` (owner-only from the moment it exists; `create_new`, so a link or
/// anything else planted at its name is refused, not followed), written, flushed to disk and
/// renamed over `path`. On failure the temporary file is removed and `path` is untouched.
///
/// The rename survives a power cut only once the directory is flushed too ([`sync_dir`]);
/// callers decide whether a failure to do that is an error. Callers that sweep leftovers of a
/// crashed writer look for `tmp_prefix`.
pub fn replace_file(dir: &Path, tmp_prefix: &str, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{tmp_prefix}{}-{seq}", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Flushes `dir` itself to disk, so a rename into it ([`replace_file`]) survives a power cut.
/// A link at `dir` is refused, not followed.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(
            (OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC).bits()
                as i32,
        );
    }
    options.open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        fs::write(&path, "old").unwrap();
        replace_file(tmp.path(), ".tmp-", &path, b"new").unwrap();
        sync_dir(tmp.path()).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["state.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        fs::write(&path, "old").unwrap();
        let missing = tmp.path().join("missing");
        assert!(replace_file(&missing, ".tmp-", &path, b"new").is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
    }
}
