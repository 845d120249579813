//! Where the file tools may reach: the workspace and the extra roots, symbolic links included.
//!
//! The rule: a relative path is joined to the workspace; the result is normalised lexically
//! (`.` dropped, `..` pops a component); the deepest ancestor that exists is canonicalised, so
//! every symbolic link along the way is followed (a dangling link is followed to where it would
//! point); the components that do not exist yet are appended. The result must lie inside the
//! canonical workspace or a canonical extra root. Since the returned path is canonical up to
//! its first missing component, using it cannot leave those roots through a link.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use rho_component::ToolOutput;

/// How many symbolic links a dangling chain may have before resolution gives up, like the
/// kernel's own limit.
const MAX_LINK_HOPS: u32 = 40;

/// The roots one call may touch, canonicalised once.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    workspace: PathBuf,
    extra_roots: Vec<PathBuf>,
}

impl Sandbox {
    /// The sandbox for a workspace and its extra roots. A root that cannot be canonicalised
    /// (it does not exist) is kept in its lexically normalised form.
    pub(crate) fn new(workspace: &Path, extra_roots: &[PathBuf]) -> Self {
        Self {
            workspace: canonical_root(workspace),
            extra_roots: extra_roots.iter().map(|r| canonical_root(r)).collect(),
        }
    }

    /// The canonical workspace.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Resolves `raw` (the value of argument `field`) to a path inside the allowed roots.
    /// The error is the message the model reads.
    pub(crate) fn resolve(&self, field: &str, raw: &str) -> Result<PathBuf, String> {
        if raw.is_empty() {
            return Err(format!("`{field}` is empty"));
        }
        if raw.contains('\0') {
            return Err(format!("`{field}` contains a NUL byte"));
        }
        let joined = self.workspace.join(raw);
        let resolved =
            resolve_links(&joined, 0).map_err(|e| format!("cannot resolve path `{raw}`: {e}"))?;
        if self.allows(&resolved) {
            return Ok(resolved);
        }
        let roots = if self.extra_roots.is_empty() {
            String::new()
        } else {
            " and the allowed extra roots".to_owned()
        };
        let lexical = normalize(&joined);
        if lexical != resolved && self.allows(&lexical) {
            Err(format!(
                "path `{raw}` is outside the workspace (`{}`){roots}: it leads through a symbolic link to `{}`",
                self.workspace.display(),
                resolved.display()
            ))
        } else {
            Err(format!(
                "path `{raw}` is outside the workspace (`{}`){roots}",
                self.workspace.display()
            ))
        }
    }

    /// Resolves the tool's `path` argument as [`Sandbox::resolve`] does, with how the result is
    /// shown to the model ([`Sandbox::display`]). The error is the call's output.
    pub(crate) fn resolve_path(&self, raw: &str) -> Result<(PathBuf, String), ToolOutput> {
        let path = self.resolve("path", raw).map_err(ToolOutput::error)?;
        let shown = self.display(&path);
        Ok((path, shown))
    }

    /// How a path is shown to the model: relative to the workspace when inside it (`.` for
    /// the workspace itself), absolute otherwise.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    fn allows(&self, path: &Path) -> bool {
        path.starts_with(&self.workspace) || self.extra_roots.iter().any(|r| path.starts_with(r))
    }
}

/// Writes `bytes` to `path` (created or truncated), refusing to follow a symbolic link in the
/// last component: [`Sandbox::resolve`] returned a link-free path, and a link that appears in
/// between must not redirect the write.
pub(crate) fn write_no_follow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        if let Ok(flag) = i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()) {
            options.custom_flags(flag);
        }
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

fn canonical_root(root: &Path) -> PathBuf {
    let absolute = if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(root))
            .unwrap_or_else(|_| root.to_path_buf())
    };
    fs::canonicalize(&absolute).unwrap_or_else(|_| normalize(&absolute))
}

/// Lexical normalisation of an absolute path: `.` dropped, `..` pops (never above the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                out.push(component.as_os_str());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
        }
    }
    out
}

