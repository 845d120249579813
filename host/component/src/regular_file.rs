//! The one way rho reads a file a user or a package names: regular files only, never a blocking
//! open, and never more than a cap.
//!
//! A path from `--config`, `--session`, `resumeSession` or a package can name anything: a FIFO
//! (whose open waits for a writer that never comes), `/dev/zero` (endless, with a length of 0),
//! a directory, or a sparse file of a terabyte. [`RegularFile::open`] stats the path first (so a
//! device is never opened, as opening some has side effects), opens it with `O_NONBLOCK` (a
//! FIFO swapped in after the stat opens at once), checks the opened descriptor again, and
//! refuses a file longer than the cap before reading a byte. Reads stop at the length seen when
//! the file was opened, so a file growing meanwhile cannot push them past the cap.

use std::fmt;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io::{self, Read, Take};
use std::path::{Path, PathBuf};

/// What a path that is not a regular file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A symbolic link, where links are not followed.
    Symlink,
    /// Anything else.
    Other,
}

impl FileKind {
    /// The kind of a file that is not a regular one.
    pub fn of(file_type: FileType) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            if file_type.is_fifo() {
                return Self::Fifo;
            }
            if file_type.is_socket() {
                return Self::Socket;
            }
            if file_type.is_char_device() {
                return Self::CharDevice;
            }
            if file_type.is_block_device() {
                return Self::BlockDevice;
            }
        }
        if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink
        } else {
            Self::Other
        }
    }

    /// The kind in words, with its article ("a FIFO").
    pub fn describe(self) -> &'static str {
        match self {
            Self::Directory => "a directory",
            Self::Fifo => "a FIFO",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Symlink => "a symbolic link",
            Self::Other => "not a regular file",
        }
    }
}

/// Why a file could not be opened or read.
#[derive(Debug)]
pub enum FileError {
    /// Nothing exists at the path (a dangling link included).
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The path names something other than a regular file.
    NotRegular {
        /// The path as given.
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// The file is longer than the cap.
    TooLarge {
        /// The path as given.
        path: PathBuf,
        /// The cap in bytes.
        cap: u64,
    },
    /// The system refused (permission denied, a loop of links...).
    Io {
        /// The path as given.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl FileError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::NotFound { path }
            | Self::NotRegular { path, .. }
            | Self::TooLarge { path, .. }
            | Self::Io { path, .. } => path,
        }
    }

    /// What is wrong, without the path (for messages that name the file already).
    pub fn problem(&self) -> String {
        match self {
            Self::NotFound { .. } => "no such file".into(),
            Self::NotRegular {
                kind: FileKind::Other,
                ..
            } => "not a regular file".into(),
            Self::NotRegular { kind, .. } => {
                format!("{}, not a regular file", kind.describe())
            }
            Self::TooLarge { cap, .. } => format!("larger than the {} cap", format_size(*cap)),
            Self::Io { error, .. } => error.to_string(),
        }
    }

    /// Whether nothing exists at the path.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    fn io(path: &Path, error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::NotFound {
            Self::NotFound { path: path.into() }
        } else {
            Self::Io {
                path: path.into(),
                error,
            }
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.problem())
    }
}

impl std::error::Error for FileError {}

