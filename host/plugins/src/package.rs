//! Loading one plugin package: manifest first, then each supported component type from its
//! fixed location (Agent Plugins §5.1, §6, §7), each failing at its own boundary.

use std::path::{Path, PathBuf};

use rho_component::{Diagnostic, DiagnosticCode, McpServerSpec, Scope, SkillMeta, SkillSource};

use crate::containment::{Beneath, ContainError};
use crate::manifest::{Manifest, load_manifest, quote};
use crate::mcp_config::{PluginContext, load_mcp_config};

/// The fixed skills location.
pub const SKILLS_DIR: &str = "skills";

/// The reserved entry of every plugins root that holds `PLUGIN_DATA` directories.
pub const DATA_DIR: &str = "data";

/// What one package directory yields, independent of where it was found.
#[derive(Debug, Clone)]
pub struct Package {
    /// The filesystem-resolved plugin root (`None` if the directory itself could not be resolved).
    pub root: Option<PathBuf>,
    /// The validated manifest; `None` means the plugin is rejected.
    pub manifest: Option<Manifest>,
    /// The manifest `name` if it is at least a string (shown for rejected plugins).
    pub claimed_name: Option<String>,
    /// Valid skills, sorted by name.
    pub skills: Vec<SkillMeta>,
    /// Valid MCP servers, sorted by name.
    pub mcp_servers: Vec<McpServerSpec>,
    /// Valid WASM tool components (`dev.rho/tools/*.wasm`), sorted by name.
    pub tool_components: Vec<rho_component::WasmComponentSpec>,
    /// Everything reported while loading, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// The directory has no `plugin.json` at all, so it is not a plugin.
    pub not_a_plugin: bool,
    /// The SHA-256 of `plugin.json` as it was read, when it could be read. Kept so whoever
    /// fingerprints what a package declares (the MCP tool cache) needs no second read.
    pub manifest_sha256: Option<[u8; 32]>,
    /// The SHA-256 of `mcp.json` as it was read, when there is one and it could be read.
    pub mcp_sha256: Option<[u8; 32]>,
}

impl Package {
    /// Whether the manifest was accepted.
    pub fn is_valid(&self) -> bool {
        self.manifest.is_some()
    }
}

/// Loads the package at `dir` (a plugin directory or a link to one). `plugins_root` is the
/// resolved root it belongs to, which places `PLUGIN_DATA` at `<plugins_root>/data/<name>`.
pub fn load_package(dir: &Path, plugins_root: &Path, scope: Scope) -> Package {
    load_package_resolved(dir, None, plugins_root, scope)
}

/// [`load_package`] when the caller already knows the resolved root (a plain directory entry
/// of an already-resolved plugins root), which saves resolving it again.
pub(crate) fn load_package_resolved(
    dir: &Path,
    resolved: Option<PathBuf>,
    plugins_root: &Path,
    scope: Scope,
) -> Package {
    let mut package = Package {
        root: None,
        manifest: None,
        claimed_name: None,
        skills: Vec::new(),
        mcp_servers: Vec::new(),
        tool_components: Vec::new(),
        diagnostics: Vec::new(),
        not_a_plugin: false,
        manifest_sha256: None,
        mcp_sha256: None,
    };
    let root = match resolved.map_or_else(|| dunce::canonicalize(dir), Ok) {
        Ok(root) => root,
        Err(e) => {
            package.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::PluginRootUnreadable,
                    format!("the plugin directory cannot be resolved: {e}"),
                )
                .with_path(dir),
            );
            return package;
        }
    };
    package.root = Some(root.clone());
    let beneath = Beneath::new(root.clone());
    let outcome = load_manifest(&beneath);
    package.not_a_plugin = outcome.absent;
    package.manifest_sha256 = outcome.sha256;
    package.claimed_name = outcome.claimed_name;
    package.diagnostics.extend(outcome.diagnostics);
    let Some(manifest) = outcome.manifest else {
        return package; // rejected: no component is discovered (§5.2)
    };
    let name = manifest.name.clone();
    for d in &mut package.diagnostics {
        if d.component.is_none() {
            d.component = Some(name.clone());
        }
    }

    let (skills, skill_diags) = load_skills(&beneath, &name, scope);
    package.skills = skills;
    package.diagnostics.extend(skill_diags);

    let data_dir = plugins_root.join(DATA_DIR).join(&name);
    let ctx = PluginContext {
        name: &name,
        root: &root,
        beneath: &beneath,
        data_dir: &data_dir,
        spec: manifest.spec,
    };
    let mcp = load_mcp_config(&ctx);
    package.mcp_servers = mcp.servers;
    package.mcp_sha256 = mcp.sha256;
    package.diagnostics.extend(mcp.diagnostics);
    let extension = crate::extension::load_tool_components(&name, &beneath, &manifest.extensions);
    package.tool_components = extension.components;
    package.diagnostics.extend(extension.diagnostics);
    package.manifest = Some(manifest);
    package
}

