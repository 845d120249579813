//! Permission modes and the approval gate's decision: given a tool's [`RiskLevel`] and the
//! session's [`PermissionMode`], a call runs, waits for the user, or is refused.

use schemars::JsonSchema;
use serde::Serialize;
use strum::{IntoStaticStr, VariantArray};

use crate::RiskLevel;

/// How much a session may do without asking.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema, VariantArray, IntoStaticStr,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum PermissionMode {
    /// Only `read` tools run; anything else is refused without asking.
    ReadOnly,
    /// `read` tools run; `write` and `destructive` tools ask first.
    Ask,
    /// `read` and `write` tools run; `destructive` tools (commands, MCP tools) ask first.
    #[default]
    AskDestructive,
    /// Everything runs without asking.
    AllowAll,
}

/// What the gate decides for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse it without asking.
    Deny,
}

impl PermissionMode {
    /// Every mode, in order of increasing freedom.
    pub const ALL: &'static [PermissionMode] = <Self as strum::VariantArray>::VARIANTS;

    /// The configuration name: `read-only`, `ask`, `ask-destructive` or `allow-all`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The mode named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.as_str() == name)
    }

    /// The gate's decision for a tool of `risk`.
    pub fn gate(self, risk: RiskLevel) -> Gate {
        match (self, risk) {
            (_, RiskLevel::Read) | (Self::AllowAll, _) => Gate::Allow,
            (Self::ReadOnly, _) => Gate::Deny,
            (Self::Ask, _) => Gate::Ask,
            (Self::AskDestructive, RiskLevel::Write) => Gate::Allow,
            (Self::AskDestructive, RiskLevel::Destructive) => Gate::Ask,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_follows_the_mode_and_the_risk() {
        use Gate::*;
        use RiskLevel::*;
        let table = [
            (PermissionMode::ReadOnly, [Allow, Deny, Deny]),
            (PermissionMode::Ask, [Allow, Ask, Ask]),
            (PermissionMode::AskDestructive, [Allow, Allow, Ask]),
            (PermissionMode::AllowAll, [Allow, Allow, Allow]),
        ];
        for (mode, expected) in table {
            for (risk, gate) in [Read, Write, Destructive].into_iter().zip(expected) {
                assert_eq!(mode.gate(risk), gate, "{mode:?} {risk:?}");
            }
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(PermissionMode::default(), PermissionMode::AskDestructive);
    }
}
