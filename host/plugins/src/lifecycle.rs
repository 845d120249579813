//! Package lifecycle in the managed roots: install (validate, copy into a staging directory,
//! validate the copy, swap in), link, enable/disable (`plugins.toml`) and remove.
//!
//! Safety rules: destinations are immediate children of a managed root named by a validated
//! plugin name; `data/` is never a slot; a refused or failed operation leaves the previous
//! package intact; remove deletes only the package directory or the link itself, never a link's
//! target and never `data/<plugin>`; operations on one root are serialized by a lock file.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use rho_component::{Diagnostic, Scope, Severity, lossy_path};
use serde::Serialize;

use crate::PluginError;
use crate::containment::is_within;
use crate::copy::{CopyLimits, copy_package, remove_tree, temp_name};
use crate::discovery::{PluginInventory, PluginRoot, discover};
use crate::package::{DATA_DIR, Package, load_package};
use crate::state::ActivationState;

/// Where plugins are discovered, installed and their state kept, for one run.
#[derive(Debug, Clone)]
pub struct PluginLocations {
    /// Project plugin roots, nearest first.
    pub project_roots: Vec<PathBuf>,
    /// Where `--scope project` installs go (`<repository>/.agents/plugins`).
    pub project_install_root: PathBuf,
    /// `<repository>/.rho/plugins.toml`.
    pub project_state_file: PathBuf,
    /// `~/.agents/plugins`, when there is a home directory.
    pub user_root: Option<PathBuf>,
    /// `$RHO_HOME/plugins.toml`.
    pub user_state_file: PathBuf,
}

impl PluginLocations {
    /// The state file of a scope.
    pub fn state_file(&self, scope: Scope) -> &Path {
        match scope {
            Scope::Project => &self.project_state_file,
            Scope::User => &self.user_state_file,
        }
    }

    /// The install root of a scope.
    pub fn install_root(&self, scope: Scope) -> Result<&Path, PluginError> {
        match scope {
            Scope::Project => Ok(&self.project_install_root),
            Scope::User => self
                .user_root
                .as_deref()
                .ok_or_else(|| PluginError::Source {
                    path: PathBuf::from("~"),
                    message: "no home directory: set HOME to use the user scope".into(),
                }),
        }
    }

    /// Every discovery root in precedence order, with its scope's activation state, and a
    /// diagnostic for each state file that could not be read (its plugins then count as enabled).
    pub fn discovery_roots(&self) -> (Vec<PluginRoot>, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let mut load = |path: &Path| match ActivationState::load(path) {
            Ok(state) => state,
            Err(e) => {
                diags.push(
                    Diagnostic::error(
                        rho_component::DiagnosticCode::StateFileInvalid,
                        e.to_string(),
                    )
                    .with_path(path),
                );
                ActivationState::default()
            }
        };
        let mut roots = Vec::new();
        if !self.project_roots.is_empty() {
            let state = load(&self.project_state_file);
            for path in &self.project_roots {
                roots.push(PluginRoot {
                    path: path.clone(),
                    scope: Scope::Project,
                    state: state.clone(),
                });
            }
        }
        if let Some(user) = &self.user_root {
            roots.push(PluginRoot {
                path: user.clone(),
                scope: Scope::User,
                state: load(&self.user_state_file),
            });
        }
        (roots, diags)
    }

    /// Discovers every plugin.
    pub fn discover(&self) -> PluginInventory {
        let (roots, diags) = self.discovery_roots();
        let mut inventory = discover(&roots);
        inventory.diagnostics.splice(0..0, diags);
        inventory
    }

    fn searched(&self) -> String {
        let mut all: Vec<String> = self
            .project_roots
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        all.extend(self.user_root.iter().map(|p| p.display().to_string()));
        all.join(", ")
    }
}

/// Validates the package at `path` without installing it (used by `rho plugins validate`).
pub fn validate_package(path: &Path) -> Package {
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_package(path, &base, Scope::User)
}

