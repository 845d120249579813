//! Path containment (Agent Plugins §4.1): every package path rho reads or executes must resolve
//! inside the filesystem-resolved plugin root.
//!
//! Files are opened first and checked afterwards through `/proc/self/fd`, so what is checked is
//! exactly what is read: swapping a directory for a symlink between a check and an open cannot
//! smuggle an outside file in. Non-regular files are refused before opening, and opens use
//! `O_NONBLOCK`, so a FIFO planted as `plugin.json` can never block discovery.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// Why a package path was refused.
#[derive(Debug)]
pub(crate) enum ContainError {
    /// The path does not exist (or is a dangling link).
    Missing,
    /// The path resolves outside the base directory; carries the resolved target.
    Escape(PathBuf),
    /// The path exists but is not the expected kind (a regular file or a directory).
    WrongKind(&'static str),
    /// The file is larger than the cap for its kind.
    TooLarge(u64),
    /// Any other IO error (permission denied, a symlink loop, ...).
    Io(io::Error),
}

impl std::fmt::Display for ContainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str("does not exist"),
            Self::Escape(target) => {
                write!(
                    f,
                    "resolves outside the plugin root (to {})",
                    target.display()
                )
            }
            Self::WrongKind(kind) => write!(f, "is a {kind}, not the expected kind"),
            Self::TooLarge(cap) => write!(f, "is larger than the {cap}-byte limit"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for ContainError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::NotFound {
            Self::Missing
        } else {
            Self::Io(e)
        }
    }
}

/// Whether `path` is `base` or below it, comparing whole components (so `/r/plug` does not
/// contain `/r/plugin-evil`).
pub(crate) fn is_within(base: &Path, path: &Path) -> bool {
    path.starts_with(base)
}

/// The kind of a file type, for messages.
pub(crate) fn kind_name(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "fifo";
        }
        if ft.is_socket() {
            return "socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "device";
        }
    }
    if ft.is_dir() {
        "directory"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    options.open(path)
}

/// The path the kernel actually opened for `file`.
fn opened_path(file: &File, fallback: &Path) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(path) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return Ok(path);
        }
    }
    let _ = file;
    dunce::canonicalize(fallback)
}

/// A resolved plugin root, opened once, under which package paths are opened and resolved.
///
/// On Linux, files are opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` relative
/// to the root's descriptor: the kernel itself refuses any path that leaves the root, in one
/// call and without a window between check and use. When the kernel refuses (an absolute link,
/// an escape, or no `openat2`), the portable path decides exactly and names the target.
pub(crate) struct Beneath {
    root: PathBuf,
    #[cfg(target_os = "linux")]
    fd: Option<std::os::fd::OwnedFd>,
}

impl Beneath {
    /// Opens the (already resolved) root directory.
    pub(crate) fn new(root: PathBuf) -> Self {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags};
            let fd = rustix::fs::open(
                &root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok();
            Self { root, fd }
        }
        #[cfg(not(target_os = "linux"))]
        Self { root }
    }

    /// The resolved root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Opens the regular file `rel` (relative to the root) if it stays inside the root and is
    /// at most `cap` bytes. Returns the file and its path as discovered.
    pub(crate) fn open_regular(&self, rel: &Path, cap: u64) -> Result<(File, u64), ContainError> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            use rustix::fs::{Mode, OFlags, ResolveFlags};
            // No stat before this open: RESOLVE_BENEATH refuses links to devices outside the
            // root, O_NONBLOCK keeps a FIFO from blocking and the descriptor is checked below.
            // Only a device node inside the root itself (which only root can create) would be
            // opened before being refused.
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(fd, rel, flags, Mode::empty(), resolve) {
                Ok(owned) => {
                    let file = File::from(owned);
                    let meta = file.metadata()?;
                    if !meta.is_file() {
                        return Err(ContainError::WrongKind(kind_name(meta.file_type())));
                    }
                    if meta.len() > cap {
                        return Err(ContainError::TooLarge(cap));
                    }
                    return Ok((file, meta.len()));
                }
                Err(e) if e == rustix::io::Errno::NOENT => return Err(ContainError::Missing),
                // EXDEV (escape or absolute link), ENOSYS, EPERM, ELOOP...: decide exactly below.
                Err(_) => {}
            }
        }
        let (file, _) = open_regular_within(&self.root, &self.root.join(rel), cap)?;
        let len = file.metadata()?.len();
        Ok((file, len))
    }

    /// Reads the whole regular file `rel` of at most `cap` bytes.
    pub(crate) fn read(&self, rel: &Path, cap: u64) -> Result<Vec<u8>, ContainError> {
        let (file, len) = self.open_regular(rel, cap)?;
        read_capped(file, cap, Some(len))
    }

    /// Resolves the directory `rel` and checks it stays inside the root.
    pub(crate) fn dir(&self, rel: &Path) -> Result<PathBuf, ContainError> {
        let (resolved, known) = resolve_fast_meta(&self.root, rel)?;
        if !is_within(&self.root, &resolved) {
            return Err(ContainError::Escape(resolved));
        }
        let meta = match known {
            Some(meta) => meta,
            None => std::fs::metadata(&resolved)?,
        };
        if !meta.is_dir() {
            return Err(ContainError::WrongKind(kind_name(meta.file_type())));
        }
        Ok(resolved)
    }
}

