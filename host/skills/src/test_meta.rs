//! The skill metadata tests start from: a valid skill with only its required fields set.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rho_component::{SkillMeta, SkillSource};

/// A skill called `name` (description `d`, no optional fields) whose `SKILL.md` is `location`.
pub(crate) fn skill_meta(
    name: &str,
    location: impl Into<PathBuf>,
    source: SkillSource,
) -> SkillMeta {
    SkillMeta {
        name: name.into(),
        description: "d".into(),
        license: None,
        compatibility: None,
        metadata: BTreeMap::new(),
        allowed_tools: None,
        location: location.into(),
        source,
    }
}
