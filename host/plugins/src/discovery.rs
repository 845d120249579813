//! Discovery across plugin roots: which entries are plugins, their precedence, shadowing and
//! enablement (Agent Plugins §6; rho's roots and policy in `docs/agent-plugins.md`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rho_component::{Diagnostic, DiagnosticCode, Scope};
use serde::Serialize;

use crate::PluginError;
use crate::package::{DATA_DIR, Package, load_package_resolved};
use crate::state::ActivationState;

/// Entries of a plugins root starting with this prefix are rho's own bookkeeping (staging and
/// replaced copies during install) and never plugins.
pub const RESERVED_PREFIX: &str = ".rho-";

/// One root to discover plugins in, in precedence order (nearest project root first).
#[derive(Debug, Clone)]
pub struct PluginRoot {
    /// The directory (`<dir>/.agents/plugins` or `~/.agents/plugins`).
    pub path: PathBuf,
    /// Its scope.
    pub scope: Scope,
    /// The activation state of that scope.
    pub state: ActivationState,
}

/// How a package came to be in its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Placed there by hand (or by another tool).
    Local,
    /// Copied by `rho plugins install`.
    Install,
    /// A symlink, as `rho plugins link` makes.
    Link,
}

impl Origin {
    /// The lowercase word used in JSON and tables: `local`, `install` or `link`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Install => "install",
            Self::Link => "link",
        }
    }
}

/// What became of a discovered package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PluginStatus {
    /// Contributes its skills and MCP servers to new sessions.
    Loaded,
    /// Valid but disabled in `plugins.toml`.
    Disabled,
    /// `plugin.json` is missing its contract; nothing of it loads.
    Rejected,
    /// A package with the same name in a higher-precedence position wins.
    Shadowed,
}

impl PluginStatus {
    /// The lowercase word used in JSON and tables: `loaded`, `disabled`, `rejected` or
    /// `shadowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Disabled => "disabled",
            Self::Rejected => "rejected",
            Self::Shadowed => "shadowed",
        }
    }
}

/// One discovered package and its fate.
#[derive(Debug, Clone)]
pub struct PluginRecord {
    /// The manifest name; for a rejected package without one, the entry's file name.
    pub name: String,
    /// The root's scope.
    pub scope: Scope,
    /// How it got there.
    pub origin: Origin,
    /// `<root>/<entry>` as found (a link for linked plugins).
    pub entry: PathBuf,
    /// The plugins root it was found in.
    pub plugins_root: PathBuf,
    /// Whether `plugins.toml` of its scope enables it.
    pub enabled: bool,
    /// The outcome.
    pub status: PluginStatus,
    /// For a shadowed package, the entry that wins.
    pub shadowed_by: Option<PathBuf>,
    /// For an installed package, where it was installed from.
    pub installed_from: Option<PathBuf>,
    /// The loaded package (manifest, components, diagnostics).
    pub package: Package,
}

impl PluginRecord {
    /// The resolved plugin root (the entry itself when it could not be resolved).
    pub fn path(&self) -> &Path {
        self.package.root.as_deref().unwrap_or(&self.entry)
    }

    /// Reads the instructions of this plugin's skill `name`, opening its `SKILL.md` again under
    /// the containment rules (a link swapped in since discovery cannot lead outside the root).
    pub fn read_skill_body(&self, name: &str) -> Result<String, PluginError> {
        let unsafe_path = |message: String| PluginError::Unsafe {
            path: self.path().join(crate::package::SKILLS_DIR).join(name),
            message,
        };
        if !self.package.skills.iter().any(|s| s.name == name) {
            return Err(unsafe_path(format!(
                "plugin {} has no skill {name:?}",
                self.name
            )));
        }
        let root = self
            .package
            .root
            .clone()
            .ok_or_else(|| unsafe_path("unresolved plugin root".into()))?;
        let beneath = crate::containment::Beneath::new(root);
        let rel = Path::new(crate::package::SKILLS_DIR)
            .join(name)
            .join(rho_skills::SKILL_FILE);
        let (mut file, _) = beneath
            .open_regular(&rel, u64::MAX)
            .map_err(|e| unsafe_path(format!("SKILL.md {e}")))?;
        rho_skills::read_body_from(&mut file, &beneath.root().join(&rel))
            .map_err(|e| unsafe_path(e.to_string()))
    }

