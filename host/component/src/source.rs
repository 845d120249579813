//! Where a component comes from, and the precedence rank that follows from it.

use std::fmt;

use serde::Serialize;

/// Which of the two installation scopes a plugin or loose skill root belongs to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The project being worked on (`<project>/.agents/...`, `<project>/.rho/...`).
    Project,
    /// The user's home (`~/.agents/...`, `$RHO_HOME/...`).
    User,
}

impl Scope {
    /// The lowercase word used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a skill was found. The order of the variants is the precedence order
/// (`built-in > loose user > loose project > project plugins > user plugins`): a smaller
/// [`SkillSource::rank`] wins.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SkillSource {
    /// Embedded in the rho binary.
    BuiltIn,
    /// A loose skill folder under the user's home.
    User,
    /// A loose skill folder in the project.
    Project,
    /// A skill shipped by an Agent Plugins package.
    Plugin {
        /// The owning plugin's manifest name.
        plugin: String,
        /// The scope of the root the plugin was discovered in.
        scope: Scope,
    },
}

impl SkillSource {
    /// Precedence rank: lower wins.
    pub fn rank(&self) -> u8 {
        match self {
            Self::BuiltIn => 0,
            Self::User => 1,
            Self::Project => 2,
            Self::Plugin {
                scope: Scope::Project,
                ..
            } => 3,
            Self::Plugin {
                scope: Scope::User, ..
            } => 4,
        }
    }

    /// A short machine word: `builtin`, `user`, `project`, `project-plugin`, `user-plugin`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::BuiltIn => "builtin",
            Self::User => "user",
            Self::Project => "project",
            Self::Plugin {
                scope: Scope::Project,
                ..
            } => "project-plugin",
            Self::Plugin {
                scope: Scope::User, ..
            } => "user-plugin",
        }
    }

    /// The owning plugin, when the skill came from one.
    pub fn plugin(&self) -> Option<&str> {
        match self {
            Self::Plugin { plugin, .. } => Some(plugin),
            _ => None,
        }
    }
}

impl fmt::Display for SkillSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BuiltIn => f.write_str("built-in"),
            Self::User => f.write_str("user"),
            Self::Project => f.write_str("project"),
            Self::Plugin { plugin, scope } => write!(f, "plugin {plugin} ({scope})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_the_design() {
        let order = [
            SkillSource::BuiltIn,
            SkillSource::User,
            SkillSource::Project,
            SkillSource::Plugin {
                plugin: "p".into(),
                scope: Scope::Project,
            },
            SkillSource::Plugin {
                plugin: "p".into(),
                scope: Scope::User,
            },
        ];
        for pair in order.windows(2) {
            assert!(
                pair[0].rank() < pair[1].rank(),
                "{} before {}",
                pair[0],
                pair[1]
            );
        }
        assert_eq!(order[3].to_string(), "plugin p (project)");
    }
}