/// Resolves `base/rel` where `base` is already resolved, stat-ing only the components of `rel`
/// and falling back to full canonicalization as soon as a component is a link (or `..`).
pub(crate) fn resolve_fast(base: &Path, rel: &Path) -> io::Result<PathBuf> {
    resolve_fast_meta(base, rel).map(|(path, _)| path)
}

/// [`resolve_fast`], also returning the metadata of the final component when the fast walk
/// saw it (it is then not a link).
pub(crate) fn resolve_fast_meta(
    base: &Path,
    rel: &Path,
) -> io::Result<(PathBuf, Option<std::fs::Metadata>)> {
    let mut current = base.to_path_buf();
    let mut last = None;
    for component in rel.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(name) => {
                current.push(name);
                let meta = std::fs::symlink_metadata(&current)?;
                if meta.file_type().is_symlink() {
                    return dunce::canonicalize(base.join(rel)).map(|p| (p, None));
                }
                last = Some(meta);
            }
            _ => return dunce::canonicalize(base.join(rel)).map(|p| (p, None)),
        }
    }
    Ok((current, last))
}

fn read_capped(file: File, cap: u64, len: Option<u64>) -> Result<Vec<u8>, ContainError> {
    // With the size known from the open descriptor, read exactly that much: one read call for
    // a small file, and a file growing meanwhile is read as it was when opened.
    if let Some(len) = len.filter(|&len| len <= cap) {
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.take(len).read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let hint = match len {
        Some(len) => len.min(cap),
        None => file.metadata().map(|m| m.len().min(cap)).unwrap_or(0),
    };
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0) + 1);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ContainError::TooLarge(cap));
    }
    Ok(bytes)
}

/// Opens the regular file at `path` for reading if, once opened, it lies inside `base` (an
/// already-resolved directory) and is at most `cap` bytes. Returns the file and its resolved path.
pub(crate) fn open_regular_within(
    base: &Path,
    path: &Path,
    cap: u64,
) -> Result<(File, PathBuf), ContainError> {
    // Refuse FIFOs, sockets and devices before opening: opening some devices has side effects.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(ContainError::WrongKind(kind_name(meta.file_type())));
    }
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ContainError::WrongKind(kind_name(meta.file_type())));
    }
    let resolved = opened_path(&file, path)?;
    if !is_within(base, &resolved) {
        return Err(ContainError::Escape(resolved));
    }
    if meta.len() > cap {
        return Err(ContainError::TooLarge(cap));
    }
    Ok((file, resolved))
}

#[cfg(test)]
/// Reads a whole contained regular file of at most `cap` bytes (the cap also bounds a file that
/// grows while being read).
pub(crate) fn read_within(base: &Path, path: &Path, cap: u64) -> Result<Vec<u8>, ContainError> {
    let (file, _) = open_regular_within(base, path, cap)?;
    read_capped(file, cap, None)
}