/// Discovers `skills/<dir>/SKILL.md` (no recursion, §7.1).
fn load_skills(beneath: &Beneath, plugin: &str, scope: Scope) -> (Vec<SkillMeta>, Vec<Diagnostic>) {
    let root = beneath.root();
    let mut skills = Vec::new();
    let mut diags = Vec::new();
    let location = root.join(SKILLS_DIR);
    let component = format!("{plugin}/skills");
    let skills_dir = match beneath.dir(Path::new(SKILLS_DIR)) {
        Ok(dir) => dir,
        // Absent: not an error (§6.2). Asked only on failure, so a present skills/ costs one
        // lstat; a dangling link named skills/ exists and is reported below.
        Err(_) if std::fs::symlink_metadata(&location).is_err() => return (skills, diags),
        Err(ContainError::Escape(target)) => {
            diags.push(
                Diagnostic::error(
                    DiagnosticCode::PathEscape,
                    format!(
                        "skills/ resolves outside the plugin root (to {}); no skill of this \
                         plugin is loaded",
                        target.display()
                    ),
                )
                .with_path(location)
                .with_component(component),
            );
            return (skills, diags);
        }
        Err(e) => {
            diags.push(
                Diagnostic::error(
                    DiagnosticCode::SkillsLocationInvalid,
                    format!(
                        "skills/ must be a directory, but it {e}; no skill of this plugin is loaded"
                    ),
                )
                .with_path(location)
                .with_component(component),
            );
            return (skills, diags);
        }
    };
    // (name, is a plain directory): links are resolved below, other kinds are not skills.
    let mut names = match dirs_and_links(&skills_dir) {
        Ok(names) => names,
        Err(e) => {
            diags.push(
                Diagnostic::error(
                    DiagnosticCode::SkillsLocationInvalid,
                    format!("skills/ cannot be listed: {e}"),
                )
                .with_path(location)
                .with_component(component),
            );
            return (skills, diags);
        }
    };
    names.sort();
    let source = SkillSource::Plugin {
        plugin: plugin.to_owned(),
        scope,
    };
    for (dir_name, plain_dir) in names {
        let entry = skills_dir.join(&dir_name);
        let shown = dir_name.to_string_lossy().into_owned();
        let component = format!("{plugin}/{shown}");
        let skill_md = entry.join(rho_skills::SKILL_FILE);
        // Only a child holding a path named SKILL.md is a candidate; anything else is skipped
        // silently (files like README.md in skills/ are fine).
        if !plain_dir && !std::fs::metadata(&entry).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let invalid = |code: DiagnosticCode, message: String| {
            Diagnostic::error(code, message)
                .with_path(&skill_md)
                .with_component(component.clone())
        };
        let Some(dir_str) = dir_name.to_str() else {
            diags.push(invalid(
                DiagnosticCode::SkillInvalid,
                format!(
                    "skill directory {} is not valid UTF-8; skipped",
                    quote(&shown)
                ),
            ));
            continue;
        };
        let rel = Path::new(SKILLS_DIR)
            .join(&dir_name)
            .join(rho_skills::SKILL_FILE);
        match beneath.open_regular(&rel, u64::MAX) {
            // No path named SKILL.md at all: not a skill, skipped silently.
            Err(ContainError::Missing) if std::fs::symlink_metadata(&skill_md).is_err() => {}
            // Read up to the length the open descriptor reported, like every package file:
            // the read stops there without asking the kernel again for the end of the file.
            Ok((file, len)) => {
                match rho_skills::read_skill_head(&mut std::io::Read::take(file, len)) {
                    Ok(head) => {
                        match rho_skills::parse_skill(
                            &head,
                            dir_str,
                            skill_md.clone(),
                            source.clone(),
                        ) {
                            Ok(skill) => skills.push(skill),
                            Err(e) => diags.push(invalid(
                                DiagnosticCode::SkillInvalid,
                                format!("skill {} skipped: {e}", quote(dir_str)),
                            )),
                        }
                    }
                    Err(e) => diags.push(invalid(
                        DiagnosticCode::SkillInvalid,
                        format!(
                            "skill {} skipped: SKILL.md cannot be read: {e}",
                            quote(dir_str)
                        ),
                    )),
                }
            }
            Err(ContainError::Escape(target)) => diags.push(invalid(
                DiagnosticCode::PathEscape,
                format!(
                    "skill {} skipped: SKILL.md resolves outside the plugin root (to {})",
                    quote(dir_str),
                    target.display()
                ),
            )),
            Err(ContainError::WrongKind(kind)) => diags.push(invalid(
                DiagnosticCode::SkillInvalid,
                format!(
                    "skill {} skipped: SKILL.md is a {kind}, not a regular file",
                    quote(dir_str)
                ),
            )),
            Err(e) => diags.push(invalid(
                DiagnosticCode::SkillInvalid,
                format!("skill {} skipped: SKILL.md {e}", quote(dir_str)),
            )),
        }
    }
    (skills, diags)
}