/// What an install or link did. It serializes with the keys of `rho plugins install --json`
/// (docs/cli-json.md).
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    /// The plugin name (the slot).
    pub name: String,
    /// The new entry in the managed root.
    #[serde(rename = "path", serialize_with = "lossy_path::serialize")]
    pub destination: PathBuf,
    /// The scope.
    pub scope: Scope,
    /// Whether an existing package was replaced (`--force`).
    pub replaced: bool,
    /// Non-fatal diagnostics of the package (invalid skills, servers, unknown fields, ...).
    pub diagnostics: Vec<Diagnostic>,
}

/// What a remove did. It serializes as `rho plugins remove --json` (docs/cli-json.md).
#[derive(Debug, Clone, Serialize)]
pub struct RemoveReport {
    /// The plugin name.
    pub name: String,
    /// The removed entry.
    #[serde(serialize_with = "lossy_path::serialize")]
    pub removed: PathBuf,
    /// Whether it was a link (only the link was removed).
    pub was_link: bool,
    /// The scope.
    pub scope: Scope,
    /// The plugin's data directory, which is kept.
    #[serde(rename = "data_dir_kept", serialize_with = "lossy_path::serialize")]
    pub data_dir: PathBuf,
}

/// What an enable or disable did. It serializes as `rho plugins enable --json`
/// (docs/cli-json.md).
#[derive(Debug, Clone, Serialize)]
pub struct EnableReport {
    /// The plugin name.
    pub name: String,
    /// Whether the package is now enabled.
    pub enabled: bool,
    /// The scope of the package acted on.
    pub scope: Scope,
    /// The state file written.
    #[serde(serialize_with = "lossy_path::serialize")]
    pub state_file: PathBuf,
    /// Whether the state changed.
    pub changed: bool,
}

/// Why a name cannot be a slot; `None` when it can.
fn slot_refusal(name: &str) -> Option<&'static str> {
    if name.eq_ignore_ascii_case(DATA_DIR) {
        return Some("data/ is reserved for plugin data directories");
    }
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Some("it is not a single path component");
    }
    if name.starts_with('.') || name.starts_with('-') {
        return Some("slots cannot start with '.' or '-'");
    }
    None
}

/// A project-scope managed root reached through a symbolic link (a repository can ship
/// `.agents/plugins -> /somewhere/else`) is refused for writes: installs and removals would act
/// outside the project. The user scope may be linked on purpose (dotfiles), so it is allowed.
fn refuse_linked_project_root(root: &Path, scope: Scope) -> Result<(), PluginError> {
    if scope != Scope::Project {
        return Ok(());
    }
    let mut path = PathBuf::new();
    for component in root.components() {
        path.push(component);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            // Links above the project (a symlinked home or workspace) are fine; only the
            // project's own `.agents` and `.agents/plugins` matter.
            let name = component.as_os_str();
            if name == ".agents" || path == root {
                return Err(PluginError::Source {
                    path: path.clone(),
                    message: "is a symbolic link; project plugin roots must be real directories                               of the project"
                        .into(),
                });
            }
        }
    }
    Ok(())
}

/// A locked read-modify-write of a state file: concurrent `enable`, `disable`, `install` and
/// `remove` never lose each other's changes. `apply` returns whether it changed anything.
fn update_state(
    file: &Path,
    apply: impl FnOnce(&mut ActivationState) -> bool,
) -> Result<bool, PluginError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let io = |e| PluginError::Io {
        path: dir.to_path_buf(),
        error: e,
    };
    fs::create_dir_all(dir).map_err(io)?;
    let lock_path = dir.join(".plugins.toml.lock");
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    let lock = options.open(&lock_path).map_err(|e| PluginError::Io {
        path: lock_path.clone(),
        error: e,
    })?;
    lock.lock().map_err(|e| PluginError::Io {
        path: lock_path,
        error: e,
    })?;
    let mut state = ActivationState::load(file)?;
    let changed = apply(&mut state);
    if changed {
        state.save(file)?;
    }
    Ok(changed)
}

