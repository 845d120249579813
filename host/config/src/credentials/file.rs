//! The credentials directory and its files: safety checks, bounded reads that never follow a
//! link or block, atomic replacement, and removal by name.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use rho_component::{FileError, FileKind, RegularFile};

use crate::ConfigError;

use super::CREDENTIAL_MAX_BYTES;

/// Age after which a temporary file is a crashed writer's leftover (a save takes milliseconds).
const STALE_TMP_AFTER: Duration = Duration::from_secs(60 * 60);

/// How the name of a temporary file begins, so a sweep finds a crashed writer's leftovers.
const TMP_PREFIX: &str = ".tmp-";

/// Which file was read: device and inode, so a later removal can tell whether the name still
/// holds that file or a newer one another process renamed into place.
pub(super) type FileId = (u64, u64);

/// A credentials file's bytes and identity.
pub(super) struct FileRead {
    pub(super) bytes: Vec<u8>,
    pub(super) id: FileId,
}

fn dir_error(dir: &Path, reason: impl Into<String>) -> ConfigError {
    ConfigError::CredentialsDir {
        path: dir.to_path_buf(),
        reason: reason.into(),
    }
}

fn file_error(server: &str, path: &Path, reason: impl Into<String>) -> ConfigError {
    ConfigError::CredentialFile {
        server: server.to_owned(),
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Whether the credentials directory exists; an error if it exists but is not safe to keep
/// tokens in. Never creates it.
pub(super) fn check_dir(dir: &Path) -> Result<bool, ConfigError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(dir_error(dir, e.to_string())),
    };
    match dir_problem(&meta, effective_uid()) {
        Some(reason) => Err(dir_error(dir, reason)),
        None => Ok(true),
    }
}

/// Creates the credentials directory (owner-only) if needed and checks it.
pub(super) fn ensure_dir(dir: &Path) -> Result<(), ConfigError> {
    if check_dir(dir)? {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(|e| dir_error(dir, format!("cannot create: {e}")))?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => {
            // The umask may have taken bits the owner needs; the directory is still empty, so
            // setting the mode now opens no window.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                    .map_err(|e| dir_error(dir, format!("cannot set its mode to 0700: {e}")))?;
            }
        }
        // Another process created it first: the check below decides, as for any directory.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(dir_error(dir, format!("cannot create: {e}"))),
    }
    check_dir(dir).map(|_| ())
}

/// Why a directory cannot hold credentials: anyone else who can add, swap or link files in it
/// could plant a token for an issuer of their choosing or read what rho writes.
fn dir_problem(meta: &Metadata, uid: Option<u32>) -> Option<&'static str> {
    if !meta.is_dir() {
        return Some(
            "it is not a directory (a symbolic link?); rho keeps credentials only in a real \
             directory of its own",
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if uid.is_some_and(|uid| uid != meta.uid()) {
            return Some("another user owns it");
        }
        if meta.mode() & 0o022 != 0 {
            return Some("its group or other users may write to it (`chmod 700` it)");
        }
    }
    #[cfg(not(unix))]
    let _ = uid;
    None
}

/// Why an opened file cannot be a credentials file of this user.
fn file_problem(meta: &Metadata, uid: Option<u32>) -> Option<&'static str> {
    if !meta.is_file() {
        return Some("it is not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if uid.is_some_and(|uid| uid != meta.uid()) {
            return Some("another user owns it");
        }
    }
    #[cfg(not(unix))]
    let _ = uid;
    None
}

fn effective_uid() -> Option<u32> {
    #[cfg(unix)]
    return Some(rustix::process::geteuid().as_raw());
    #[cfg(not(unix))]
    None
}

#[cfg(unix)]
fn open_flags(flags: rustix::fs::OFlags) -> i32 {
    use rustix::fs::OFlags;
    // NOFOLLOW: a link planted at the name is refused, not followed. NONBLOCK: a FIFO planted
    // there opens at once (and is then refused as not a regular file) instead of waiting for a
    // writer that never comes.
    (OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC | flags).bits() as i32
}

/// Why a link at a credential file's name is refused.
const SYMLINK_REFUSED: &str =
    "it is a symbolic link; rho reads and writes credentials only as regular files";

/// The reason an open of `path` failed, in words: a symbolic link is the likely case, and the
/// error code for it differs between systems.
fn open_failure(path: &Path, error: &io::Error) -> String {
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        SYMLINK_REFUSED.into()
    } else {
        error.to_string()
    }
}