    /// Reads the bytes of this plugin's tool component `name` (`dev.rho/tools/<name>.wasm`),
    /// opening it again under the containment rules.
    pub fn read_component(&self, name: &str) -> Result<Vec<u8>, PluginError> {
        let path = self
            .path()
            .join(crate::extension::TOOLS_DIR)
            .join(format!("{name}.wasm"));
        if !self.package.tool_components.iter().any(|c| c.name == name) {
            return Err(PluginError::Unsafe {
                path,
                message: format!("plugin {} has no tool component {name:?}", self.name),
            });
        }
        let root = self
            .package
            .root
            .clone()
            .ok_or_else(|| PluginError::Unsafe {
                path: path.clone(),
                message: "unresolved plugin root".into(),
            })?;
        let beneath = crate::containment::Beneath::new(root);
        crate::extension::read_component(&beneath, name).map_err(|e| PluginError::Unsafe {
            path,
            message: format!("component {e}"),
        })
    }

    /// `<plugins root>/data/<name>`: this plugin's `PLUGIN_DATA`.
    pub fn data_dir(&self) -> PathBuf {
        self.plugins_root.join(DATA_DIR).join(&self.name)
    }
}

/// Every package found in every root, in precedence order, plus root-level diagnostics.
#[derive(Debug, Clone, Default)]
pub struct PluginInventory {
    /// Packages in precedence order.
    pub plugins: Vec<PluginRecord>,
    /// Problems with roots or state files (package problems live on each record).
    pub diagnostics: Vec<Diagnostic>,
}

impl PluginInventory {
    /// The packages that contribute components.
    pub fn loaded(&self) -> impl Iterator<Item = &PluginRecord> {
        self.plugins
            .iter()
            .filter(|p| p.status == PluginStatus::Loaded)
    }

    /// The highest-precedence package called `name`: the winner if there is a valid one,
    /// otherwise the first package claiming the name.
    pub fn find(&self, name: &str) -> Option<&PluginRecord> {
        let mut matching = self.plugins.iter().filter(|p| p.name == name);
        let first = matching.clone().next();
        matching
            .find(|p| p.status != PluginStatus::Rejected && p.status != PluginStatus::Shadowed)
            .or(first)
    }

    /// Every diagnostic: root-level first, then each package's, then shadowing.
    pub fn all_diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().chain(
            self.plugins
                .iter()
                .flat_map(|p| p.package.diagnostics.iter()),
        )
    }
}

struct Candidate {
    root_index: usize,
    resolved_root: PathBuf,
    entry: PathBuf,
    file_name: OsString,
    is_link: bool,
}

/// Lists the plugin candidates of one root: immediate child directories, and child symlinks
/// resolving to directories, that hold a `plugin.json`. Everything else is skipped silently,
/// except a dangling or looping link, which is reported (it is usually a removed link target).
fn candidates(index: usize, root: &PluginRoot, diags: &mut Vec<Diagnostic>) -> Vec<Candidate> {
    let entries = match std::fs::read_dir(&root.path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            diags.push(
                Diagnostic::warning(
                    DiagnosticCode::PluginRootUnreadable,
                    format!("plugin root cannot be listed: {e}"),
                )
                .with_path(&root.path),
            );
            return Vec::new();
        }
    };
    let Ok(resolved_root) = dunce::canonicalize(&root.path) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name();
        if file_name == DATA_DIR || file_name.to_string_lossy().starts_with(RESERVED_PREFIX) {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let is_link = file_type.is_symlink();
        if is_link {
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => continue,
                Err(e) => {
                    diags.push(
                        Diagnostic::warning(
                            DiagnosticCode::PluginRootUnreadable,
                            format!("plugin link is broken: {e}"),
                        )
                        .with_path(&path)
                        .with_component(file_name.to_string_lossy()),
                    );
                    continue;
                }
            }
        } else if !file_type.is_dir() {
            continue;
        }
        // Whether it holds a plugin.json is decided by the (parallel) loader.
        found.push(Candidate {
            root_index: index,
            resolved_root: resolved_root.clone(),
            entry: path,
            file_name,
            is_link,
        });
    }
    found.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    found
}