/// Resolves `path`, which may not exist yet, and checks it stays inside `base`.
///
/// The deepest existing ancestor is resolved by the filesystem; the part that does not exist yet
/// must be plain names (no `..`), since there is nothing on disk to resolve it against. `base`
/// itself may not exist either (a plugin data directory before its first start); `base` must
/// then be built from a resolved parent.
pub(crate) fn resolve_within(base: &Path, path: &Path) -> Result<PathBuf, ContainError> {
    // Fast path: an existing path below `base` with no link and no `..` on the way.
    if let Ok(rel) = path.strip_prefix(base)
        && rel.components().all(|c| matches!(c, Component::Normal(_)))
        && let Ok(resolved) = resolve_fast(base, rel)
    {
        // A link on the way makes `resolve_fast` canonicalize: check where it led.
        if !is_within(base, &resolved) {
            return Err(ContainError::Escape(resolved));
        }
        return Ok(resolved);
    }
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    let resolved_prefix = loop {
        match dunce::canonicalize(&existing) {
            Ok(resolved) => break resolved,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        tail.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    // A `..` in the part that does not exist cannot be resolved on disk, so
                    // the path cannot be shown to stay inside.
                    (None, Some(_)) => return Err(ContainError::Escape(path.to_path_buf())),
                    _ => return Err(ContainError::Missing),
                }
            }
            Err(e) => return Err(ContainError::Io(e)),
        }
    };
    // `file_name` never yields `..`, but a trailing `..` makes `file_name` return None; a `..`
    // in the missing part can only come through the components check below.
    let missing_has_parent = path
        .components()
        .rev()
        .take(tail.len() + 1)
        .any(|c| matches!(c, Component::ParentDir));
    let mut resolved = resolved_prefix;
    for name in tail.iter().rev() {
        resolved.push(name);
    }
    if (!tail.is_empty() && missing_has_parent) || !is_within(base, &resolved) {
        return Err(ContainError::Escape(resolved));
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fresh temporary directory (removed when the first half is dropped) and its
    /// canonical path.
    fn tmp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dunce::canonicalize(dir.path()).unwrap();
        (dir, path)
    }

    #[test]
    fn component_prefix_trap() {
        assert!(!is_within(
            Path::new("/r/plug"),
            Path::new("/r/plugin-evil/x")
        ));
        assert!(is_within(Path::new("/r/plug"), Path::new("/r/plug/x")));
        assert!(is_within(Path::new("/r/plug"), Path::new("/r/plug")));
    }

    #[test]
    fn symlinked_file_outside_is_refused_inside_is_allowed() {
        let (_dir, t) = tmp();
        let root = t.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(t.join("secret"), "canary").unwrap();
        std::fs::write(root.join("real"), "ok").unwrap();
        symlink(t.join("secret"), root.join("out")).unwrap();
        symlink("real", root.join("in")).unwrap();
        assert!(matches!(
            read_within(&root, &root.join("out"), 10),
            Err(ContainError::Escape(_))
        ));
        assert_eq!(read_within(&root, &root.join("in"), 10).unwrap(), b"ok");
        assert!(matches!(
            read_within(&root, &root.join("real"), 1),
            Err(ContainError::TooLarge(1))
        ));
    }

    #[test]
    fn fifo_and_loop_and_dangling_do_not_hang() {
        let (_dir, t) = tmp();
        let status = std::process::Command::new("mkfifo")
            .arg(t.join("f"))
            .status()
            .unwrap();
        assert!(status.success());
        assert!(matches!(
            read_within(&t, &t.join("f"), 10),
            Err(ContainError::WrongKind("fifo"))
        ));
        symlink("a", t.join("b")).unwrap();
        symlink("b", t.join("a")).unwrap();
        assert!(matches!(
            read_within(&t, &t.join("a"), 10),
            Err(ContainError::Io(_))
        ));
        symlink("nowhere", t.join("d")).unwrap();
        assert!(matches!(
            read_within(&t, &t.join("d"), 10),
            Err(ContainError::Missing)
        ));
    }

    #[test]
    fn beneath_reads_inside_refuses_outside_and_absolute_links_inside() {
        let (_dir, t) = tmp();
        let root = t.join("root");
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::write(t.join("secret"), "canary").unwrap();
        std::fs::write(root.join("dir/real"), "ok").unwrap();
        symlink(t.join("secret"), root.join("out")).unwrap();
        symlink("../real-link-target-missing", root.join("dangling")).unwrap();
        symlink(root.join("dir/real"), root.join("abs-inside")).unwrap();
        symlink("dir", root.join("dirlink")).unwrap();
        symlink("..", root.join("up")).unwrap();
        let b = Beneath::new(root.clone());
        assert_eq!(b.read(Path::new("dir/real"), 10).unwrap(), b"ok");
        assert_eq!(b.read(Path::new("dirlink/real"), 10).unwrap(), b"ok");
        assert_eq!(
            b.read(Path::new("abs-inside"), 10).unwrap(),
            b"ok",
            "spec MAY: links inside"
        );
        assert!(matches!(
            b.read(Path::new("out"), 10),
            Err(ContainError::Escape(_))
        ));
        assert!(matches!(
            b.read(Path::new("up/secret"), 10),
            Err(ContainError::Escape(_))
        ));
        assert!(matches!(
            b.read(Path::new("dangling"), 10),
            Err(ContainError::Missing)
        ));
        assert!(matches!(
            b.read(Path::new("dir"), 10),
            Err(ContainError::WrongKind("directory"))
        ));
        assert_eq!(b.dir(Path::new("dirlink")).unwrap(), root.join("dir"));
        assert!(matches!(
            b.dir(Path::new("up")),
            Err(ContainError::Escape(_))
        ));
    }

    #[test]
    fn resolve_within_handles_missing_tails() {
        let (_dir, t) = tmp();
        std::fs::create_dir_all(t.join("root/sub")).unwrap();
        let root = t.join("root");
        assert_eq!(
            resolve_within(&root, &root.join("sub/new/x")).unwrap(),
            root.join("sub/new/x")
        );
        assert!(resolve_within(&root, &root.join("sub/../../x")).is_err());
        assert!(resolve_within(&root, &root.join("new/../../x")).is_err());
        assert_eq!(resolve_within(&root, &root.join("sub/..")).unwrap(), root);
        symlink("/", root.join("up")).unwrap();
        assert!(matches!(
            resolve_within(&root, &root.join("up/tmp")),
            Err(ContainError::Escape(_))
        ));
        // A base that does not exist yet, built on a resolved parent.
        let data = t.join("data").join("p");
        assert_eq!(
            resolve_within(&data, &data.join("cache")).unwrap(),
            data.join("cache")
        );
        assert!(resolve_within(&data, &data.join("../q")).is_err());
    }
}
