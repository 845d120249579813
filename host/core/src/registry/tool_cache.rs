//! The tool cache (`$RHO_HOME/cache/mcp/`, `docs/mcp.md`, "Tool cache"): what each MCP server
//! offered at its last successful start (tools, prompts, resources, what its handshake said),
//! so a lazy server can be mounted at the next session start without spawning it.
//!
//! One file per server configuration, named by its [`CacheKey`]: the SHA-256 of everything that
//! decides what the server offers (its identity, transport, command, arguments, working
//! directory, environment names and a digest of the literal values, URL, header names, tool
//! filter, protocol revision and, for plugin servers, the plugin's version, the digests of its
//! `plugin.json` and `mcp.json` and a `stat` of the server's files inside the package). A
//! change to any of them is another key, so a stale entry is never read: it is rebuilt by the
//! next start and the old file ages out. Computing a key reads no file (plugin digests come from
//! the load that already read them) and stats only the server's executable and its package
//! files, so it stays cheap for a thousand plugins.
//!
//! The cache is only a shortcut: [`ToolCache::load`] answers `None` for anything it cannot
//! trust (missing, corrupt, another format or key, oversized, not a regular file, not the
//! owner's) and [`ToolCache::store`] logs what it cannot do; neither ever fails a session.
//! Files hold no secret: no environment or header value, no token (the key holds only a digest
//! of the literal values).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rho_component::{
    McpServerOrigin, McpServerSpec, McpTransport, RegularFile, SamplingPolicy, ServerPrompt,
    ServerResource, StdioCommand, StdioServerSpec,
};
use rho_plugins::PluginInventory;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::ServerSlot;

/// The version of the file format and of the key's derivation; a change makes every existing
/// entry foreign (another key, so another file), read by no one and evicted in time.
pub const TOOL_CACHE_FORMAT: u32 = 1;

/// A cache file larger than this is neither written nor read.
pub const MAX_TOOL_CACHE_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// At most this many entries are kept; past it, the least recently written go.
pub const MAX_TOOL_CACHE_FILES: usize = 512;

/// Age after which a temporary file is a crashed writer's leftover (a store takes milliseconds).
const STALE_TMP_AFTER: Duration = Duration::from_secs(60 * 60);

/// The prefix of temporary files (never read as entries).
const TMP_PREFIX: &str = ".tmp-";

/// The extension of entries.
const EXTENSION: &str = "json";

/// The fingerprint of everything that determines what a server offers: 64 lower-case hex
/// digits of a SHA-256 (its [`Display`](fmt::Display)), which also name the server's cache
/// file. It carries the server's identity too (already part of the digest), for the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    digest: String,
    server: String,
}

impl CacheKey {
    /// The key of `slot`'s server, `None` when the slot has no spec (an invalid entry).
    /// `plugins` is the inventory the slot was collected from (a plugin server's package
    /// digests and version come from its record). Keys of many servers: [`CacheKeys`].
    pub fn of(slot: &ServerSlot, plugins: &PluginInventory) -> Option<CacheKey> {
        CacheKeys::new(plugins, &rho_mcp::process_ambient).key(slot)
    }