/// Holds a root's lock file for the duration of an operation.
struct RootLock(#[allow(dead_code)] File);

fn lock_root(root: &Path) -> Result<RootLock, PluginError> {
    let io = |e| PluginError::Io {
        path: root.to_path_buf(),
        error: e,
    };
    fs::create_dir_all(root).map_err(io)?;
    let path = root.join(crate::discovery::LOCK_FILE);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A lock file planted as a symlink is refused, never written through.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    let file = options.open(&path).map_err(|e| PluginError::Io {
        path: path.clone(),
        error: e,
    })?;
    file.lock()
        .map_err(|e| PluginError::Io { path, error: e })?;
    Ok(RootLock(file))
}

fn resolve_source(path: &Path) -> Result<PathBuf, PluginError> {
    let resolved = dunce::canonicalize(path).map_err(|e| PluginError::Source {
        path: path.to_path_buf(),
        message: format!("cannot be resolved: {e}"),
    })?;
    if !resolved.is_dir() {
        return Err(PluginError::Source {
            path: path.to_path_buf(),
            message: "is not a directory".into(),
        });
    }
    Ok(resolved)
}

/// Validates `source` as a package whose data would live under `root`, returning its name and
/// non-fatal diagnostics.
fn validated_name(
    source: &Path,
    root: &Path,
    scope: Scope,
) -> Result<(String, Vec<Diagnostic>), PluginError> {
    let package = load_package(source, root, scope);
    if package.not_a_plugin {
        return Err(PluginError::Source {
            path: source.to_path_buf(),
            message: "has no plugin.json, so it is not a plugin".into(),
        });
    }
    let Some(manifest) = &package.manifest else {
        let fatal = package
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        return Err(PluginError::InvalidPackage {
            path: source.to_path_buf(),
            diagnostics: fatal,
        });
    };
    let name = manifest.name.clone();
    if let Some(reason) = slot_refusal(&name) {
        return Err(PluginError::ReservedName { name, reason });
    }
    Ok((name, package.diagnostics))
}

fn refuse_overlap(source: &Path, root: &Path) -> Result<(), PluginError> {
    let resolved_root = dunce::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if is_within(&resolved_root, source) || is_within(source, &resolved_root) {
        return Err(PluginError::Source {
            path: source.to_path_buf(),
            message: format!(
                "overlaps the managed root {}; install or link from a directory outside it",
                resolved_root.display()
            ),
        });
    }
    Ok(())
}

/// Moves `dest` aside, moves `staged` into place, then deletes the old entry (only the link
/// itself if it was a link). If the swap fails, the old entry is put back.
fn swap_in(root: &Path, name: &str, staged: &Path, dest: &Path) -> Result<bool, PluginError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| PluginError::Io { path, error: e }
    };
    let old = match fs::symlink_metadata(dest) {
        Ok(meta) => {
            let aside = temp_name(root, "old", name);
            fs::rename(dest, &aside).map_err(io(dest))?;
            Some((aside, meta.file_type().is_symlink()))
        }
        Err(_) => None,
    };
    if let Err(e) = fs::rename(staged, dest) {
        if let Some((aside, _)) = &old {
            let _ = fs::rename(aside, dest);
        }
        return Err(PluginError::Io {
            path: dest.to_path_buf(),
            error: e,
        });
    }
    if let Some((aside, was_link)) = old {
        if was_link {
            fs::remove_file(&aside)
        } else {
            remove_tree(&aside)
        }
        .map_err(io(&aside))?;
    }
    Ok(true)
}

/// Removes a staging entry rho created (a directory it made, or a link it made).
fn discard(staged: &Path) {
    match fs::symlink_metadata(staged) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let _ = fs::remove_file(staged);
        }
        Ok(_) => {
            let _ = remove_tree(staged);
        }
        Err(_) => {}
    }
}

