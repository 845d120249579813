//! Activation state (`plugins.toml`): rho policy kept outside package directories.
//!
//! ```toml
//! [plugins.my-plugin]
//! enabled = false                       # missing means enabled
//! installed_from = "/abs/source/path"   # set by `rho plugins install`
//! ```
//!
//! The file is strict: unknown keys are errors naming the file, key and line. Writes go to a
//! fresh temporary file (never through a planted symlink) and are renamed into place.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::PluginError;

/// The state of one scope: enablement and install records by plugin name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActivationState {
    /// Per-plugin entries.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginState>,
}

/// One plugin's entry in `plugins.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginState {
    /// `false` disables the plugin; missing means enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Where `rho plugins install` copied the package from (its bytes when it is not UTF-8).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "rho_component::exact_path::option"
    )]
    pub installed_from: Option<PathBuf>,
}

impl PluginState {
    fn is_empty(&self) -> bool {
        self.enabled.is_none() && self.installed_from.is_none()
    }
}

impl ActivationState {
    /// Reads a state file; a missing file is the empty state (every plugin enabled).
    pub fn load(path: &Path) -> Result<Self, PluginError> {
        const MAX: u64 = 1024 * 1024;
        let fail = |message: String| PluginError::StateFile {
            path: path.to_path_buf(),
            message,
        };
        // A state file is rho's own and never a link: a `.rho/plugins.toml` planted in a
        // repository as a link to a private file must not be read (its parse errors would
        // quote it).
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
        }
        let file = match options.open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(fail(
                    "is a symbolic link; rho reads its state files only as regular files".into(),
                ));
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
        if !meta.is_file() {
            return Err(fail("is not a regular file".into()));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX + 1), &mut bytes)
            .map_err(|e| fail(e.to_string()))?;
        if bytes.len() as u64 > MAX {
            return Err(fail("larger than 1 MiB".into()));
        }
        let text = String::from_utf8(bytes).map_err(|_| fail("not valid UTF-8".into()))?;
        toml::from_str(&text).map_err(|e| {
            // The parser's own rendering quotes the offending line; name the place instead.
            let at = e.span().map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!("line {line}, column {column}: ")
            });
            fail(format!(
                "{}{}",
                at.unwrap_or_default(),
                e.message().trim_end()
            ))
        })
    }

    /// Whether `name` is enabled in this scope.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.plugins
            .get(name)
            .and_then(|s| s.enabled)
            .unwrap_or(true)
    }

    /// The recorded install source of `name`, if it was installed by rho.
    pub fn installed_from(&self, name: &str) -> Option<&Path> {
        self.plugins
            .get(name)
            .and_then(|s| s.installed_from.as_deref())
    }

    /// Sets or clears `enabled = false` for `name`.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) {
        let entry = self.plugins.entry(name.to_owned()).or_default();
        entry.enabled = if enabled { None } else { Some(false) };
        self.prune(name);
    }

    /// Records (or clears) the install source of `name`.
    pub fn set_installed_from(&mut self, name: &str, source: Option<PathBuf>) {
        self.plugins
            .entry(name.to_owned())
            .or_default()
            .installed_from = source;
        self.prune(name);
    }

    /// Forgets everything about `name`.
    pub fn forget(&mut self, name: &str) {
        self.plugins.remove(name);
    }

    fn prune(&mut self, name: &str) {
        if self.plugins.get(name).is_some_and(PluginState::is_empty) {
            self.plugins.remove(name);
        }
    }

    /// Writes the state atomically: a new temporary file beside `path` (created exclusively, so
    /// a planted symlink is never written through), then a rename.
    pub fn save(&self, path: &Path) -> Result<(), PluginError> {
        let io = |e: std::io::Error| PluginError::Io {
            path: path.to_path_buf(),
            error: e,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let text = toml::to_string(self).map_err(|e| PluginError::StateFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let tmp = dir.join(format!(
            ".plugins.toml.tmp-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .mode(0o644);
        }
        let result = options.open(&tmp).and_then(|mut file| {
            file.write_all(
                b"# rho plugin activation state (rho policy, not part of any package)\n",
            )?;
            file.write_all(text.as_bytes())?;
            file.sync_all()
        });
        if let Err(e) = result.and_then(|()| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugins.toml");
        let mut state = ActivationState::load(&path).unwrap();
        assert!(state.is_enabled("x"));
        state.set_enabled("x", false);
        state.set_installed_from("y", Some("/src/y".into()));
        state.save(&path).unwrap();
        let back = ActivationState::load(&path).unwrap();
        assert_eq!(back, state);
        assert!(!back.is_enabled("x"));
        let mut back = back;
        back.set_enabled("x", true);
        assert!(
            !back.plugins.contains_key("x"),
            "an all-default entry is dropped"
        );
    }

    #[test]
    fn strict_parsing_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugins.toml");
        std::fs::write(&path, "[plugins.x]\nenabled = false\nenbled = true\n").unwrap();
        let err = ActivationState::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("plugins.toml") && err.contains("enbled") && err.contains('3'),
            "{err}"
        );
    }
}