    /// The key itself, from the file system facts `scan` gathers (once per batch).
    fn derive(slot: &ServerSlot, scan: &mut CacheKeys<'_>) -> Option<CacheKey> {
        let spec = slot.spec.as_ref()?;
        let mut key = Fingerprint::default();
        key.field("format", &TOOL_CACHE_FORMAT.to_le_bytes());
        key.field("server", spec.id.as_bytes());
        key.field("transport", spec.transport.name().as_bytes());
        match &spec.transport {
            McpTransport::Stdio(stdio) => stdio_fields(&mut key, spec, stdio, scan),
            McpTransport::StreamableHttp(http) => {
                key.field("url", http.url.as_bytes());
                key.pairs("header", &http.headers);
                key.names("header_from_env", &http.headers_from_env);
                if let Some(oauth) = &spec.oauth {
                    key.field("oauth", b"");
                    key.option("oauth.client_id", oauth.client_id.as_deref());
                    key.option(
                        "oauth.client_metadata_url",
                        oauth.client_metadata_url.as_deref(),
                    );
                    for scope in &oauth.scopes {
                        key.field("oauth.scope", scope.as_bytes());
                    }
                }
            }
        }
        match &spec.tools.allow {
            None => key.field("allow.all", b""),
            Some(allow) => {
                key.field("allow", &(allow.len() as u64).to_le_bytes());
                for name in allow {
                    key.field("allow.tool", name.as_bytes());
                }
            }
        }
        for name in &spec.tools.deny {
            key.field("deny.tool", name.as_bytes());
        }
        key.option("protocol_version", spec.protocol_version.as_deref());
        // Whether rho may answer sampling changes what it declares, which a server may offer
        // tools by.
        let sampling: &[u8] = match spec.sampling {
            SamplingPolicy::Deny => b"deny",
            SamplingPolicy::Ask => b"ask",
        };
        key.field("sampling", sampling);
        if let McpServerOrigin::Plugin {
            plugin,
            root,
            data_dir,
            ..
        } = &spec.origin
        {
            plugin_fields(&mut key, spec, scan.plugins, plugin, root, data_dir);
        }
        Some(CacheKey {
            digest: key.finish(),
            server: spec.id.clone(),
        })
    }

    /// The key as hex digits.
    pub fn as_str(&self) -> &str {
        &self.digest
    }

    /// The identity of the server it is the key of.
    pub fn server(&self) -> &str {
        &self.server
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.digest)
    }
}

/// Keys of the servers of one mount, computed together: each distinct file (an executable, a
/// package's script) is `stat`ed once, a bare command is looked up once per `PATH`, and rho's
/// working directory is read once. A batch is computed at one instant, so what it remembers
/// is what each key would have seen on its own.
pub struct CacheKeys<'a> {
    plugins: &'a PluginInventory,
    ambient: &'a dyn Fn(&str) -> Option<OsString>,
    stats: HashMap<PathBuf, Option<fs::Metadata>>,
    found: HashMap<(String, Option<OsString>), Option<PathBuf>>,
    cwd: Option<Option<PathBuf>>,
}

impl<'a> CacheKeys<'a> {
    /// Keys of servers collected from `plugins`, with rho's environment looked up through
    /// `ambient` (only `PATH`, to find a bare command).
    pub fn new(
        plugins: &'a PluginInventory,
        ambient: &'a dyn Fn(&str) -> Option<OsString>,
    ) -> Self {
        Self {
            plugins,
            ambient,
            stats: HashMap::new(),
            found: HashMap::new(),
            cwd: None,
        }
    }

    /// The key of `slot`'s server, `None` when the slot has no spec (an invalid entry).
    pub fn key(&mut self, slot: &ServerSlot) -> Option<CacheKey> {
        CacheKey::derive(slot, self)
    }

    /// What `stat` says of `path` (following links), `None` when it cannot be read. Its
    /// bytes are never read: this runs for every server at every start.
    fn stat(&mut self, path: &Path) -> Option<&fs::Metadata> {
        if !self.stats.contains_key(path) {
            self.stats
                .insert(path.to_path_buf(), fs::metadata(path).ok());
        }
        self.stats.get(path).and_then(Option::as_ref)
    }

