//! Metadata of one valid skill, as the catalog and the registry see it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::SkillSource;

/// A skill that passed validation. The body is not kept: it is read when the skill is
/// activated, so discovery stays cheap and picks up edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMeta {
    /// The skill name (equal to its directory name).
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// Optional license text.
    pub license: Option<String>,
    /// Optional environment requirements.
    pub compatibility: Option<String>,
    /// Optional string-to-string metadata.
    pub metadata: BTreeMap<String, String>,
    /// Optional space-separated pre-approved tools (experimental in the Agent Skills specification).
    pub allowed_tools: Option<String>,
    /// Absolute path of the `SKILL.md` file (for built-ins, a `builtin:` pseudo-path).
    pub location: PathBuf,
    /// Where the skill came from.
    pub source: SkillSource,
}

impl SkillMeta {
    /// The skill's base directory: the parent of `SKILL.md`.
    pub fn directory(&self) -> PathBuf {
        self.location
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()
    }
}
