//! Why a model request or a whole prompt ended: the one [`FinishReason`] the provider, the
//! session, the host and every front-end share. Its spellings are the wire's (`docs/rpc.md`):
//! the OpenAI-compatible `finish_reason` values, plus the session's own `max_iterations` and
//! `aborted`; a value a provider sends that rho does not know is kept as it came.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why the model stopped answering, or why the prompt ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model finished its answer (`stop`); also what a provider that says nothing means.
    #[default]
    Stop,
    /// The answer was cut at the token limit (`length`).
    Length,
    /// The model asked for tool calls (`tool_calls`); as a prompt's end: the request budget
    /// ran out with calls pending.
    ToolCalls,
    /// The provider's content filter withheld the answer (`content_filter`).
    ContentFilter,
    /// The legacy single function call of older OpenAI-compatible servers (`function_call`).
    FunctionCall,
    /// The session spent `[agent] max_iterations` model requests (`max_iterations`).
    MaxIterations,
    /// The prompt was cancelled (`aborted`).
    Aborted,
    /// Any other value a provider sent, exactly as it came (never one of the spellings
    /// above: [`FinishReason::parse`] builds this).
    Other(String),
}

impl FinishReason {
    /// Every reason rho knows, in declaration order (not [`FinishReason::Other`]).
    pub const KNOWN: [FinishReason; 7] = [
        Self::Stop,
        Self::Length,
        Self::ToolCalls,
        Self::ContentFilter,
        Self::FunctionCall,
        Self::MaxIterations,
        Self::Aborted,
    ];

    /// The reason a spelling names: a known one, or [`FinishReason::Other`] keeping it.
    pub fn parse(value: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|known| known.as_str() == value)
            .unwrap_or_else(|| Self::Other(value.to_owned()))
    }

    /// The spelling on every wire (`stop`, `length`, `tool_calls`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            Self::ContentFilter => "content_filter",
            Self::FunctionCall => "function_call",
            Self::MaxIterations => "max_iterations",
            Self::Aborted => "aborted",
            Self::Other(value) => value,
        }
    }
}

/// One of the reasons rho knows, or any other string a provider sent (kept as it came): the
/// value set is built from [`FinishReason::KNOWN`], so the schema cannot miss a reason.
impl JsonSchema for FinishReason {
    fn schema_name() -> Cow<'static, str> {
        "FinishReason".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let known: Vec<&str> = Self::KNOWN.iter().map(Self::as_str).collect();
        json_schema!({
            "anyOf": [
                { "type": "string", "enum": known },
                { "type": "string" },
            ]
        })
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FinishReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::parse(&value))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_known_reason_round_trips_through_its_spelling() {
        for reason in FinishReason::KNOWN {
            let text = serde_json::to_string(&reason).unwrap();
            assert_eq!(text, format!("\"{reason}\""));
            assert_eq!(serde_json::from_str::<FinishReason>(&text).unwrap(), reason);
            assert_eq!(FinishReason::parse(reason.as_str()), reason);
        }
    }

    #[test]
    fn an_unknown_provider_value_is_kept_as_it_came() {
        let reason: FinishReason = serde_json::from_str("\"end_turn\"").unwrap();
        assert_eq!(reason, FinishReason::Other("end_turn".into()));
        assert_eq!(serde_json::to_string(&reason).unwrap(), "\"end_turn\"");
        assert_eq!(reason.to_string(), "end_turn");
    }

    #[test]
    fn the_spellings_are_the_wire_s() {
        let spelled: Vec<&str> = FinishReason::KNOWN
            .iter()
            .map(FinishReason::as_str)
            .collect();
        assert_eq!(
            spelled,
            [
                "stop",
                "length",
                "tool_calls",
                "content_filter",
                "function_call",
                "max_iterations",
                "aborted"
            ]
        );
    }
}