    /// Where a bare command would be found: on the `PATH` the server gets (its
    /// `env_from_env`, else its literal `env`, else rho's own), as the process start looks it
    /// up.
    fn find_on_path(&mut self, name: &str, stdio: &StdioServerSpec) -> Option<PathBuf> {
        let search = match stdio.env_from_env.iter().rev().find(|(n, _)| n == "PATH") {
            Some((_, from)) => (self.ambient)(from),
            None => match stdio.env.iter().rev().find(|(n, _)| n == "PATH") {
                Some((_, value)) => Some(OsString::from(value)),
                None => (self.ambient)("PATH"),
            },
        };
        let memo = (name.to_owned(), search);
        if let Some(found) = self.found.get(&memo) {
            return found.clone();
        }
        let found = memo.1.as_ref().and_then(|search| {
            std::env::split_paths(search)
                .map(|dir| dir.join(name))
                .find(|candidate| self.stat(candidate).is_some_and(is_executable))
        });
        self.found.insert(memo, found.clone());
        found
    }

    /// rho's own working directory, `None` when it cannot be read.
    fn cwd(&mut self) -> Option<&Path> {
        self.cwd
            .get_or_insert_with(|| std::env::current_dir().ok())
            .as_deref()
    }
}

/// Labelled, length-prefixed fields fed into SHA-256, so no two different field sequences
/// hash the same bytes.
#[derive(Default)]
struct Fingerprint(Sha256);

impl Fingerprint {
    fn field(&mut self, label: &str, bytes: &[u8]) {
        self.suffixed(label, "", bytes);
    }

