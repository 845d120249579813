//! Copying a package tree into a staging directory without ever following a link out of it.
//!
//! Every entry is `lstat`ed first: regular files are opened with `O_NOFOLLOW | O_NONBLOCK` and
//! checked again on the open descriptor; directories are recreated; symlinks are recreated with
//! the same relative text only if they resolve inside the package; absolute, dangling and
//! escaping links, FIFOs, sockets and devices refuse the install and name the entry. Caps bound
//! the number of entries, the total size and the depth.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::PluginError;
use crate::containment::{is_within, kind_name};

/// Limits on a package tree that `install` copies.
#[derive(Debug, Clone, Copy)]
pub struct CopyLimits {
    /// Maximum number of entries (files, directories and links).
    pub max_entries: usize,
    /// Maximum total bytes of regular files.
    pub max_bytes: u64,
    /// Maximum directory depth below the package root.
    pub max_depth: usize,
}

impl Default for CopyLimits {
    fn default() -> Self {
        Self {
            max_entries: 10_000,
            max_bytes: 256 * 1024 * 1024,
            max_depth: 32,
        }
    }
}

struct Copier<'a> {
    src_root: &'a Path,
    limits: CopyLimits,
    entries: usize,
    bytes: u64,
}

/// Copies the package at `src_root` (resolved) into the new directory `dst` (which must not
/// exist). On error the caller removes `dst`.
pub(crate) fn copy_package(
    src_root: &Path,
    dst: &Path,
    limits: CopyLimits,
) -> Result<(), PluginError> {
    let mut copier = Copier {
        src_root,
        limits,
        entries: 0,
        bytes: 0,
    };
    fs::create_dir(dst).map_err(|e| PluginError::Io {
        path: dst.to_path_buf(),
        error: e,
    })?;
    copier.copy_dir(src_root, dst, 0)
}

