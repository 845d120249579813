//! Trust for project plugins: a plugin found in a project's `.agents/plugins` may run code
//! (its MCP servers, its WASM tool components), so rho runs it only once the user trusted
//! that exact plugin. The trust record is a fingerprint of what would run and with which
//! capabilities: the resolved root, `mcp.json` as written and the bytes of every server
//! executable shipped in the package, and for every tool component its bytes and its resolved
//! settings (workspace access, environment names, limits, risk). Editing any of these,
//! replacing a binary or a `.wasm`, or re-linking the root changes the fingerprint, and the
//! plugin is untrusted again until the user trusts it anew.
//!
//! Records live in `$RHO_HOME/trusted-plugins.toml` (strict, written atomically). User-scope
//! plugins need no trust: installing them is the user's decision.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rho_component::{McpTransport, Scope, StdioCommand};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{MCP_FILE, PluginError, PluginRecord};

/// The file name of the trust store under `RHO_HOME`.
pub const TRUST_FILE: &str = "trusted-plugins.toml";

/// Executables larger than this are hashed up to here (and the size is part of the hash).
const MAX_HASHED_BYTES: u64 = 512 * 1024 * 1024;

/// Whether a plugin may run its servers and tool components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// A user-scope plugin, or one with neither servers nor tool components: nothing to
    /// decide.
    NotNeeded,
    /// Trusted with the current fingerprint.
    Trusted,
    /// Never trusted.
    Untrusted,
    /// Trusted once, but what it runs changed since.
    Changed,
}

impl TrustState {
    /// `not-needed`, `trusted`, `untrusted` or `changed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::NotNeeded => "not-needed",
            Self::Trusted => "trusted",
            Self::Untrusted => "untrusted",
            Self::Changed => "changed",
        }
    }

    /// Whether its servers may start and its tool components load.
    pub fn allows_start(&self) -> bool {
        matches!(self, Self::NotNeeded | Self::Trusted)
    }
}

/// The largest trust store rho reads (about 4,000 records).
const TRUST_STORE_MAX_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    #[serde(default, rename = "plugin")]
    plugins: Vec<TrustRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustRecord {
    /// The plugin root (its bytes when it is not UTF-8).
    #[serde(with = "rho_component::exact_path")]
    root: PathBuf,
    name: String,
    fingerprint: String,
}

/// The user's trust decisions.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    path: PathBuf,
    records: BTreeMap<PathBuf, TrustRecord>,
    /// Fingerprints computed by [`TrustStore::state`], by plugin root (`None`: could not be
    /// computed), so one load hashes each plugin's files once however often it asks. A store
    /// lives for one load of the plugins; `trust` replaces the entry it records.
    computed: Arc<Mutex<HashMap<PathBuf, Option<String>>>>,
}