    /// A field labelled `label` + `suffix` (the same bytes as [`Fingerprint::field`] with the
    /// label joined, without building it).
    fn suffixed(&mut self, label: &str, suffix: &str, bytes: &[u8]) {
        self.0
            .update(((label.len() + suffix.len()) as u64).to_le_bytes());
        self.0.update(label.as_bytes());
        self.0.update(suffix.as_bytes());
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn option(&mut self, label: &str, value: Option<&str>) {
        match value {
            None => self.suffixed(label, ".none", b""),
            Some(value) => self.field(label, value.as_bytes()),
        }
    }

    fn path(&mut self, label: &str, path: &Path) {
        self.field(label, path.as_os_str().as_encoded_bytes());
    }

    /// Names in order, and one digest of the values (which may be credentials: only their
    /// digest, mixed with everything else, reaches the key).
    fn pairs(&mut self, label: &str, pairs: &[(String, String)]) {
        let mut values = Fingerprint::default();
        for (name, value) in pairs {
            self.field(label, name.as_bytes());
            values.field(name, value.as_bytes());
        }
        self.suffixed(label, ".values", &values.0.finalize());
    }

    /// Names and the ambient variables they come from; never the ambient values.
    fn names(&mut self, label: &str, pairs: &[(String, String)]) {
        for (name, from) in pairs {
            self.field(label, name.as_bytes());
            self.suffixed(label, ".from", from.as_bytes());
        }
    }

    fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

fn stat_bytes(meta: &fs::Metadata) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(48);
    bytes.extend(meta.len().to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        for n in [meta.dev(), meta.ino()] {
            bytes.extend(n.to_le_bytes());
        }
        for n in [
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        ] {
            bytes.extend(n.to_le_bytes());
        }
    }
    #[cfg(not(unix))]
    {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .unwrap_or_default();
        bytes.extend(modified.as_nanos().to_le_bytes());
    }
    bytes
}

fn stdio_fields(
    key: &mut Fingerprint,
    spec: &McpServerSpec,
    stdio: &StdioServerSpec,
    scan: &mut CacheKeys<'_>,
) {
    let resolved = match &stdio.command {
        StdioCommand::Bare(name) => {
            key.field("command.bare", name.as_bytes());
            scan.find_on_path(name, stdio)
        }
        StdioCommand::Path(path) => {
            key.path("command.path", path);
            Some(path.clone())
        }
    };
    match &resolved {
        Some(path) => {
            key.path("command.resolved", path);
            // A replaced, rebuilt or touched executable is another key.
            match scan.stat(path) {
                Some(meta) => key.field("command.stat", &stat_bytes(meta)),
                None => key.field("command.stat.missing", b""),
            }
        }
        None => key.field("command.unresolved", b""),
    }
    for arg in &stdio.args {
        key.field("arg", arg.as_bytes());
    }
    match &stdio.cwd {
        Some(cwd) => key.path("cwd", cwd),
        // rho's own working directory: a server started elsewhere may offer other tools.
        None => match scan.cwd() {
            Some(dir) => key.path("cwd.process", dir),
            None => key.field("cwd.unknown", b""),
        },
    }
    key.pairs("env", &stdio.env);
    key.names("env_from_env", &stdio.env_from_env);
    if let McpServerOrigin::Plugin { root, .. } = &spec.origin {
        // A script the package ships (`node ${PLUGIN_ROOT}/server.js`) decides the tools as
        // much as the command that runs it.
        for arg in &stdio.args {
            let candidate = Path::new(arg);
            let path = if candidate.is_absolute() {
                candidate.to_path_buf()
            } else if let Some(cwd) = &stdio.cwd {
                cwd.join(candidate)
            } else {
                continue;
            };
            if !path.starts_with(root) {
                continue;
            }
            if let Some(meta) = scan.stat(&path).filter(|meta| meta.is_file()) {
                key.path("package.file", &path);
                key.field("package.file.stat", &stat_bytes(meta));
            }
        }
    }
}

fn is_executable(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

fn plugin_fields(
    key: &mut Fingerprint,
    spec: &McpServerSpec,
    plugins: &PluginInventory,
    plugin: &str,
    root: &Path,
    data_dir: &Path,
) {
    key.field("plugin", plugin.as_bytes());
    key.path("plugin.root", root);
    key.path("plugin.data", data_dir);
    let record = plugins
        .plugins
        .iter()
        .find(|r| r.name == plugin && r.package.root.as_deref() == Some(root));
    let Some(record) = record else {
        // Keys of servers whose plugin is not in the inventory never match a loaded one's.
        key.field("plugin.record.missing", spec.id.as_bytes());
        return;
    };
    key.option(
        "plugin.version",
        record
            .package
            .manifest
            .as_ref()
            .and_then(|m| m.version.as_deref()),
    );
    let digest = |d: Option<[u8; 32]>| d.map(|d| d.to_vec()).unwrap_or_default();
    key.field("plugin.json", &digest(record.package.manifest_sha256));
    key.field("mcp.json", &digest(record.package.mcp_sha256));
}

pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// What a server offered at its last successful start: enough to mount it without starting it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachedCatalog {
    /// The exported tools (allow/deny applied), in the server's order.
    pub tools: Vec<rho_mcp::ServerTool>,
    /// Tools left out past `rho_mcp::MAX_SERVER_TOOLS`.
    pub tools_left_out: usize,
    /// The prompts it offered.
    pub prompts: Vec<ServerPrompt>,
    /// The resources and resource templates it offered.
    pub resources: Vec<ServerResource>,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// `serverInfo` as the server sent it.
    pub server_info: Option<serde_json::Value>,
    /// The server's instructions.
    pub instructions: Option<String>,
}

impl CachedCatalog {
    /// What `connection` offers now (its live tools: withdrawn ones left out, added ones in).
    pub fn of(connection: &rho_mcp::Connection) -> Self {
        Self {
            tools: connection.live_tools(),
            tools_left_out: connection.tools_left_out,
            prompts: connection.prompts(),
            resources: connection.resources(),
            protocol_version: connection.summary.protocol_version.clone(),
            server_info: connection.summary.server_info.clone(),
            instructions: connection.summary.instructions.clone(),
        }
    }
}

/// One cache file as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheFile {
    /// [`TOOL_CACHE_FORMAT`] of the writer.
    format: u32,
    /// The key the entry was written for (checked against the name it was found under).
    key: String,
    /// The rho that wrote it.
    rho_version: String,
    /// The server's identity (for a person looking at the file).
    server: String,
    /// When it was written, UTC (`2026-01-31T12:00:00Z`).
    written_at: String,
    /// What the server offered.
    catalog: CachedCatalog,
}