/// The bytes of `path` (at most [`CREDENTIAL_MAX_BYTES`]), or `None` when there is no file.
/// Read through rho's one file reader, with links not followed: a link, FIFO or device planted
/// at the name is refused without blocking, and the length is checked before any read.
pub(super) fn read_bounded(path: &Path, server: &str) -> Result<Option<FileRead>, ConfigError> {
    let fail = |reason: String| file_error(server, path, reason);
    let opened = match RegularFile::options(CREDENTIAL_MAX_BYTES as u64)
        .no_follow()
        .open(path)
    {
        Ok(opened) => opened,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(FileError::NotRegular {
            kind: FileKind::Symlink,
            ..
        }) => return Err(fail(SYMLINK_REFUSED.into())),
        Err(e @ (FileError::NotRegular { .. } | FileError::TooLarge { .. })) => {
            return Err(fail(format!("it is {}", e.problem())));
        }
        Err(e) => return Err(fail(e.problem())),
    };
    if let Some(reason) = file_problem(opened.metadata(), effective_uid()) {
        return Err(fail(reason.into()));
    }
    let id = file_id(opened.metadata());
    let bytes = opened.read_all().map_err(|e| fail(e.problem()))?;
    Ok(Some(FileRead { bytes, id }))
}

fn file_id(meta: &Metadata) -> FileId {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Opens (creating it owner-only if needed) a lock file and checks it is a regular file of the
/// user's. Its content is never read or written.
pub(super) fn open_lock(path: &Path, server: &str) -> Result<File, ConfigError> {
    let fail = |reason: String| file_error(server, path, reason);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options
            .mode(0o600)
            .custom_flags(open_flags(rustix::fs::OFlags::empty()));
    }
    let file = options.open(path).map_err(|e| {
        fail(format!(
            "cannot open the lock file: {}",
            open_failure(path, &e)
        ))
    })?;
    let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
    if let Some(reason) = file_problem(&meta, effective_uid()) {
        return Err(fail(format!("cannot use the lock file: {reason}")));
    }
    Ok(file)
}

/// Replaces `path` with `bytes` so that a reader, or a crash at any point, sees either the old
/// file or the new one whole ([`crate::replace_file`]: an owner-only temporary file, flushed,
/// renamed), and flushes the directory so the rename itself survives a power cut.
pub(super) fn write_atomically(
    dir: &Path,
    stem: &str,
    path: &Path,
    bytes: &[u8],
    server: &str,
) -> Result<(), ConfigError> {
    sweep_stale_temporaries(dir);
    crate::replace_file(dir, &format!("{TMP_PREFIX}{stem}-"), path, bytes)
        .map_err(|e| file_error(server, path, format!("cannot write: {e}")))?;
    crate::sync_dir(dir).map_err(|e| {
        file_error(
            server,
            path,
            format!("written, but the directory could not be flushed to disk: {e}"),
        )
    })
}

/// Removes temporary files a crashed writer left (they hold tokens too). Best effort: a
/// leftover costs nothing but space, and the next save tries again.
fn sweep_stale_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| {
                now.duration_since(modified).unwrap_or_default() > STALE_TMP_AFTER
            });
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Removes the entry at `path` itself (a link is removed, never its target). `false` when there
/// was nothing to remove.
pub(super) fn remove(path: &Path, server: &str) -> Result<bool, ConfigError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(file_error(server, path, format!("cannot remove: {e}"))),
    }
}

/// Removes `path` only if it is still the file `id` names: a newer file another process saved
/// in the meantime is kept.
pub(super) fn remove_if_unchanged(
    path: &Path,
    id: FileId,
    server: &str,
) -> Result<bool, ConfigError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if file_id(&meta) == id => remove(path, server),
        Ok(_) => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(file_error(server, path, e.to_string())),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_may_hold_the_directory_and_its_files() {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("d");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let file = dir.join("f");
        fs::write(&file, b"x").unwrap();
        let (dir_meta, file_meta) = (fs::metadata(&dir).unwrap(), fs::metadata(&file).unwrap());
        let me = dir_meta.uid();
        assert_eq!(dir_problem(&dir_meta, Some(me)), None);
        assert_eq!(file_problem(&file_meta, Some(me)), None);
        // As seen by anyone else, both belong to another user.
        let other = me.wrapping_add(1);
        assert_eq!(
            dir_problem(&dir_meta, Some(other)),
            Some("another user owns it")
        );
        assert_eq!(
            file_problem(&file_meta, Some(other)),
            Some("another user owns it")
        );
        assert!(dir_problem(&file_meta, Some(me)).is_some());
        assert_eq!(
            file_problem(&dir_meta, Some(me)),
            Some("it is not a regular file")
        );
    }

    #[test]
    fn a_discard_spares_a_file_saved_since_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        fs::write(&path, b"old").unwrap();
        let old = read_bounded(&path, "s").unwrap().unwrap();
        write_atomically(dir.path(), "s", &path, b"new", "s").unwrap();
        assert!(!remove_if_unchanged(&path, old.id, "s").unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let new = read_bounded(&path, "s").unwrap().unwrap();
        assert!(remove_if_unchanged(&path, new.id, "s").unwrap());
        assert!(!path.exists());
        assert!(!remove_if_unchanged(&path, new.id, "s").unwrap());
    }
}