/// Canonicalises the deepest existing ancestor of `path` (normalised first) and appends the
/// rest. A dangling symbolic link is followed to its target, which is resolved in turn.
fn resolve_links(path: &Path, hops: u32) -> std::io::Result<PathBuf> {
    if hops > MAX_LINK_HOPS {
        return Err(std::io::Error::other("too many levels of symbolic links"));
    }
    let normalized = normalize(path);
    let mut existing = PathBuf::new();
    let mut rest: Vec<OsString> = Vec::new();
    for component in normalized.components() {
        if !rest.is_empty() {
            rest.push(component.as_os_str().to_owned());
            continue;
        }
        let candidate = existing.join(component.as_os_str());
        if fs::symlink_metadata(&candidate).is_ok() {
            existing = candidate;
        } else {
            rest.push(component.as_os_str().to_owned());
        }
    }
    let base = match fs::canonicalize(&existing) {
        Ok(base) => base,
        Err(e) => {
            // The deepest existing entry may be a dangling link: follow it by hand.
            let is_link = fs::symlink_metadata(&existing)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if !is_link {
                return Err(e);
            }
            let target = fs::read_link(&existing)?;
            let parent = existing.parent().unwrap_or(Path::new("/"));
            let mut next = parent.join(target);
            next.extend(&rest);
            return resolve_links(&next, hops + 1);
        }
    };
    let mut resolved = base;
    resolved.extend(&rest);
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Sandbox) {
        let workspace = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(workspace.path().join("src")).unwrap();
        fs::write(workspace.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
        let sandbox = Sandbox::new(workspace.path(), &[]);
        (workspace, outside, sandbox)
    }

    #[test]
    fn relative_and_absolute_paths_inside_resolve() {
        let (workspace, _outside, sandbox) = setup();
        let canonical = fs::canonicalize(workspace.path()).unwrap();
        assert_eq!(
            sandbox.resolve("path", "src/main.rs").unwrap(),
            canonical.join("src/main.rs")
        );
        assert_eq!(
            sandbox.resolve("path", "./src/../src/main.rs").unwrap(),
            canonical.join("src/main.rs")
        );
        let absolute = workspace.path().join("src/new/deeper.rs");
        assert_eq!(
            sandbox.resolve("path", absolute.to_str().unwrap()).unwrap(),
            canonical.join("src/new/deeper.rs")
        );
        assert_eq!(sandbox.resolve("path", ".").unwrap(), canonical);
        assert_eq!(sandbox.display(&canonical), ".");
        assert_eq!(
            sandbox.display(&canonical.join("src/main.rs")),
            "src/main.rs"
        );
    }

    #[test]
    fn dot_dot_escapes_are_refused() {
        let (_workspace, outside, sandbox) = setup();
        let err = sandbox.resolve("path", "../x").unwrap_err();
        assert!(err.contains("`../x` is outside the workspace"), "{err}");
        let err = sandbox
            .resolve("path", "src/missing/../../../x")
            .unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        let absolute = outside.path().join("secret.txt");
        let err = sandbox
            .resolve("path", absolute.to_str().unwrap())
            .unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        assert!(sandbox.resolve("path", "").unwrap_err().contains("empty"));
    }

    #[test]
    fn symlinks_leading_outside_are_refused() {
        let (workspace, outside, sandbox) = setup();
        symlink(
            outside.path().join("secret.txt"),
            workspace.path().join("link.txt"),
        )
        .unwrap();
        symlink(outside.path(), workspace.path().join("out")).unwrap();
        symlink(
            outside.path().join("not-yet.txt"),
            workspace.path().join("dangling.txt"),
        )
        .unwrap();
        for raw in [
            "link.txt",
            "out",
            "out/secret.txt",
            "out/new/file",
            "dangling.txt",
        ] {
            let err = sandbox.resolve("path", raw).unwrap_err();
            assert!(err.contains("outside the workspace"), "{raw}: {err}");
            assert!(err.contains("symbolic link"), "{raw}: {err}");
        }
        // A link that stays inside is fine and resolves to its target.
        symlink(
            workspace.path().join("src"),
            workspace.path().join("src-link"),
        )
        .unwrap();
        let canonical = fs::canonicalize(workspace.path()).unwrap();
        assert_eq!(
            sandbox.resolve("path", "src-link/main.rs").unwrap(),
            canonical.join("src/main.rs")
        );
    }

    #[test]
    fn extra_roots_are_allowed() {
        let (workspace, outside, _) = setup();
        let sandbox = Sandbox::new(workspace.path(), &[outside.path().to_path_buf()]);
        let absolute = outside.path().join("secret.txt");
        assert_eq!(
            sandbox.resolve("path", absolute.to_str().unwrap()).unwrap(),
            fs::canonicalize(&absolute).unwrap()
        );
        let err = sandbox.resolve("path", "/").unwrap_err();
        assert!(err.contains("allowed extra roots"), "{err}");
    }

    #[test]
    fn link_loops_are_errors_not_hangs() {
        let (workspace, _outside, sandbox) = setup();
        symlink("loop-b", workspace.path().join("loop-a")).unwrap();
        symlink("loop-a", workspace.path().join("loop-b")).unwrap();
        assert!(sandbox.resolve("path", "loop-a").is_err());
        assert!(sandbox.resolve("path", "loop-a/x").is_err());
    }
}
