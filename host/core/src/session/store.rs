//! Sessions on disk: one JSONL file per session under `$RHO_HOME/sessions/<project key>/`.
//!
//! The first line is a header (`{"type":"header","version":1,...}`); then one line per event
//! that changes the conversation: `message`, `usage`, `compaction` (the summary that replaced
//! the history) and `clear`, and the lifecycle evidence of MCP servers (`toolset_initialized`,
//! `toolset_closed`), and the Claude Code session a Claude runtime session continues in
//! (`claude_session`). Lines are appended and flushed as they happen, so a crash loses at most
//! the line being written; a torn last line is skipped on resume, and so is a line of a kind
//! this rho does not know (a newer rho's).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rho_component::RegularFile;
use serde::{Deserialize, Serialize};

use crate::ServerToolset;
use crate::provider::{ChatMessage, Role, Usage};

/// The format version written in headers.
pub const SESSION_FORMAT_VERSION: u32 = 1;

/// A session file larger than this is refused on resume.
pub const SESSION_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The first line.
    Header {
        /// Format version.
        version: u32,
        /// The session id (the file stem).
        id: String,
        /// The workspace (its bytes when it is not UTF-8: `rho_component::exact_path`).
        #[serde(with = "rho_component::exact_path")]
        cwd: PathBuf,
        /// Seconds since the Unix epoch.
        created: u64,
        /// The model at creation.
        model: String,
    },
    /// A message joined the conversation.
    Message {
        /// The message.
        message: ChatMessage,
    },
    /// One model request's tokens (or a batch's sampling spend).
    Usage {
        /// The figures.
        usage: Usage,
        /// Whose spend it is (absent: the user's turn).
        #[serde(default, skip_serializing_if = "UsagePurpose::is_turn")]
        purpose: UsagePurpose,
    },
    /// The history was replaced by a summary.
    Compaction {
        /// The summary (it becomes the first user message).
        summary: String,
    },
    /// The conversation was cleared.
    Clear,
    /// Tools that waited behind the tool search were loaded (by a search, or a call by name):
    /// their definitions go to the model for the rest of the session.
    ToolsLoaded {
        /// Their exported names.
        names: Vec<String>,
    },
    /// An MCP server's tool list became usable (`toolset/initialized`), or the session recorded
    /// the one it found when it started or was resumed: no URL, header, command, argument,
    /// working directory or environment value, only counts and the tools' digest.
    ToolsetInitialized(ServerToolset),
    /// The session closed an MCP server (`toolset/closed`).
    ToolsetClosed(ServerToolset),
    /// The Claude CLI runtime answered from this Claude Code session (its `session_id`):
    /// resuming the file with the Claude runtime resumes it (`claude --resume`). Written when
    /// the id first shows and whenever it changes; a `clear` ends it.
    ClaudeSession {
        /// Claude's session id, as Claude reported it.
        id: String,
    },
}

/// Lifecycle entries kept for a file not created yet, at most (the oldest go first).
const MAX_PENDING_NOTES: usize = 1024;

/// What tokens were spent on, in the usage ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsagePurpose {
    /// The user's turns and compactions.
    #[default]
    Turn,
    /// A server's `sampling/createMessage` the user allowed.
    McpSampling,
}

impl UsagePurpose {
    fn is_turn(&self) -> bool {
        *self == Self::Turn
    }
}

