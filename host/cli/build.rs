//! Embeds `rho-plugin-sdk` and the `rho plugins new` template in the binary, so an installed
//! rho writes both out with no checkout at hand (`src/commands/embedded_sdk.rs`).
//!
//! The SDK's files are exactly what its `Cargo.toml` `include` lists (the one list: a file
//! added to the crate is embedded with no second list to keep), plus its `Cargo.lock`, which a
//! new plugin starts from so it builds with the dependency versions the SDK is tested with.
//! The template is every file under `plugin-sdk/template/`. A pattern this script cannot
//! expand, a link or a name that is not UTF-8 fails the build with its path.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

type Error = Box<dyn std::error::Error>;

/// One file to embed: its path relative to its root (always `/`-separated), where it is now,
/// and whether it is executable.
struct File {
    rel: String,
    abs: PathBuf,
    executable: bool,
}

fn main() -> Result<(), Error> {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let sdk = std::fs::canonicalize(here.join("../../plugin-sdk"))
        .map_err(|e| format!("plugin-sdk beside host/cli: {e}"))?;
    let manifest_path = sdk.join("Cargo.toml");
    let manifest: toml::Table = std::fs::read_to_string(&manifest_path)?
        .parse()
        .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let package = manifest
        .get("package")
        .and_then(toml::Value::as_table)
        .ok_or_else(|| format!("{}: no [package] table", manifest_path.display()))?;
    let version = package
        .get("version")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| format!("{}: no package.version", manifest_path.display()))?;
    let include = package
        .get("include")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| format!("{}: no package.include list", manifest_path.display()))?;

    let mut sdk_files = Vec::new();
    for pattern in include {
        let pattern = pattern.as_str().ok_or_else(|| {
            format!(
                "{}: package.include holds a non-string",
                manifest_path.display()
            )
        })?;
        println!(
            "cargo:rerun-if-changed={}",
            sdk.join(pattern.trim_end_matches("/**")).display()
        );
        if let Some(dir) = pattern.strip_suffix("/**") {
            walk(&sdk, &sdk.join(dir), &mut sdk_files)?;
        } else if pattern.contains(['*', '?', '[', '!']) {
            return Err(format!(
                "{}: this build script expands only `<dir>/**` and plain file names in \
                 package.include, not {pattern:?}",
                manifest_path.display()
            )
            .into());
        } else {
            sdk_files.push(file(&sdk, &sdk.join(pattern))?);
        }
    }
    sdk_files.sort_by(|a, b| a.rel.cmp(&b.rel));
    sdk_files.dedup_by(|a, b| a.rel == b.rel);

    let lock = sdk.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let template_root = sdk.join("template");
    println!("cargo:rerun-if-changed={}", template_root.display());
    let mut template = Vec::new();
    walk(&template_root, &template_root, &mut template)?;
    template.sort_by(|a, b| a.rel.cmp(&b.rel));

    let mut digest = Sha256::new();
    for f in &sdk_files {
        let bytes = std::fs::read(&f.abs)?;
        digest.update(f.rel.as_bytes());
        digest.update([0, u8::from(f.executable)]);
        digest.update((bytes.len() as u64).to_le_bytes());
        digest.update(&bytes);
    }
    let hash: String = digest
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();

    let mut code = String::new();
    writeln!(
        code,
        "/// The SDK's crate version (`plugin-sdk/Cargo.toml`)."
    )?;
    writeln!(code, "pub const SDK_VERSION: &str = {version:?};")?;
    writeln!(
        code,
        "/// The first 12 hex digits of SHA-256 over the SDK's files (paths, modes, bytes)."
    )?;
    writeln!(code, "pub const SDK_HASH: &str = {hash:?};")?;
    writeln!(
        code,
        "/// The SDK crate's files, as its `Cargo.toml` `include` lists them."
    )?;
    write_list(&mut code, "SDK_FILES", &sdk_files)?;
    writeln!(
        code,
        "/// The SDK's `Cargo.lock`: where a new plugin's lock file starts."
    )?;
    writeln!(
        code,
        "pub const SDK_LOCK: &[u8] = include_bytes!({:?});",
        path_str(&lock)?
    )?;
    writeln!(
        code,
        "/// Every file of `plugin-sdk/template/` (placeholders in paths and text)."
    )?;
    write_list(&mut code, "TEMPLATE_FILES", &template)?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("embedded_sdk.rs");
    std::fs::write(out, code)?;
    Ok(())
}

fn write_list(code: &mut String, name: &str, files: &[File]) -> Result<(), Error> {
    writeln!(code, "pub const {name}: &[EmbeddedFile] = &[")?;
    for f in files {
        writeln!(
            code,
            "    EmbeddedFile {{ path: {:?}, bytes: include_bytes!({:?}), executable: {} }},",
            f.rel,
            path_str(&f.abs)?,
            f.executable
        )?;
    }
    writeln!(code, "];")?;
    Ok(())
}

/// Every regular file under `dir`, relative to `root`.
fn walk(root: &Path, dir: &Path, files: &mut Vec<File>) -> Result<(), Error> {
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(root, &path, files)?;
        } else {
            files.push(file(root, &path)?);
        }
    }
    Ok(())
}

fn file(root: &Path, path: &Path) -> Result<File, Error> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file: it cannot be embedded",
            path.display()
        )
        .into());
    }
    let rel = path
        .strip_prefix(root)?
        .components()
        .map(|c| {
            c.as_os_str()
                .to_str()
                .ok_or_else(|| format!("{} is not UTF-8", path.display()))
        })
        .collect::<Result<Vec<_>, _>>()?
        .join("/");
    Ok(File {
        rel,
        abs: path.to_path_buf(),
        executable: meta.permissions().mode() & 0o111 != 0,
    })
}

fn path_str(path: &Path) -> Result<&str, Error> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()).into())
}