/// The entries of `dir` that are directories or symlinks, each with whether it is a plain
/// directory. Entries that cannot be read are skipped, like every other kind.
#[cfg(target_os = "linux")]
fn dirs_and_links(dir: &Path) -> std::io::Result<Vec<(std::ffi::OsString, bool)>> {
    use std::os::unix::ffi::OsStrExt as _;

    use rustix::fs::{FileType, Mode, OFlags};
    // `std::fs::read_dir` goes through `opendir`, which adds an `fstat` and a 32 KiB buffer per
    // directory; one listing per plugin makes that a measurable part of discovery.
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = rustix::fs::open(dir, flags, Mode::empty()).map_err(std::io::Error::from)?;
    let mut entries = rustix::fs::Dir::new(fd).map_err(std::io::Error::from)?;
    let mut found = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Symlink => false,
            // Not every filesystem reports a type in the listing; ask the entry itself then.
            FileType::Unknown => match std::fs::symlink_metadata(dir.join(name)) {
                Ok(meta) if meta.is_dir() => true,
                Ok(meta) if meta.file_type().is_symlink() => false,
                _ => continue,
            },
            _ => continue,
        };
        found.push((name.to_os_string(), is_dir));
    }
    Ok(found)
}

/// The entries of `dir` that are directories or symlinks, each with whether it is a plain
/// directory. Entries that cannot be read are skipped, like every other kind.
#[cfg(not(target_os = "linux"))]
fn dirs_and_links(dir: &Path) -> std::io::Result<Vec<(std::ffi::OsString, bool)>> {
    Ok(std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let ft = e.file_type().ok()?;
            (ft.is_dir() || ft.is_symlink()).then(|| (e.file_name(), ft.is_dir()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    const MANIFEST: &str = r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "p", "version": "1.0.0"}"#;
    const MCP: &str = r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "srv"}}}"#;

    #[test]
    fn skill_candidates_are_the_directories_and_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("plain")).unwrap();
        std::fs::write(dir.path().join("file.md"), "x").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("plain", dir.path().join("link")).unwrap();
            std::os::unix::fs::symlink("missing", dir.path().join("dangling")).unwrap();
        }
        let mut names = dirs_and_links(dir.path()).unwrap();
        names.sort();
        let names: Vec<(&str, bool)> = names
            .iter()
            .map(|(n, is_dir)| (n.to_str().unwrap(), *is_dir))
            .collect();
        #[cfg(unix)]
        assert_eq!(
            names,
            [("dangling", false), ("link", false), ("plain", true)],
            "no file, no . or .."
        );
        #[cfg(not(unix))]
        assert_eq!(names, [("plain", true)]);
        let missing = dirs_and_links(&dir.path().join("nope")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn a_package_keeps_the_digests_of_the_files_it_read() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("p");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("plugin.json"), MANIFEST).unwrap();
        let package = load_package(&dir, root.path(), Scope::User);
        assert!(package.is_valid(), "{:?}", package.diagnostics);
        let manifest: [u8; 32] = Sha256::digest(MANIFEST.as_bytes()).into();
        assert_eq!(package.manifest_sha256, Some(manifest));
        assert_eq!(package.mcp_sha256, None, "no mcp.json, no digest");

        std::fs::write(dir.join(crate::MCP_FILE), MCP).unwrap();
        let package = load_package(&dir, root.path(), Scope::User);
        assert_eq!(package.mcp_servers.len(), 1, "{:?}", package.diagnostics);
        let mcp: [u8; 32] = Sha256::digest(MCP.as_bytes()).into();
        assert_eq!(package.mcp_sha256, Some(mcp));
        assert_eq!(package.manifest_sha256, Some(manifest));
    }
}
