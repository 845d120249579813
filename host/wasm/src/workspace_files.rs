//! The `read-file` import: a workspace file by a path relative to the workspace (or under the
//! guest's `/workspace` mount), opened with `cap-primitives` — the same sandboxed resolution
//! wasmtime-wasi uses for preopens — so neither `..` nor a symbolic link can leave the
//! workspace, and capped in size.

use std::io::Read as _;
use std::path::{Component, Path};

use cap_primitives::fs::OpenOptions;

/// Where the workspace appears inside the guest (its preopen, and its initial working
/// directory).
pub const GUEST_WORKSPACE: &str = "/workspace";

/// The largest file `read-file` returns.
pub const READ_FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Reads `raw` inside `workspace`. The error is the message the guest receives.
pub(crate) fn read_file(workspace: &Path, raw: &str) -> Result<Vec<u8>, String> {
    let relative = relative_path(raw)?;
    let dir = cap_primitives::fs::open_ambient_dir(workspace, cap_primitives::ambient_authority())
        .map_err(|e| format!("the workspace cannot be opened: {e}"))?;
    let relative = Path::new(relative);
    // Opened without blocking (a FIFO, or a file swapped for one, would otherwise wait for a
    // writer forever), then checked by its handle, so what is read is what was checked.
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_primitives::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file =
        cap_primitives::fs::open(&dir, relative, &options).map_err(|e| open_error(raw, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read `{raw}`: {e}"))?;
    if meta.is_dir() {
        return Err(format!("`{raw}` is a directory"));
    }
    if !meta.is_file() {
        return Err(format!("`{raw}` is not a regular file"));
    }
    if meta.len() > READ_FILE_MAX_BYTES {
        return Err(too_large(raw, meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(READ_FILE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{raw}`: {e}"))?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if len > READ_FILE_MAX_BYTES {
        return Err(too_large(raw, len));
    }
    Ok(bytes)
}

/// The path relative to the workspace, or why it is refused. Lexical only: links are the
/// sandboxed open's business.
fn relative_path(raw: &str) -> Result<&str, String> {
    if raw.is_empty() {
        return Err("the path is empty".to_owned());
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL byte".to_owned());
    }
    let relative = if raw == GUEST_WORKSPACE {
        "."
    } else if let Some(rest) = raw
        .strip_prefix(GUEST_WORKSPACE)
        .and_then(|r| r.strip_prefix('/'))
    {
        rest
    } else if Path::new(raw).is_absolute() {
        return Err(format!(
            "`{raw}` is outside the workspace: give a path relative to the workspace (or under {GUEST_WORKSPACE})"
        ));
    } else {
        raw
    };
    let mut depth: usize = 0;
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("`{raw}` is outside the workspace"))?;
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("`{raw}` is outside the workspace"));
            }
        }
    }
    Ok(if relative.is_empty() { "." } else { relative })
}

fn open_error(raw: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("`{raw}` does not exist"),
        // cap-primitives reports an escape (a `..` or a symbolic link out) as permission denied.
        std::io::ErrorKind::PermissionDenied => {
            format!("`{raw}` is outside the workspace or not readable: {e}")
        }
        _ => format!("cannot open `{raw}`: {e}"),
    }
}

fn too_large(raw: &str, len: u64) -> String {
    format!("`{raw}` is {len} bytes; read-file returns at most {READ_FILE_MAX_BYTES} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn paths_inside_are_read_and_escapes_refused() {
        let workspace = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(workspace.path().join("src")).unwrap();
        fs::write(workspace.path().join("src/a.txt"), "alpha").unwrap();
        fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        symlink(
            outside.path().join("secret.txt"),
            workspace.path().join("link.txt"),
        )
        .unwrap();
        symlink("src/a.txt", workspace.path().join("inside-link.txt")).unwrap();
        let ws = workspace.path();

        assert_eq!(read_file(ws, "src/a.txt").unwrap(), b"alpha");
        assert_eq!(read_file(ws, "./src/../src/a.txt").unwrap(), b"alpha");
        assert_eq!(read_file(ws, "/workspace/src/a.txt").unwrap(), b"alpha");
        assert_eq!(read_file(ws, "inside-link.txt").unwrap(), b"alpha");

        for bad in ["../x", "src/../../x", "/etc/passwd", "/workspacex/a"] {
            let err = read_file(ws, bad).unwrap_err();
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
        let absolute = outside.path().join("secret.txt");
        let err = read_file(ws, absolute.to_str().unwrap()).unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        let err = read_file(ws, "link.txt").unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        assert!(read_file(ws, "src").unwrap_err().contains("directory"));
        assert!(
            read_file(ws, "/workspace")
                .unwrap_err()
                .contains("directory")
        );
        assert!(
            read_file(ws, "nope")
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(read_file(ws, "").unwrap_err().contains("empty"));
    }
}
