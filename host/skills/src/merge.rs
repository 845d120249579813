//! Precedence between skills of the same name from different sources.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::path::PathBuf;

use rho_component::{Diagnostic, DiagnosticCode, SkillMeta, SkillSource};

/// The selected skills, one per name, ordered by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    by_name: BTreeMap<String, SkillMeta>,
}

impl SkillSet {
    /// The skill called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&SkillMeta> {
        self.by_name.get(name)
    }

    /// Whether a skill called `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The skills, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = &SkillMeta> {
        self.by_name.values()
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The skills as a vector ordered by name.
    pub fn into_vec(self) -> Vec<SkillMeta> {
        self.by_name.into_values().collect()
    }
}

impl<'a> IntoIterator for &'a SkillSet {
    type Item = &'a SkillMeta;
    type IntoIter = std::collections::btree_map::Values<'a, String, SkillMeta>;

    fn into_iter(self) -> Self::IntoIter {
        self.by_name.values()
    }
}

/// A skill that lost to another of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The losing skill.
    pub skill: SkillMeta,
    /// The source of the skill selected instead.
    pub winner_source: SkillSource,
    /// The `SKILL.md` of the skill selected instead.
    pub winner_location: PathBuf,
}

/// The outcome of [`merge`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// The selected skills.
    pub skills: SkillSet,
    /// The losers, ordered by name, then in the order they lost.
    pub shadowed: Vec<Shadowed>,
    /// One `skill-shadowed` warning per loser, in the order of `shadowed`.
    pub diagnostics: Vec<Diagnostic>,
}

/// Selects one skill per name.
///
/// The skill whose source has the smallest [`SkillSource::rank`] wins
/// (`built-in > loose user > loose project > project plugins > user plugins`). Between skills
/// of equal rank, the one that comes first in `candidates` wins, so callers list roots in their
/// own precedence order (nearest project directory first, say). Every loser is kept in
/// [`Merged::shadowed`] with a warning naming both sources and both paths.
pub fn merge(candidates: Vec<SkillMeta>) -> Merged {
    let mut ordered = candidates;
    // A stable sort keeps the input order among equal ranks.
    ordered.sort_by_key(|meta| meta.source.rank());
    let mut by_name: BTreeMap<String, SkillMeta> = BTreeMap::new();
    let mut shadowed = Vec::new();
    for meta in ordered {
        match by_name.entry(meta.name.clone()) {
            Entry::Vacant(slot) => {
                slot.insert(meta);
            }
            Entry::Occupied(winner) => {
                let winner = winner.get();
                shadowed.push(Shadowed {
                    winner_source: winner.source.clone(),
                    winner_location: winner.location.clone(),
                    skill: meta,
                });
            }
        }
    }
    shadowed.sort_by(|a, b| a.skill.name.cmp(&b.skill.name));
    let diagnostics = shadowed.iter().map(shadow_diagnostic).collect();
    Merged {
        skills: SkillSet { by_name },
        shadowed,
        diagnostics,
    }
}

fn shadow_diagnostic(lost: &Shadowed) -> Diagnostic {
    let skill = &lost.skill;
    Diagnostic::warning(
        DiagnosticCode::SkillShadowed,
        format!(
            "skill `{}` from {} ({}) is ignored; the one from {} ({}) is used",
            skill.name,
            skill.source,
            skill.location.display(),
            lost.winner_source,
            lost.winner_location.display()
        ),
    )
    .with_path(skill.location.clone())
    .with_component(skill.name.clone())
}

#[cfg(test)]
mod tests {
    use rho_component::{Scope, Severity};

    use super::*;
    use crate::test_meta::skill_meta;

    fn meta(name: &str, source: SkillSource, path: &str) -> SkillMeta {
        skill_meta(name, path, source)
    }

    fn plugin(scope: Scope) -> SkillSource {
        SkillSource::Plugin {
            plugin: "pack".into(),
            scope,
        }
    }

    #[test]
    fn precedence_follows_rank() {
        let merged = merge(vec![
            meta("a", plugin(Scope::User), "/up/a/SKILL.md"),
            meta("a", plugin(Scope::Project), "/pp/a/SKILL.md"),
            meta("a", SkillSource::Project, "/p/a/SKILL.md"),
            meta("a", SkillSource::User, "/u/a/SKILL.md"),
            meta("b", plugin(Scope::User), "/up/b/SKILL.md"),
            meta("b", plugin(Scope::Project), "/pp/b/SKILL.md"),
        ]);
        assert_eq!(merged.skills.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(merged.skills.get("a").unwrap().source, SkillSource::User);
        assert_eq!(
            merged.skills.get("b").unwrap().source,
            plugin(Scope::Project)
        );
        assert_eq!(merged.shadowed.len(), 4);
        assert_eq!(merged.diagnostics.len(), 4);
        let first = &merged.shadowed[0];
        assert_eq!(first.skill.source, SkillSource::Project);
        assert_eq!(first.winner_location, PathBuf::from("/u/a/SKILL.md"));
        let d = &merged.diagnostics[0];
        assert_eq!(d.code, DiagnosticCode::SkillShadowed);
        assert_eq!(d.severity, Severity::Warning);
        assert_eq!(d.component.as_deref(), Some("a"));
        assert_eq!(
            d.path.as_deref(),
            Some(std::path::Path::new("/p/a/SKILL.md"))
        );
        assert!(d.message.contains("/p/a/SKILL.md") && d.message.contains("/u/a/SKILL.md"));
        assert!(d.message.contains("from project") && d.message.contains("from user"));
    }

    #[test]
    fn built_in_beats_everything() {
        let merged = merge(vec![
            meta("x", SkillSource::User, "/u/x/SKILL.md"),
            meta("x", SkillSource::BuiltIn, "builtin:/x/SKILL.md"),
        ]);
        assert_eq!(merged.skills.get("x").unwrap().source, SkillSource::BuiltIn);
        assert!(merged.diagnostics[0].message.contains("built-in"));
    }

    #[test]
    fn first_in_input_wins_a_tie() {
        let merged = merge(vec![
            meta("x", SkillSource::Project, "/near/x/SKILL.md"),
            meta("x", SkillSource::Project, "/far/x/SKILL.md"),
        ]);
        assert_eq!(
            merged.skills.get("x").unwrap().location,
            PathBuf::from("/near/x/SKILL.md")
        );
        assert_eq!(
            merged.shadowed[0].skill.location,
            PathBuf::from("/far/x/SKILL.md")
        );
    }

    #[test]
    fn no_candidates() {
        let merged = merge(Vec::new());
        assert!(merged.skills.is_empty());
        assert_eq!(merged.skills.len(), 0);
        assert!(merged.shadowed.is_empty());
    }
}
