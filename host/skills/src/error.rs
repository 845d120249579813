//! The one error type of this crate: why a skill could not be read or did not validate.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// Why a `SKILL.md` could not be read, split or validated.
///
/// Every variant names the file (or directory) involved. [`SkillError::Invalid`] carries every
/// rule violation found, not only the first.
#[derive(Debug, Error)]
pub enum SkillError {
    /// The path does not exist.
    #[error("{path} does not exist")]
    NotFound {
        /// The missing path.
        path: PathBuf,
    },
    /// A skill directory was expected but the path is something else.
    #[error("{path} is not a directory")]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
    },
    /// The directory holds no `SKILL.md`.
    #[error("missing SKILL.md in {dir}")]
    MissingSkillFile {
        /// The skill directory.
        dir: PathBuf,
    },
    /// `SKILL.md` exists but is a directory, FIFO, socket or device.
    #[error("{path} is not a regular file")]
    NotRegularFile {
        /// The offending file.
        path: PathBuf,
    },
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid UTF-8.
    #[error("{path}: not valid utf-8 (byte {offset})")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// The file does not start with a `---` line.
    #[error("{path}: missing frontmatter: the file must start with a line that is exactly `---`")]
    MissingFrontmatter {
        /// The file.
        path: PathBuf,
    },
    /// The frontmatter has no closing `---` line.
    #[error("{path}: unterminated frontmatter: no closing line that is exactly `---`")]
    UnterminatedFrontmatter {
        /// The file.
        path: PathBuf,
    },
    /// No closing `---` line within the frontmatter cap.
    #[error("{path}: frontmatter exceeds {limit} bytes")]
    FrontmatterTooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, [`crate::FRONTMATTER_MAX_BYTES`].
        limit: usize,
    },
    /// The frontmatter is not YAML, or uses YAML features skills must not use.
    #[error("{path}:{line}: invalid frontmatter yaml: {message}")]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: usize,
        /// What is wrong, lower case.
        message: String,
    },
    /// The frontmatter parsed but breaks one or more Agent Skills rules.
    #[error("{path}: {}", problems.join("; "))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found, each a lower-case sentence.
        problems: Vec<String>,
    },
    /// A path that is not one of the skill's bundled files ([`crate::list_resources`]).
    #[error("skill `{skill}` bundles no file {path:?}")]
    NoSuchResource {
        /// The skill.
        skill: String,
        /// The relative path asked for.
        path: String,
    },
    /// A bundled file that cannot be read (too large, not a regular file, unreadable).
    #[error("skill `{skill}`: {source}")]
    ResourceRead {
        /// The skill.
        skill: String,
        /// Why.
        #[source]
        source: rho_component::FileError,
    },
    /// A built-in skill lives in the binary; there is no file to read.
    #[error("built-in skill `{name}` has no file on disk")]
    NotOnDisk {
        /// The skill name.
        name: String,
    },
}

impl SkillError {
    /// The problems as separate lower-case messages: the list for [`SkillError::Invalid`]
    /// (without the path, which the caller already shows), the whole message otherwise.
    pub fn problems(&self) -> Vec<String> {
        match self {
            Self::Invalid { problems, .. } => problems.clone(),
            other => vec![other.to_string()],
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        if source.kind() == io::ErrorKind::NotFound {
            Self::NotFound { path }
        } else {
            Self::Io { path, source }
        }
    }
}