impl TrustStore {
    /// Reads the store at `path` (missing: empty). A store that cannot be read trusts nothing
    /// and says why.
    pub fn load(path: &Path) -> Result<Self, PluginError> {
        // Bounded, and refused rather than opened when it is not a regular file: a FIFO or a
        // device put in its place cannot stall rho or feed it without end.
        let text = match rho_component::read_regular(path, TRUST_STORE_MAX_BYTES) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| PluginError::StateFile {
                path: path.to_path_buf(),
                message: "not a valid trust store: it is not UTF-8 text".to_owned(),
            })?,
            Err(e) if e.is_not_found() => String::new(),
            Err(e) => {
                return Err(PluginError::StateFile {
                    path: path.to_path_buf(),
                    message: e.problem(),
                });
            }
        };
        let file: TrustFile = toml::from_str(&text).map_err(|e| PluginError::StateFile {
            path: path.to_path_buf(),
            message: format!("not a valid trust store: {}", e.message().trim_end()),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            records: file
                .plugins
                .into_iter()
                .map(|r| (r.root.clone(), r))
                .collect(),
            computed: Arc::default(),
        })
    }

    /// The trust state of `record`.
    pub fn state(&self, record: &PluginRecord) -> TrustState {
        if record.scope != Scope::Project || !runs_code(record) {
            return TrustState::NotNeeded;
        }
        let Some(trusted) = self.records.get(record.path()) else {
            return TrustState::Untrusted;
        };
        let current = {
            let mut computed = self.computed.lock().unwrap_or_else(PoisonError::into_inner);
            computed
                .entry(record.path().to_path_buf())
                .or_insert_with(|| fingerprint(record).ok())
                .clone()
        };
        match current {
            Some(current) if current == trusted.fingerprint => TrustState::Trusted,
            _ => TrustState::Changed,
        }
    }

    /// Records `record` as trusted with its current fingerprint and saves the store.
    pub fn trust(&mut self, record: &PluginRecord) -> Result<(), PluginError> {
        let fingerprint = fingerprint(record)?;
        let root = record.path().to_path_buf();
        self.computed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(root.clone(), Some(fingerprint.clone()));
        self.records.insert(
            root.clone(),
            TrustRecord {
                root,
                name: record.name.clone(),
                fingerprint,
            },
        );
        self.save()
    }

    /// Forgets every record for `record`'s root; returns whether one existed.
    pub fn untrust(&mut self, record: &PluginRecord) -> Result<bool, PluginError> {
        let removed = self.records.remove(record.path()).is_some();
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> Result<(), PluginError> {
        let io = |error| PluginError::Io {
            path: self.path.clone(),
            error,
        };
        let file = TrustFile {
            plugins: self.records.values().cloned().collect(),
        };
        let text = toml::to_string(&file).map_err(|e| PluginError::StateFile {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

/// Whether `record` has anything that runs: MCP servers or WASM tool components.
fn runs_code(record: &PluginRecord) -> bool {
    !record.package.mcp_servers.is_empty() || !record.package.tool_components.is_empty()
}

/// `sha256:<hex>` over the resolved root; when the plugin has MCP servers, `mcp.json` as
/// written and the bytes of every server executable inside the package; and for every WASM
/// tool component, its name, the SHA-256 of its bytes and its resolved settings.
pub fn fingerprint(record: &PluginRecord) -> Result<String, PluginError> {
    let root = record.path();
    let mut hasher = Sha256::new();
    let mut field = |label: &str, bytes: &[u8]| {
        hasher.update(label.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field("root", root.as_os_str().as_encoded_bytes());
    if !record.package.mcp_servers.is_empty() {
        let mcp = root.join(MCP_FILE);
        let text = rho_component::read_regular(&mcp, crate::mcp_config::MCP_CONFIG_MAX_BYTES)
            .map_err(|e| untrustable(&mcp, e))?;
        field("mcp.json", &text);
    }
    for spec in &record.package.mcp_servers {
        field("server", spec.id.as_bytes());
        if let McpTransport::Stdio(stdio) = &spec.transport
            && let StdioCommand::Path(command) = &stdio.command
            && command.starts_with(root)
        {
            let digest = file_digest(command)?;
            field("executable", &digest);
        }
    }
    for spec in &record.package.tool_components {
        field("component", spec.name.as_bytes());
        let bytes = record.read_component(&spec.name)?;
        field("wasm", &Sha256::digest(&bytes));
        field("workspace", spec.workspace.as_str().as_bytes());
        for name in &spec.env {
            field("env", name.as_bytes());
        }
        field("timeout_ms", &spec.timeout.as_millis().to_le_bytes());
        field("memory", &spec.memory_limit.to_le_bytes());
        field("risk", spec.risk.to_string().as_bytes());
    }
    let digest = hasher.finalize();
    Ok(format!("sha256:{}", hex(&digest)))
}

/// A file the fingerprint cannot read (gone, swapped for a FIFO or a device, too large): a
/// failed filesystem operation on it.
fn untrustable(path: &Path, error: rho_component::FileError) -> PluginError {
    let error = match error {
        rho_component::FileError::Io { error, .. } => error,
        other => std::io::Error::other(other.problem()),
    };
    PluginError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The SHA-256 of an executable's first [`MAX_HASHED_BYTES`]; opened only when it is a regular
/// file (a FIFO swapped in after the package was loaded would otherwise block the open).
fn file_digest(path: &Path) -> Result<Vec<u8>, PluginError> {
    let io = |error| PluginError::Io {
        path: path.to_path_buf(),
        error,
    };
    let file = rho_component::RegularFile::open(path, u64::MAX)
        .map_err(|e| untrustable(path, e))?
        .into_file();
    let mut reader = file.take(MAX_HASHED_BYTES);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// An executable swapped for a FIFO after its package was loaded is refused at once, never
    /// opened for reading (the open would wait for a writer).
    #[test]
    fn a_fifo_is_not_fingerprinted() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("server");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(file_digest(&fifo).map_err(|e| e.to_string()));
        });
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("file_digest blocked on a FIFO");
        let message = refused.unwrap_err();
        assert!(message.contains("not a regular file"), "{message}");
        let regular = dir.path().join("regular");
        std::fs::write(&regular, b"#!/bin/sh\n").unwrap();
        assert_eq!(
            file_digest(&regular).unwrap(),
            Sha256::digest(b"#!/bin/sh\n").to_vec()
        );
    }
}