fn unsafe_entry(path: &Path, message: impl Into<String>) -> PluginError {
    PluginError::Unsafe {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

impl Copier<'_> {
    fn copy_dir(&mut self, src: &Path, dst: &Path, depth: usize) -> Result<(), PluginError> {
        if depth > self.limits.max_depth {
            return Err(unsafe_entry(
                src,
                format!(
                    "the package is nested deeper than {} levels",
                    self.limits.max_depth
                ),
            ));
        }
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |e: io::Error| PluginError::Io { path, error: e }
        };
        let mut entries: Vec<_> = fs::read_dir(src)
            .map_err(io(src))?
            .collect::<Result<_, _>>()
            .map_err(io(src))?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            self.entries += 1;
            if self.entries > self.limits.max_entries {
                return Err(unsafe_entry(
                    self.src_root,
                    format!(
                        "the package has more than {} entries",
                        self.limits.max_entries
                    ),
                ));
            }
            let from = entry.path();
            let to = dst.join(entry.file_name());
            let meta = fs::symlink_metadata(&from).map_err(io(&from))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                self.copy_link(&from, &to)?;
            } else if ft.is_dir() {
                fs::create_dir(&to).map_err(io(&to))?;
                self.copy_dir(&from, &to, depth + 1)?;
                copy_mode(&meta, &to).map_err(io(&to))?;
            } else if ft.is_file() {
                self.copy_file(&from, &to)?;
            } else {
                return Err(unsafe_entry(
                    &from,
                    format!(
                        "it is a {}; packages may hold only files, directories and links",
                        kind_name(ft)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn copy_file(&mut self, from: &Path, to: &Path) -> Result<(), PluginError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |e: io::Error| PluginError::Io { path, error: e }
        };
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
        }
        // O_NOFOLLOW: if the entry was swapped for a link since the lstat, the open fails.
        let mut source = options.open(from).map_err(io(from))?;
        let meta = source.metadata().map_err(io(from))?;
        if !meta.is_file() {
            return Err(unsafe_entry(
                from,
                "it changed into a non-regular file during the copy",
            ));
        }
        self.bytes += meta.len();
        if self.bytes > self.limits.max_bytes {
            return Err(unsafe_entry(
                self.src_root,
                format!("the package is larger than {} bytes", self.limits.max_bytes),
            ));
        }
        let mut target = create_new(to).map_err(io(to))?;
        let copied = io::copy(&mut io::Read::take(&mut source, meta.len()), &mut target)
            .map_err(io(from))?;
        if copied != meta.len() {
            return Err(unsafe_entry(from, "it changed size during the copy"));
        }
        copy_mode(&meta, to).map_err(io(to))
    }

    fn copy_link(&mut self, from: &Path, to: &Path) -> Result<(), PluginError> {
        let target = fs::read_link(from).map_err(|e| PluginError::Io {
            path: from.to_path_buf(),
            error: e,
        })?;
        if target.is_absolute() {
            return Err(unsafe_entry(
                from,
                format!(
                    "it is an absolute symlink (to {}); packages may only hold relative links \
                     that stay inside the package",
                    target.display()
                ),
            ));
        }
        // The link text itself must stay inside the package: a text that climbs out through the
        // source's parent folders and back in resolves inside the source, but would point
        // outside the installed copy.
        let position = from
            .parent()
            .and_then(|dir| dir.strip_prefix(self.src_root).ok())
            .unwrap_or(Path::new(""));
        if !text_stays_inside(position, &target) {
            return Err(unsafe_entry(
                from,
                format!(
                    "it is a symlink whose text ({}) leaves the package",
                    target.display()
                ),
            ));
        }
        let resolved = dunce::canonicalize(from).map_err(|e| {
            unsafe_entry(from, format!("it is a symlink that does not resolve ({e})"))
        })?;
        if !is_within(self.src_root, &resolved) {
            return Err(unsafe_entry(
                from,
                format!(
                    "it is a symlink that leaves the package (to {})",
                    resolved.display()
                ),
            ));
        }
        symlink(&target, to).map_err(|e| PluginError::Io {
            path: to.to_path_buf(),
            error: e,
        })
    }
}

/// Whether `target` (a relative link text), read from a link in `position` (relative to the
/// package root), stays inside the package when resolved by text alone.
fn text_stays_inside(position: &Path, target: &Path) -> bool {
    let mut depth: usize = 0;
    for component in position.components().chain(target.components()) {
        match component {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            std::path::Component::RootDir | std::path::Component::Prefix(_) => return false,
        }
    }
    true
}

fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    options.open(path)
}

fn copy_mode(meta: &fs::Metadata, to: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Keep the execute bits scripts need; drop setuid/setgid/sticky. Directories stay
        // owner-writable so the package can always be replaced or removed.
        let mut mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            mode |= 0o700;
        }
        fs::set_permissions(to, fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (meta, to);
    Ok(())
}

/// Removes a tree rho owns (an old package moved aside, a staging copy) even if some of its
/// directories are read-only: directories are made owner-writable first. Links are never
/// followed.
pub(crate) fn remove_tree(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    fn unlock(dir: &Path) {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = fs::symlink_metadata(dir) else {
            return;
        };
        if !meta.is_dir() {
            return;
        }
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(entries) = fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    unlock(&entry.path());
                }
            }
        }
    }
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(first) => {
            #[cfg(unix)]
            unlock(path);
            fs::remove_dir_all(path).map_err(|_| first)
        }
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("cannot recreate link {}", link.display()),
    ))
}

/// A unique sibling name under `dir` for rho's own temporary entries.
pub(crate) fn temp_name(dir: &Path, kind: &str, name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    dir.join(format!(".rho-{kind}-{name}-{}-{nanos}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_text_must_stay_inside_by_itself() {
        assert!(text_stays_inside(
            Path::new("skills"),
            Path::new("../real/x")
        ));
        assert!(text_stays_inside(Path::new(""), Path::new("skills/x")));
        assert!(!text_stays_inside(Path::new(""), Path::new("../x")));
        assert!(!text_stays_inside(
            Path::new("a"),
            Path::new("../../pkg/plugin.json")
        ));
        assert!(!text_stays_inside(
            Path::new("a/b"),
            Path::new("../../../../tmp/src/pkg/x")
        ));
        assert!(text_stays_inside(Path::new("a/b"), Path::new("./../c")));
    }
}