/// Why a session file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// IO on the file or its directory.
    #[error("session file {path}: {error}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error (part of the message).
        error: std::io::Error,
    },
    /// The file cannot be opened or read: not a regular file (a FIFO, a device, a directory),
    /// larger than [`SESSION_MAX_BYTES`], missing or refused by the system.
    #[error("session file {0}")]
    File(#[from] rho_component::FileError),
    /// The file is not a rho session.
    #[error("session file {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A session file, appended to as the conversation changes. A new session's file is created
/// (with its header) on the first append, so runs that never talk leave nothing behind. Files
/// are private to the user (0600 in a 0700 directory): they hold the conversation.
#[derive(Debug)]
pub struct SessionFile {
    path: PathBuf,
    file: Option<File>,
    header: Option<Entry>,
    /// Entries noted before the file exists ([`SessionFile::note`]).
    pending: Vec<Entry>,
}

fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

impl SessionFile {
    /// A new session file in `dir` with a fresh id; nothing is written until the first entry.
    pub fn create(dir: &Path, cwd: &Path, model: &str) -> Result<Self, StoreError> {
        let created = now_secs();
        let id = format!("{}-{:08x}", timestamp(created), random_u32());
        let path = dir.join(format!("{id}.jsonl"));
        Ok(Self {
            path,
            file: None,
            header: Some(Entry::Header {
                version: SESSION_FORMAT_VERSION,
                id,
                cwd: cwd.to_path_buf(),
                created,
                model: model.to_owned(),
            }),
            pending: Vec::new(),
        })
    }

    /// Opens an existing session file for appending. A torn last line (a crash mid-write) is
    /// closed with a newline first, so the next entry starts on a line of its own.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let io = |error| StoreError::Io {
            path: path.to_path_buf(),
            error,
        };
        // The same checks as `load`: a FIFO or device swapped in between is refused, not opened
        // for appending (and the open never blocks).
        let opened = RegularFile::options(SESSION_MAX_BYTES)
            .append()
            .open(path)?;
        let len = opened.len();
        let mut file = opened.into_file();
        if len > 0 {
            use std::io::{Read, Seek, SeekFrom};
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
            file.read_exact(&mut last).map_err(io)?;
            if last[0] != b'\n' {
                file.write_all(b"\n").map_err(io)?;
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(file),
            header: None,
            pending: Vec::new(),
        })
    }

    /// The file (it may not exist yet).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id (the file stem).
    pub fn id(&self) -> Option<String> {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    }

    fn ensure_open(&mut self) -> Result<&mut File, StoreError> {
        if self.file.is_none() {
            let io = |path: &Path| {
                let path = path.to_path_buf();
                move |error| StoreError::Io { path, error }
            };
            if let Some(dir) = self.path.parent() {
                private_dir(dir).map_err(io(dir))?;
            }
            use std::os::unix::fs::OpenOptionsExt;
            let file = OpenOptions::new()
                .create_new(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)
                .map_err(io(&self.path))?;
            self.file = Some(file);
            if let Some(header) = self.header.take() {
                self.write_line(&header)?;
            }
            for entry in std::mem::take(&mut self.pending) {
                self.write_line(&entry)?;
            }
        }
        self.file.as_mut().ok_or_else(|| StoreError::Invalid {
            path: self.path.clone(),
            message: "not open".into(),
        })
    }

    fn write_line(&mut self, entry: &Entry) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| StoreError::Invalid {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let path = self.path.clone();
        let file = self.file.as_mut().ok_or_else(|| StoreError::Invalid {
            path: path.clone(),
            message: "not open".into(),
        })?;
        file.write_all(&line)
            .and_then(|()| file.flush())
            .map_err(|error| StoreError::Io { path, error })
    }

    /// Appends one entry and flushes it (creating the file on the first one).
    pub fn append(&mut self, entry: &Entry) -> Result<(), StoreError> {
        self.ensure_open()?;
        self.write_line(entry)
    }

    /// Appends an entry that does not change the conversation (lifecycle evidence) when the
    /// file exists; otherwise keeps it (the last 1,024) to follow the header
    /// once the conversation creates the file, so a run that never talks still leaves nothing.
    pub fn note(&mut self, entry: Entry) -> Result<(), StoreError> {
        if self.file.is_some() {
            return self.write_line(&entry);
        }
        if self.pending.len() >= MAX_PENDING_NOTES {
            self.pending.remove(0);
        }
        self.pending.push(entry);
        Ok(())
    }
}

/// A session read back from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    /// The session id.
    pub id: String,
    /// The workspace it ran in.
    pub cwd: PathBuf,
    /// Creation time (seconds since the epoch).
    pub created: u64,
    /// The model at creation.
    pub model: String,
    /// The conversation as it stands (after compactions and clears), without a system message.
    pub messages: Vec<ChatMessage>,
    /// Tokens used over the session's life by the user's turns.
    pub usage: Usage,
    /// Tokens servers spent through sampling.
    pub sampling_usage: Usage,
    /// Tools loaded from behind the tool search, in the order they were loaded.
    pub loaded_tools: Vec<String>,
    /// The last tools digest recorded for each MCP server (`toolset_initialized` and
    /// `toolset_closed` entries).
    pub toolset_digests: BTreeMap<String, String>,
    /// The Claude Code session the conversation continues in (the last `claude_session`
    /// entry since the last `clear`); `None` for a session of rho's own runtime.
    pub claude_session: Option<String>,
    /// Lines that could not be read (a torn last line after a crash).
    pub skipped_lines: usize,
}