/// The tool cache directory (`$RHO_HOME/cache/mcp/`, `RhoPaths::mcp_cache_dir`).
#[derive(Debug, Clone)]
pub struct ToolCache {
    /// Shared: every server of a session holds the cache to remember it in.
    dir: Arc<Path>,
    max_file_bytes: u64,
    max_files: usize,
}

impl ToolCache {
    /// The cache in `dir` (created by the first store).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir: dir.into(),
            max_file_bytes: MAX_TOOL_CACHE_FILE_BYTES,
            max_files: MAX_TOOL_CACHE_FILES,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds (or will hold) the entry for `key`.
    fn path_for(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{key}.{EXTENSION}"))
    }

    /// The entry for `key`, when one exists and is intact: a missing, corrupt, oversized,
    /// foreign (another format version, another key inside) or unreadable file (a link, a FIFO,
    /// a device, another user's) is `None`, logged at debug level and never an error to the
    /// caller; the next store replaces it. Entries of many keys: [`ToolCache::reader`].
    pub fn load(&self, key: &CacheKey) -> Option<CachedCatalog> {
        self.reader()?.load(key)
    }

    /// A reader of entries, the directory checked once for all of them: `None` (logged at
    /// debug level) when the directory is missing or not one rho trusts (a link, writable by
    /// others).
    pub fn reader(&self) -> Option<CacheReader<'_>> {
        let meta = match private_dir(&self.dir) {
            Ok(meta) => meta,
            Err(why) => {
                tracing::debug!(target: "rho::mcp::cache", path = %self.dir.display(), "tool cache not read: {why}");
                return None;
            }
        };
        Some(CacheReader {
            cache: self,
            dir: meta,
        })
    }

    /// Stores `catalog` as the entry for `key`: written atomically (a
    /// temporary file in the same directory, flushed, renamed into place, the directory
    /// flushed), the directory created owner-only (0700), the file owner-only (0600). A link
    /// at the entry's name is refused (anything else there is replaced), as is a catalog whose
    /// file would exceed [`MAX_TOOL_CACHE_FILE_BYTES`]. Past [`MAX_TOOL_CACHE_FILES`] entries,
    /// the least recently written go. Nothing is returned: a cache that cannot be written
    /// only costs a start later, so problems are logged (warnings for what the user can fix,
    /// like a directory others may write to).
    pub fn store(&self, key: &CacheKey, catalog: &CachedCatalog) {
        let path = self.path_for(key);
        let server = key.server();
        let refuse = |why: &dyn fmt::Display| {
            tracing::warn!(target: "rho::mcp::cache", server, path = %path.display(), "tool cache not written: {why}");
        };
        let file = CacheFile {
            format: TOOL_CACHE_FORMAT,
            key: key.as_str().to_owned(),
            rho_version: env!("CARGO_PKG_VERSION").to_owned(),
            server: key.server().to_owned(),
            written_at: utc_now(),
            catalog: catalog.clone(),
        };
        let bytes = match serde_json::to_vec(&file) {
            Ok(bytes) => bytes,
            Err(e) => return refuse(&e),
        };
        if bytes.len() as u64 > self.max_file_bytes {
            tracing::debug!(
                target: "rho::mcp::cache",
                server,
                "tool cache not written: the entry would take {} bytes, above the {}-byte cap",
                bytes.len(),
                self.max_file_bytes
            );
            return;
        }
        if let Err(why) = ensure_private_dir(&self.dir) {
            return refuse(&why);
        }
        // A link there is the user's or someone else's doing: it is left for them to see.
        // (Any other odd file, a FIFO, is replaced by the rename like a damaged entry.)
        if fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return refuse(&"a symbolic link is there");
        }
        if let Err(e) = write_atomically(&self.dir, &path, &bytes) {
            return refuse(&e);
        }
        self.evict(&path);
    }

    /// Removes the least recently written entries past the cap (never `keep`, the entry just
    /// written) and temporary files a crashed writer left.
    fn evict(&self, keep: &Path) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
                if now.duration_since(modified).unwrap_or_default() > STALE_TMP_AFTER {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            if path.extension().is_some_and(|e| e == EXTENSION) {
                files.push((modified, path));
            }
        }
        if files.len() <= self.max_files {
            return;
        }
        files.sort();
        let excess = files.len() - self.max_files;
        for (_, path) in files.into_iter().filter(|(_, p)| p != keep).take(excess) {
            if fs::remove_file(&path).is_ok() {
                tracing::debug!(target: "rho::mcp::cache", path = %path.display(), "evicted a tool cache entry");
            }
        }
    }
}