/// A byte count as people write caps: "1 MiB", "64 KiB", "100 bytes".
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    match bytes {
        0 => "0 bytes".into(),
        b if b % GIB == 0 => format!("{} GiB", b / GIB),
        b if b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

/// How [`RegularFile`] opens a path; [`RegularFile::open`] is the common case.
#[derive(Debug, Clone, Copy)]
pub struct OpenRegular {
    cap: u64,
    follow_links: bool,
    append: bool,
}

impl OpenRegular {
    /// Refuses a link at the path itself (`O_NOFOLLOW`) instead of opening its target.
    pub fn no_follow(mut self) -> Self {
        self.follow_links = false;
        self
    }

    /// Also opens the file for appending (read and append).
    pub fn append(mut self) -> Self {
        self.append = true;
        self
    }

    /// Opens `path`.
    ///
    /// # Errors
    ///
    /// [`FileError::NotFound`], [`FileError::NotRegular`] (what it is, checked before and after
    /// the open), [`FileError::TooLarge`] (from the opened descriptor's length, before any
    /// read), [`FileError::Io`].
    pub fn open(self, path: &Path) -> Result<RegularFile, FileError> {
        let before = if self.follow_links {
            std::fs::metadata(path)
        } else {
            std::fs::symlink_metadata(path)
        }
        .map_err(|e| FileError::io(path, e))?;
        check(path, &before, self.cap)?;
        let mut options = OpenOptions::new();
        options.read(true).append(self.append);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
            if !self.follow_links {
                flags |= libc::O_NOFOLLOW;
            }
            options.custom_flags(flags);
        }
        let file = options.open(path).map_err(|e| {
            // O_NOFOLLOW's refusal (ELOOP) is a link swapped in after the stat.
            if !self.follow_links
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            {
                FileError::NotRegular {
                    path: path.into(),
                    kind: FileKind::Symlink,
                }
            } else {
                FileError::io(path, e)
            }
        })?;
        RegularFile::from_opened(file, path, self.cap)
    }
}

fn check(path: &Path, meta: &Metadata, cap: u64) -> Result<(), FileError> {
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.into(),
            kind: FileKind::of(meta.file_type()),
        });
    }
    if meta.len() > cap {
        return Err(FileError::TooLarge {
            path: path.into(),
            cap,
        });
    }
    Ok(())
}

/// An opened regular file of at most a cap, with its metadata as seen through the descriptor.
#[derive(Debug)]
pub struct RegularFile {
    file: File,
    meta: Metadata,
    path: PathBuf,
}

impl RegularFile {
    /// Options for opening a file of at most `cap` bytes (links followed, read only).
    pub fn options(cap: u64) -> OpenRegular {
        OpenRegular {
            cap,
            follow_links: true,
            append: false,
        }
    }

    /// Opens the regular file `path` (following links) of at most `cap` bytes for reading.
    ///
    /// # Errors
    ///
    /// As [`OpenRegular::open`].
    pub fn open(path: &Path, cap: u64) -> Result<Self, FileError> {
        Self::options(cap).open(path)
    }

    /// Checks a descriptor opened elsewhere (with `O_NONBLOCK`, e.g. relative to a directory):
    /// it must be a regular file of at most `cap` bytes. `path` names it in errors.
    ///
    /// # Errors
    ///
    /// [`FileError::NotRegular`], [`FileError::TooLarge`], [`FileError::Io`].
    pub fn from_opened(file: File, path: &Path, cap: u64) -> Result<Self, FileError> {
        let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
        check(path, &meta, cap)?;
        Ok(Self {
            file,
            meta,
            path: path.into(),
        })
    }

    /// The length when the file was opened (at most the cap).
    pub fn len(&self) -> u64 {
        self.meta.len()
    }

    /// Whether the file was empty when opened.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The metadata of the opened descriptor.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A reader of the file's bytes as it was when opened: it ends at that length.
    pub fn reader(self) -> Take<File> {
        let len = self.len();
        self.file.take(len)
    }

    /// The opened file itself (to append to it, when opened with [`OpenRegular::append`]).
    pub fn into_file(self) -> File {
        self.file
    }

    /// Reads the whole file as it was when opened.
    ///
    /// # Errors
    ///
    /// [`FileError::Io`] when a read fails.
    pub fn read_all(self) -> Result<Vec<u8>, FileError> {
        let path = self.path.clone();
        let mut bytes = Vec::with_capacity(usize::try_from(self.len()).unwrap_or(0));
        self.reader()
            .read_to_end(&mut bytes)
            .map_err(|e| FileError::io(&path, e))?;
        Ok(bytes)
    }
}