/// Reads a session file.
pub fn load(path: &Path) -> Result<LoadedSession, StoreError> {
    let invalid = |message: String| StoreError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    // Regular files only, refused past the cap before reading, never a blocking open: the path
    // comes from `--session` or `resumeSession` and may name a FIFO or `/dev/zero`.
    let file = RegularFile::open(path, SESSION_MAX_BYTES)?.reader();
    let mut lines = BufReader::new(file).lines();
    let header = match lines.next() {
        Some(Ok(line)) => serde_json::from_str::<Entry>(&line).ok(),
        _ => None,
    };
    let Some(Entry::Header {
        version,
        id,
        cwd,
        created,
        model,
    }) = header
    else {
        return Err(invalid("the first line is not a rho session header".into()));
    };
    if version > SESSION_FORMAT_VERSION {
        return Err(invalid(format!(
            "format version {version} is newer than this rho ({SESSION_FORMAT_VERSION})"
        )));
    }
    let mut session = LoadedSession {
        id,
        cwd,
        created,
        model,
        messages: Vec::new(),
        usage: Usage::default(),
        sampling_usage: Usage::default(),
        loaded_tools: Vec::new(),
        toolset_digests: BTreeMap::new(),
        claude_session: None,
        skipped_lines: 0,
    };
    for line in lines {
        let Ok(line) = line else {
            session.skipped_lines += 1;
            continue;
        };
        match serde_json::from_str::<Entry>(&line) {
            Ok(Entry::Message { message }) => session.messages.push(message),
            Ok(Entry::Usage {
                usage,
                purpose: UsagePurpose::Turn,
            }) => session.usage.add(&usage),
            Ok(Entry::Usage {
                usage,
                purpose: UsagePurpose::McpSampling,
            }) => session.sampling_usage.add(&usage),
            Ok(Entry::Compaction { summary }) => {
                session.messages = vec![ChatMessage::user(summary)];
            }
            Ok(Entry::Clear) => {
                session.messages.clear();
                session.claude_session = None;
            }
            Ok(Entry::ClaudeSession { id }) => session.claude_session = Some(id),
            Ok(Entry::ToolsLoaded { names }) => session.loaded_tools.extend(names),
            Ok(Entry::ToolsetInitialized(toolset) | Entry::ToolsetClosed(toolset)) => {
                session
                    .toolset_digests
                    .insert(toolset.server, toolset.digest);
            }
            Ok(Entry::Header { .. }) | Err(_) => session.skipped_lines += 1,
        }
    }
    Ok(session)
}

/// One saved session.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// The file.
    #[serde(serialize_with = "rho_component::lossy_path::serialize")]
    #[schemars(with = "String")]
    pub path: PathBuf,
    /// Creation time (seconds since the epoch).
    pub created: u64,
    /// Last change (seconds since the epoch).
    pub modified: u64,
    /// Messages.
    pub messages: usize,
    /// The first user message, cut.
    pub first_prompt: Option<String>,
}

/// The sessions saved in `dir` for the workspace `cwd`, most recently changed first.
/// Unreadable files, and sessions of another workspace, are left out.
pub fn list(dir: &Path, cwd: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let Ok(session) = load(&path) else { continue };
        if session.cwd != cwd {
            continue;
        }
        let first_prompt = session
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.chars().take(100).collect());
        out.push(SessionSummary {
            id: session.id,
            path,
            created: session.created,
            modified,
            messages: session.messages.len(),
            first_prompt,
        });
    }
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
    out
}

