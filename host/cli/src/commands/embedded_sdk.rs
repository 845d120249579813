//! The copy of `rho-plugin-sdk` and of the plugin template this rho carries (embedded by
//! `build.rs`), and writing the SDK out to `$RHO_HOME/sdk/<version>-<hash>/`, where new
//! plugins depend on it by path: an installed rho needs no checkout to start a plugin.
//!
//! The directory's name holds a hash of the files, so its contents never change under a name:
//! a second `rho plugins new` finds the files it would write and reuses them; files that
//! differ (edited by hand) are never overwritten, and the error names the first of them.
//! A new directory is filled under a staging name and renamed into place, so a crash or a
//! concurrent rho never leaves a half-written SDK at the final path.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// One embedded file: its path below its root (`/`-separated), its bytes, its mode.
pub struct EmbeddedFile {
    /// The path below the SDK or template root (template paths hold placeholders).
    pub path: &'static str,
    /// The file's contents.
    pub bytes: &'static [u8],
    /// Whether it is written executable.
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/embedded_sdk.rs"));

/// The SDK's directory name under `$RHO_HOME/sdk`: `<version>-<hash>`.
pub fn sdk_dir_name() -> String {
    format!("{SDK_VERSION}-{SDK_HASH}")
}

/// `<sdk_root>/<version>-<hash>`, holding exactly the embedded SDK: written if absent,
/// checked if present.
pub fn ensure_sdk(sdk_root: &Path) -> anyhow::Result<PathBuf> {
    let dest = sdk_root.join(sdk_dir_name());
    if std::fs::symlink_metadata(&dest).is_ok() {
        check(&dest)?;
        return Ok(dest);
    }
    std::fs::create_dir_all(sdk_root)
        .with_context(|| format!("cannot create {}", sdk_root.display()))?;
    let staging = sdk_root.join(format!(
        ".rho-staging-{}-{}",
        sdk_dir_name(),
        std::process::id()
    ));
    let written = write_all(&staging).and_then(|()| {
        std::fs::rename(&staging, &dest).or_else(|e| {
            // Another rho put the same SDK there first: use it if it is the same.
            if std::fs::symlink_metadata(&dest).is_ok() {
                check(&dest)
            } else {
                Err(e).with_context(|| format!("cannot move the SDK into {}", dest.display()))
            }
        })
    });
    if std::fs::symlink_metadata(&staging).is_ok() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written.map(|()| dest)
}

/// Writes every SDK file below a fresh `dir` (which must not exist), read-only, synced.
fn write_all(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    // A staging directory left by a killed rho of the same process id.
    if std::fs::symlink_metadata(dir).is_ok() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    std::fs::DirBuilder::new()
        .mode(0o755)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    for file in SDK_FILES {
        let target = dir.join(file.path);
        if let Some(parent) = target.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        // Read-only: the files are rho's copy, checked on every reuse.
        let mode = if file.executable { 0o555 } else { 0o444 };
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&target)
            .with_context(|| format!("cannot create {}", target.display()))?;
        out.write_all(file.bytes)
            .and_then(|()| out.sync_all())
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    Ok(())
}

/// Whether `dir` holds every embedded SDK file with the embedded bytes; the error names the
/// first file that is missing or differs.
fn check(dir: &Path) -> anyhow::Result<()> {
    for file in SDK_FILES {
        let path = dir.join(file.path);
        if !same_bytes(&path, file.bytes) {
            bail!(
                "{} is not the file this rho wrote there (changed, missing or not a regular \
                 file), so the SDK in {} is left as it is: remove that directory to have rho \
                 write it again, or pass --sdk-path <dir> to build against your own copy",
                path.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// Whether `path` is a regular file (not a link) holding exactly `expected`.
fn same_bytes(path: &Path, expected: &[u8]) -> bool {
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    // One byte more than expected tells a longer file apart without reading all of it.
    let mut bytes = Vec::with_capacity(expected.len() + 1);
    file.take(expected.len() as u64 + 1)
        .read_to_end(&mut bytes)
        .is_ok_and(|_| bytes == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded list is the crate's: every file `cargo package` would ship (the manifest's
    /// `include`) and nothing else, so the written SDK is a complete crate.
    #[test]
    fn the_embedded_sdk_is_the_crates_file_list() {
        let paths: Vec<&str> = SDK_FILES.iter().map(|f| f.path).collect();
        for needed in [
            "Cargo.toml",
            "README.md",
            "src/lib.rs",
            "wit/rho-tool-0.1.0/tool.wit",
        ] {
            assert!(paths.contains(&needed), "{needed} missing from {paths:?}");
        }
        assert!(
            paths.iter().all(|p| *p == "Cargo.toml"
                || *p == "README.md"
                || p.starts_with("src/")
                || p.starts_with("wit/")),
            "{paths:?}"
        );
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin-sdk");
        for dir in ["src", "wit"] {
            for entry in walk(&sdk.join(dir)) {
                let rel = entry
                    .strip_prefix(&sdk)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                assert!(paths.contains(&rel.as_str()), "{rel} is not embedded");
            }
        }
        for file in SDK_FILES {
            assert_eq!(
                std::fs::read(sdk.join(file.path)).unwrap(),
                file.bytes,
                "{}",
                file.path
            );
        }
        let template: Vec<&str> = TEMPLATE_FILES.iter().map(|f| f.path).collect();
        assert!(template.contains(&"tool/Cargo.toml"), "{template:?}");
        assert!(template.contains(&".gitignore"), "{template:?}");
        assert!(
            TEMPLATE_FILES
                .iter()
                .any(|f| f.path == "build.sh" && f.executable),
            "build.sh is executable"
        );
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    fn sdk_root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("rho-home/sdk");
        (tmp, root)
    }

    #[test]
    fn the_sdk_is_written_once_then_reused_and_never_clobbered() {
        let (_tmp, root) = sdk_root();
        let dir = ensure_sdk(&root).unwrap();
        assert_eq!(dir, root.join(sdk_dir_name()));
        for file in SDK_FILES {
            assert_eq!(std::fs::read(dir.join(file.path)).unwrap(), file.bytes);
        }
        // Nothing but the SDK is left in the root (no staging directory).
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(sdk_dir_name())]);

        // Again: the same directory, untouched (its files keep their modification time).
        let lib = dir.join("src/lib.rs");
        let before = std::fs::metadata(&lib).unwrap().modified().unwrap();
        assert_eq!(ensure_sdk(&root).unwrap(), dir);
        assert_eq!(std::fs::metadata(&lib).unwrap().modified().unwrap(), before);

        // A user's edit is kept and reported by name.
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&lib, "// mine\n").unwrap();
        let err = format!("{:#}", ensure_sdk(&root).unwrap_err());
        assert!(err.contains(&lib.display().to_string()), "{err}");
        assert!(err.contains("--sdk-path"), "{err}");
        assert_eq!(std::fs::read_to_string(&lib).unwrap(), "// mine\n");

        // A missing file too, and a file longer than rho's.
        std::fs::write(
            &lib,
            [
                SDK_FILES
                    .iter()
                    .find(|f| f.path == "src/lib.rs")
                    .unwrap()
                    .bytes,
                b"x",
            ]
            .concat(),
        )
        .unwrap();
        assert!(ensure_sdk(&root).is_err());
        std::fs::remove_file(&lib).unwrap();
        assert!(ensure_sdk(&root).is_err());
    }

    #[test]
    fn a_link_in_place_of_a_file_is_not_the_sdk() {
        let (_tmp, root) = sdk_root();
        let dir = ensure_sdk(&root).unwrap();
        let readme = dir.join("README.md");
        let copy = root.join("readme-copy");
        std::fs::copy(&readme, &copy).unwrap();
        std::fs::remove_file(&readme).unwrap();
        std::os::unix::fs::symlink(&copy, &readme).unwrap();
        assert!(ensure_sdk(&root).is_err());
    }

    #[test]
    fn a_staging_directory_left_behind_is_replaced() {
        let (_tmp, root) = sdk_root();
        let staging = root.join(format!(
            ".rho-staging-{}-{}",
            sdk_dir_name(),
            std::process::id()
        ));
        std::fs::create_dir_all(staging.join("src")).unwrap();
        std::fs::write(staging.join("src/lib.rs"), "half").unwrap();
        let dir = ensure_sdk(&root).unwrap();
        assert!(!staging.exists());
        check(&dir).unwrap();
    }
}