/// Discovers every plugin in `roots` (precedence order) and decides shadowing and enablement.
/// Packages load in parallel; the result does not depend on scheduling.
pub fn discover(roots: &[PluginRoot]) -> PluginInventory {
    // Readers share each root's lock with each other and wait for a running install or remove
    // (which hold it exclusively), so a package is seen before or after a change, never half
    // replaced or half deleted.
    let _locks: Vec<std::fs::File> = roots.iter().filter_map(|r| shared_lock(&r.path)).collect();
    let mut inventory = PluginInventory::default();
    let mut all = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        all.extend(candidates(i, root, &mut inventory.diagnostics));
    }
    let packages = load_all(&all, roots);

    let mut winners: Vec<(String, PathBuf)> = Vec::new();
    for (candidate, package) in all.into_iter().zip(packages) {
        if package.not_a_plugin {
            continue; // not a plugin: skipped silently
        }
        let root = &roots[candidate.root_index];
        let name = package
            .manifest
            .as_ref()
            .map(|m| m.name.clone())
            .or_else(|| package.claimed_name.clone())
            .unwrap_or_else(|| candidate.file_name.to_string_lossy().into_owned());
        let enabled = root.state.is_enabled(&name);
        let installed_from = root.state.installed_from(&name).map(Path::to_path_buf);
        let origin = if candidate.is_link {
            Origin::Link
        } else if installed_from.is_some() {
            Origin::Install
        } else {
            Origin::Local
        };
        let mut record = PluginRecord {
            name: name.clone(),
            scope: root.scope,
            origin,
            entry: candidate.entry,
            plugins_root: candidate.resolved_root,
            enabled,
            status: PluginStatus::Loaded,
            shadowed_by: None,
            installed_from: if origin == Origin::Install {
                installed_from
            } else {
                None
            },
            package,
        };
        if !record.package.is_valid() {
            record.status = PluginStatus::Rejected;
        } else if let Some((_, winner)) = winners.iter().find(|(n, _)| *n == name) {
            record.status = PluginStatus::Shadowed;
            record.shadowed_by = Some(winner.clone());
            record.package.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::PluginShadowed,
                    format!(
                        "plugin {name:?} at {} is shadowed by the one at {}, which wins",
                        record.entry.display(),
                        winner.display()
                    ),
                )
                .with_path(&record.entry)
                .with_component(name.clone()),
            );
        } else {
            winners.push((name.clone(), record.entry.clone()));
            if !enabled {
                record.status = PluginStatus::Disabled;
                record.package.diagnostics.push(
                    Diagnostic::info(
                        DiagnosticCode::PluginDisabled,
                        format!(
                            "plugin {name:?} is disabled in its {} plugins.toml",
                            root.scope
                        ),
                    )
                    .with_path(&record.entry)
                    .with_component(name.clone()),
                );
            } else if record.package.skills.is_empty()
                && record.package.mcp_servers.is_empty()
                && record.package.tool_components.is_empty()
            {
                record.package.diagnostics.push(
                    Diagnostic::info(
                        DiagnosticCode::PluginNoComponents,
                        format!(
                            "plugin {name:?} contributes no usable skill, MCP server or tool \
                             component"
                        ),
                    )
                    .with_path(&record.entry)
                    .with_component(name.clone()),
                );
            }
        }
        inventory.plugins.push(record);
    }
    inventory
}

/// Loads every candidate, spreading the work over the machine's cores.
fn load_all(all: &[Candidate], roots: &[PluginRoot]) -> Vec<Package> {
    let load = |c: &Candidate| {
        // A plain directory of a resolved root is resolved already; only links need resolving.
        let resolved = (!c.is_link).then(|| c.resolved_root.join(&c.file_name));
        load_package_resolved(
            &c.entry,
            resolved,
            &c.resolved_root,
            roots[c.root_index].scope,
        )
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if workers < 2 || all.len() < 16 {
        return all.iter().map(load).collect();
    }
    let chunk = all.len().div_ceil(workers);
    std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(load).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(all.len());
        for (handle, part) in handles.into_iter().zip(all.chunks(chunk)) {
            match handle.join() {
                Ok(packages) => out.extend(packages),
                // A loader thread cannot panic on input (no panicking code paths), but if one
                // ever did, load its share again on this thread rather than lose it.
                Err(_) => out.extend(part.iter().map(load)),
            }
        }
        out
    })
}

/// The name of the lock file in each managed root (created by lifecycle operations only).
pub(crate) const LOCK_FILE: &str = ".rho-lock";

/// Takes a shared lock on `<root>/.rho-lock` if it exists. Discovery never creates it, and a
/// lock file planted as a symlink is not opened.
fn shared_lock(root: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK);
    }
    let file = options.open(root.join(LOCK_FILE)).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    file.lock_shared().ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rho plugins --json` and its tables say the same word (PluginStatus: `rho-rpc`'s test).
    #[test]
    fn origin_serializes_as_its_as_str_word() {
        for o in [Origin::Local, Origin::Install, Origin::Link] {
            assert_eq!(serde_json::to_value(o).ok(), Some(o.as_str().into()));
        }
    }
}