/// The directory of a project's sessions: `<sessions root>/<readable tail>-<hash>`, where the
/// tail is the workspace path with separators as `-` (its last 48 characters) and the hash
/// (FNV-1a, 64 bits) of the whole path keeps `/a/b-c` and `/a/b/c` apart.
pub fn project_dir(sessions_root: &Path, workspace: &Path) -> PathBuf {
    let text = workspace.to_string_lossy();
    let readable: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let tail: String = readable
        .chars()
        .rev()
        .take(48)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    sessions_root.join(format!("{}-{hash:016x}", tail.trim_start_matches('-')))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYYMMDDTHHMMSS` in UTC.
fn timestamp(secs: u64) -> String {
    let t = rho_component::CivilTime::from_unix(secs);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// A few random bits for file names (no cryptographic use).
fn random_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    #[allow(clippy::cast_possible_truncation)] // keeping the low bits is the point
    let bits = hasher.finish() as u32;
    bits
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Closes `file` and leaves a torn last line, `partial`, as a crash mid-write would.
    /// Returns the file's path.
    pub(super) fn close_torn(file: SessionFile, partial: &[u8]) -> PathBuf {
        let path = file.path().to_path_buf();
        drop(file);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(partial)
            .unwrap();
        path
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(timestamp(0), "19700101T000000");
        assert_eq!(timestamp(951_782_400), "20000229T000000");
        assert_eq!(timestamp(1_796_041_545), "20261130T122545");
    }

    #[test]
    fn a_session_round_trips_through_compaction_clear_and_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = SessionFile::create(dir.path(), Path::new("/w"), "m").unwrap();
        file.append(&Entry::Message {
            message: ChatMessage::user("first"),
        })
        .unwrap();
        file.append(&Entry::Clear).unwrap();
        file.append(&Entry::Message {
            message: ChatMessage::user("second"),
        })
        .unwrap();
        file.append(&Entry::Compaction {
            summary: "summary".into(),
        })
        .unwrap();
        file.append(&Entry::Message {
            message: ChatMessage::assistant("answer", vec![]),
        })
        .unwrap();
        let usage = Usage {
            input_tokens: 3,
            output_tokens: 2,
            total_tokens: 5,
            total_cost: 0.0,
            request_count: 1,
        };
        file.append(&Entry::Usage {
            usage,
            purpose: UsagePurpose::Turn,
        })
        .unwrap();
        let path = close_torn(file, b"{\"type\":\"mess");
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.cwd, Path::new("/w"));
        assert_eq!(
            loaded.messages,
            [
                ChatMessage::user("summary"),
                ChatMessage::assistant("answer", vec![])
            ]
        );
        assert_eq!(loaded.usage, usage);
        assert_eq!(loaded.skipped_lines, 1);
        let listed = list(dir.path(), Path::new("/w"));
        assert_eq!(listed.len(), 1);
        assert!(list(dir.path(), Path::new("/elsewhere")).is_empty());
        assert_eq!(listed[0].first_prompt.as_deref(), Some("summary"));
    }

    #[test]
    fn a_session_file_as_earlier_versions_wrote_it_still_loads() {
        // Every kind of line, spelled as rho has written them since format version 1; the
        // states that became enums (roles, usage purposes) keep these spellings.
        let text = concat!(
            r#"{"type":"header","version":1,"id":"20261130T122545-0a1b2c3d","cwd":"/w","created":1796041545,"model":"m"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":"look"}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"assistant","content":"","reasoning":"hm","tool_calls":[{"id":"c1","name":"read_file","arguments":"{}"}]}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"tool","content":"text","tool_call_id":"c1","name":"read_file"}}"#,
            "\n",
            r#"{"type":"usage","usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5,"totalCost":0.0,"requestCount":1}}"#,
            "\n",
            r#"{"type":"usage","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2,"totalCost":0.0,"requestCount":1},"purpose":"mcp_sampling"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"assistant","content":"done"}}"#,
            "\n",
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        std::fs::write(&path, text).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.skipped_lines, 0);
        assert_eq!(loaded.id, "20261130T122545-0a1b2c3d");
        let roles: Vec<Role> = loaded.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(loaded.messages[1].tool_calls[0].name, "read_file");
        assert_eq!(loaded.messages[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(loaded.usage.total_tokens, 5);
        assert_eq!(loaded.sampling_usage.total_tokens, 2);
        // And what this rho writes reads back the same way, line for line.
        for line in text.lines() {
            let entry: Entry = serde_json::from_str(line).unwrap();
            let again: Entry =
                serde_json::from_str(&serde_json::to_string(&entry).unwrap()).unwrap();
            assert_eq!(again, entry);
        }
    }

    #[test]
    fn files_that_are_not_sessions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "{\"hello\":1}\n").unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("header"));
        assert!(list(dir.path(), Path::new("/w")).is_empty());
    }

    /// `load` and `SessionFile::open` on `path`, each within 5 s, as their error messages.
    fn refusals_within_seconds(path: &Path) -> [String; 2] {
        let (tx, rx) = std::sync::mpsc::channel();
        let owned = path.to_path_buf();
        std::thread::spawn(move || {
            let loaded = load(&owned).map(|_| ()).map_err(|e| e.to_string());
            let opened = SessionFile::open(&owned)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let _ = tx.send([loaded, opened]);
        });
        let results = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("{} was not refused within 5 s", path.display()));
        results.map(|r| r.err().unwrap_or_else(|| "accepted".into()))
    }

    #[test]
    fn fifos_devices_and_huge_files_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let zero = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let sparse = dir.path().join("sparse.jsonl");
        File::create(&sparse)
            .unwrap()
            .set_len(SESSION_MAX_BYTES + 1)
            .unwrap();
        for (path, problem) in [
            (fifo.as_path(), "a FIFO, not a regular file"),
            (
                Path::new("/dev/zero"),
                "a character device, not a regular file",
            ),
            (zero.as_path(), "a character device, not a regular file"),
            (sparse.as_path(), "larger than the 256 MiB cap"),
        ] {
            let expected = format!("session file {}: {problem}", path.display());
            assert_eq!(refusals_within_seconds(path), [expected.clone(), expected]);
        }
        // A FIFO in the sessions directory is left out of the list instead of blocking it.
        let (tx, rx) = std::sync::mpsc::channel();
        let listed_dir = dir.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(list(&listed_dir, Path::new("/w")).len());
        });
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap(),
            0
        );
    }
}

#[cfg(test)]
mod file_tests;