/// A validated package and its destination slot, with the managed root locked.
struct Slot {
    /// The resolved source directory.
    source: PathBuf,
    root: PathBuf,
    name: String,
    dest: PathBuf,
    /// Non-fatal diagnostics of the source package.
    diagnostics: Vec<Diagnostic>,
    _lock: RootLock,
}

/// Validates `source` and claims `<root>/<name>` for it: refused if taken without `force`.
fn claim_slot(
    locations: &PluginLocations,
    source: &Path,
    scope: Scope,
    force: bool,
) -> Result<Slot, PluginError> {
    let source = resolve_source(source)?;
    let root = locations.install_root(scope)?.to_path_buf();
    refuse_overlap(&source, &root)?;
    let (name, diagnostics) = validated_name(&source, &root, scope)?;
    let dest = root.join(&name);
    let taken = |dest: &Path| !force && fs::symlink_metadata(dest).is_ok();
    if taken(&dest) {
        return Err(PluginError::Exists { path: dest });
    }
    refuse_linked_project_root(&root, scope)?;
    let lock = lock_root(&root)?;
    // A broken state file refuses the operation before anything changes.
    ActivationState::load(locations.state_file(scope))?;
    // Checked again under the lock: another process may have taken the slot meanwhile.
    if taken(&dest) {
        return Err(PluginError::Exists { path: dest });
    }
    Ok(Slot {
        source,
        root,
        name,
        dest,
        diagnostics,
        _lock: lock,
    })
}

impl Slot {
    /// Swaps the prepared `staged` entry into the slot (removing `staged` on failure) and
    /// returns whether an existing entry was replaced.
    fn put_in_place(&self, staged: &Path) -> Result<bool, PluginError> {
        let replaced = fs::symlink_metadata(&self.dest).is_ok();
        if let Err(e) = swap_in(&self.root, &self.name, staged, &self.dest) {
            discard(staged);
            return Err(e);
        }
        Ok(replaced)
    }

    /// Records (or clears) the install source in the scope's state file.
    fn record_origin(
        self,
        locations: &PluginLocations,
        scope: Scope,
        installed_from: Option<PathBuf>,
        replaced: bool,
    ) -> Result<InstallReport, PluginError> {
        update_state(locations.state_file(scope), |state| {
            let changed = state.installed_from(&self.name) != installed_from.as_deref();
            if changed {
                state.set_installed_from(&self.name, installed_from);
            }
            changed
        })?;
        Ok(InstallReport {
            name: self.name,
            destination: self.dest,
            scope,
            replaced,
            diagnostics: self.diagnostics,
        })
    }
}

/// Installs (copies) the package at `source` into the managed root of `scope`.
pub fn install(
    locations: &PluginLocations,
    source: &Path,
    scope: Scope,
    force: bool,
) -> Result<InstallReport, PluginError> {
    install_with_limits(locations, source, scope, force, CopyLimits::default())
}

/// [`install`] with explicit copy limits.
pub fn install_with_limits(
    locations: &PluginLocations,
    source: &Path,
    scope: Scope,
    force: bool,
    limits: CopyLimits,
) -> Result<InstallReport, PluginError> {
    let mut slot = claim_slot(locations, source, scope, force)?;
    let resolved_root = dunce::canonicalize(&slot.root).unwrap_or_else(|_| slot.root.clone());
    let staged = temp_name(&slot.root, "staging", &slot.name);
    let prepared = copy_package(&slot.source, &staged, limits).and_then(|()| {
        // Validate what was actually copied, not what the source looked like before.
        let (staged_name, diagnostics) = validated_name(&staged, &resolved_root, scope)?;
        if staged_name != slot.name {
            return Err(PluginError::Source {
                path: slot.source.clone(),
                message: "the manifest changed during the copy".into(),
            });
        }
        Ok(diagnostics)
    });
    match prepared {
        Ok(diagnostics) => slot.diagnostics = diagnostics,
        Err(e) => {
            discard(&staged);
            return Err(e);
        }
    }
    let replaced = slot.put_in_place(&staged)?;
    let source = slot.source.clone();
    slot.record_origin(locations, scope, Some(source), replaced)
}