/// Reads the whole regular file `path` (following links) of at most `cap` bytes.
///
/// # Errors
///
/// As [`OpenRegular::open`] and [`RegularFile::read_all`].
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    RegularFile::open(path, cap)?.read_all()
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    const CAP: u64 = 1024 * 1024;

    /// Runs `f` on a thread and fails if it takes longer than a few seconds (a blocking open
    /// would otherwise hang the test run).
    fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("did not return within 5 s"))
    }

    #[test]
    fn reads_a_normal_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.toml");
        std::fs::write(&path, b"x = 1\n").unwrap();
        assert_eq!(read_regular(&path, CAP).unwrap(), b"x = 1\n");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_regular(&link, CAP).unwrap(), b"x = 1\n");
        let exact = tmp.path().join("exact");
        std::fs::write(&exact, vec![b'a'; 100]).unwrap();
        assert_eq!(read_regular(&exact, 100).unwrap().len(), 100);
        let e = read_regular(&exact, 99).unwrap_err();
        assert!(matches!(e, FileError::TooLarge { cap: 99, .. }), "{e}");
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let started = Instant::now();
        let path = fifo.clone();
        let e = promptly(move || read_regular(&path, CAP).unwrap_err());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(
                e,
                FileError::NotRegular {
                    kind: FileKind::Fifo,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!("{}: a FIFO, not a regular file", fifo.display())
        );
        // Through a link; and a descriptor opened elsewhere is checked too (a FIFO swapped in
        // between a stat and an open).
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let e = promptly(move || read_regular(&link, CAP).unwrap_err());
        assert!(matches!(e, FileError::NotRegular { .. }), "{e}");
        let opened = promptly(move || {
            use std::os::unix::fs::OpenOptionsExt as _;
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .unwrap();
            RegularFile::from_opened(file, &fifo, CAP).unwrap_err()
        });
        assert!(
            matches!(
                opened,
                FileError::NotRegular {
                    kind: FileKind::Fifo,
                    ..
                }
            ),
            "{opened}"
        );
    }

    #[test]
    fn dev_zero_and_links_to_it_are_refused() {
        let e = promptly(|| read_regular(Path::new("/dev/zero"), CAP).unwrap_err());
        assert!(
            matches!(
                e,
                FileError::NotRegular {
                    kind: FileKind::CharDevice,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "/dev/zero: a character device, not a regular file"
        );
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("config.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let path = link.clone();
        let e = promptly(move || read_regular(&path, CAP).unwrap_err());
        assert!(
            e.to_string().starts_with(&link.display().to_string()),
            "{e}"
        );
        assert!(e.to_string().contains("a character device"), "{e}");
        // Not followed when asked: the link itself is refused.
        let e = RegularFile::options(CAP)
            .no_follow()
            .open(&link)
            .unwrap_err();
        assert!(
            matches!(
                e,
                FileError::NotRegular {
                    kind: FileKind::Symlink,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_sparse_gigabyte_is_refused_before_reading() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sparse");
        File::create(&path).unwrap().set_len(1 << 30).unwrap();
        let p = path.clone();
        let e = promptly(move || read_regular(&p, CAP).unwrap_err());
        assert!(matches!(e, FileError::TooLarge { cap: CAP, .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!("{}: larger than the 1 MiB cap", path.display())
        );
    }

    #[test]
    fn directories_and_missing_files() {
        let tmp = tempfile::tempdir().unwrap();
        let e = read_regular(tmp.path(), CAP).unwrap_err();
        assert!(e.to_string().ends_with(": a directory, not a regular file"));
        let missing = tmp.path().join("missing");
        assert!(read_regular(&missing, CAP).unwrap_err().is_not_found());
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(&missing, &dangling).unwrap();
        assert!(read_regular(&dangling, CAP).unwrap_err().is_not_found());
    }

    #[test]
    fn reads_stop_at_the_length_seen_at_open() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("growing");
        std::fs::write(&path, b"0123").unwrap();
        let opened = RegularFile::open(&path, 8).unwrap();
        std::fs::write(&path, vec![b'x'; 64]).unwrap();
        assert_eq!(opened.len(), 4);
        assert_eq!(opened.read_all().unwrap().len(), 4);
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(format_size(1 << 20), "1 MiB");
        assert_eq!(format_size(256 << 20), "256 MiB");
        assert_eq!(format_size(64 << 10), "64 KiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(1000), "1000 bytes");
    }
}