/// `now` as `YYYY-MM-DDTHH:MM:SSZ`.
/// Reads entries of a [`ToolCache`] whose directory was checked once ([`ToolCache::reader`]).
pub struct CacheReader<'a> {
    cache: &'a ToolCache,
    /// What the directory was when checked (its owner is every entry's).
    dir: fs::Metadata,
}

impl CacheReader<'_> {
    /// The entry for `key` ([`ToolCache::load`] says which files are `None`).
    pub fn load(&self, key: &CacheKey) -> Option<CachedCatalog> {
        let path = self.cache.path_for(key);
        let miss = |why: &dyn fmt::Display| {
            tracing::debug!(target: "rho::mcp::cache", path = %path.display(), "tool cache miss: {why}");
        };
        let opened = match RegularFile::options(self.cache.max_file_bytes)
            .no_follow()
            .open(&path)
        {
            Ok(opened) => opened,
            Err(e) if e.is_not_found() => {
                miss(&"no entry");
                return None;
            }
            Err(e) => {
                miss(&e.problem());
                return None;
            }
        };
        if !same_owner(opened.metadata(), &self.dir) {
            miss(&"another user owns the entry");
            return None;
        }
        let bytes = match opened.read_all() {
            Ok(bytes) => bytes,
            Err(e) => {
                miss(&e.problem());
                return None;
            }
        };
        let file: CacheFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(e) => {
                miss(&format_args!("not an entry rho can read ({e})"));
                return None;
            }
        };
        if file.format != TOOL_CACHE_FORMAT {
            miss(&format_args!(
                "format {} (rho reads {TOOL_CACHE_FORMAT})",
                file.format
            ));
            return None;
        }
        if file.key != key.as_str() {
            miss(&"the entry was written for another key");
            return None;
        }
        Some(file.catalog)
    }
}

fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let t = rho_component::CivilTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// Why `dir` cannot hold cache entries rho trusts (entries become tool definitions the model
/// reads): not a real directory, or others may write to it. `Ok` when it is fine.
fn private_dir(dir: &Path) -> Result<fs::Metadata, String> {
    let meta = fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err(format!(
            "{} is not a directory (a symbolic link?)",
            dir.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "its group or other users may write to {} (`chmod 700` it)",
                dir.display()
            ));
        }
    }
    Ok(meta)
}

/// Whether an entry belongs to whoever owns the directory (rho's user, who created it).
fn same_owner(file: &fs::Metadata, dir: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        dir.uid() == file.uid()
    }
    #[cfg(not(unix))]
    {
        let _ = (file, dir);
        true
    }
}

/// Creates `dir` owner-only if needed (its parents as usual) and checks it.
fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    if fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        match builder.create(dir) {
            Ok(()) => {}
            // Another process created it first: the check below decides.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    private_dir(dir).map(drop)
}

/// Replaces `path` with `bytes` so that a reader, or a crash, sees the old file or the new one
/// whole (`rho_config::replace_file`), then flushes the directory, best effort: the entry is in
/// place, and a lost rename only costs a start.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    rho_config::replace_file(dir, TMP_PREFIX, path, bytes)?;
    let _ = rho_config::sync_dir(dir);
    Ok(())
}

#[cfg(test)]
#[path = "tool_cache_tests.rs"]
mod tests;