/// Links the package at `source` into the managed root of `scope` (a directory symlink to its
/// absolute resolved path).
pub fn link(
    locations: &PluginLocations,
    source: &Path,
    scope: Scope,
    force: bool,
) -> Result<InstallReport, PluginError> {
    let slot = claim_slot(locations, source, scope, force)?;
    let staged = temp_name(&slot.root, "staging", &slot.name);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&slot.source, &staged).map_err(|e| PluginError::Io {
        path: staged.clone(),
        error: e,
    })?;
    #[cfg(not(unix))]
    return Err(PluginError::Source {
        path: slot.source,
        message: "links need a Unix system".into(),
    });
    let replaced = slot.put_in_place(&staged)?;
    slot.record_origin(locations, scope, None, replaced)
}

/// Enables or disables the highest-precedence package called `name` in its scope's state file.
pub fn set_enabled(
    locations: &PluginLocations,
    name: &str,
    enabled: bool,
) -> Result<EnableReport, PluginError> {
    let inventory = locations.discover();
    let record = inventory.find(name).ok_or_else(|| PluginError::NotFound {
        name: name.to_owned(),
        searched: locations.searched(),
    })?;
    let state_file = locations.state_file(record.scope).to_path_buf();
    let changed = update_state(&state_file, |state| {
        let changed = state.is_enabled(name) != enabled;
        if changed {
            state.set_enabled(name, enabled);
        }
        changed
    })?;
    Ok(EnableReport {
        name: name.to_owned(),
        enabled,
        scope: record.scope,
        state_file,
        changed,
    })
}

/// The entry `remove` would delete for `name`, for confirmation prompts.
pub fn removal_target(locations: &PluginLocations, name: &str) -> Result<PathBuf, PluginError> {
    let inventory = locations.discover();
    inventory
        .find(name)
        .map(|r| r.entry.clone())
        .ok_or_else(|| PluginError::NotFound {
            name: name.to_owned(),
            searched: locations.searched(),
        })
}

/// Removes the highest-precedence package called `name`: its directory, or only the link.
pub fn remove(locations: &PluginLocations, name: &str) -> Result<RemoveReport, PluginError> {
    let inventory = locations.discover();
    let record = inventory.find(name).ok_or_else(|| PluginError::NotFound {
        name: name.to_owned(),
        searched: locations.searched(),
    })?;
    // Rebuild the path from the root and a single validated component: never from text that
    // could end in '/' or name something through a link (E3 in the adversarial notes).
    let root = record
        .entry
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let component = record
        .entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(reason) = slot_refusal(&component) {
        return Err(PluginError::ReservedName {
            name: component,
            reason,
        });
    }
    let entry = root.join(&component);
    refuse_linked_project_root(&root, record.scope)?;
    let _lock = lock_root(&root)?;
    let meta = fs::symlink_metadata(&entry).map_err(|e| PluginError::Io {
        path: entry.clone(),
        error: e,
    })?;
    let was_link = meta.file_type().is_symlink();
    if was_link {
        fs::remove_file(&entry)
    } else if meta.is_dir() {
        // Move it aside first so discovery never sees a half-deleted package.
        let aside = temp_name(&root, "old", &component);
        fs::rename(&entry, &aside).and_then(|()| {
            remove_tree(&aside).inspect_err(|_| {
                // Put it back rather than leave a package discovery can no longer see.
                let _ = fs::rename(&aside, &entry);
            })
        })
    } else {
        return Err(PluginError::Source {
            path: entry,
            message: "is not a plugin directory or link".into(),
        });
    }
    .map_err(|e| PluginError::Io {
        path: entry.clone(),
        error: e,
    })?;
    update_state(locations.state_file(record.scope), |state| {
        let known = state.plugins.contains_key(name);
        state.forget(name);
        known
    })?;
    Ok(RemoveReport {
        name: name.to_owned(),
        removed: entry,
        was_link,
        scope: record.scope,
        data_dir: record.data_dir(),
    })
}
