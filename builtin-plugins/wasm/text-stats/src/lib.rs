//! rho's built-in `text_stats` tool as a WASM component: counts of lines, words, characters
//! and bytes, the longest line and the most frequent words of a text or a workspace file.
//!
//! It is written with `rho-plugin-sdk` like any third-party component, and rho embeds the
//! built `text_stats.wasm` in its binary. It only reads (through the host's `read-file`,
//! with the workspace access rho grants it) and computes.

mod stats;

use rho_plugin_sdk::{Annotations, Context, Output, Tool, ToolError, export_tools};
use serde::Deserialize;
use serde_json::{Value, json};

pub use stats::{Stats, TopWord};

/// Most frequent words returned when the call does not say.
const DEFAULT_TOP: usize = 10;
/// Upper bound of `top`.
const MAX_TOP: usize = 100;

/// The `text_stats` tool.
pub struct TextStats;

/// Arguments of `text_stats`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextStatsArgs {
    /// The text to measure.
    text: Option<String>,
    /// A workspace file to measure instead.
    path: Option<String>,
    /// How many most frequent words to list.
    top: Option<usize>,
    /// Count `Word` and `word` separately.
    #[serde(default)]
    case_sensitive: bool,
    /// Leave shorter words out of the frequency list.
    min_word_length: Option<usize>,
}

impl Tool for TextStats {
    const NAME: &'static str = "text_stats";
    const TITLE: Option<&'static str> = Some("Text statistics");
    const DESCRIPTION: &'static str = "Measures a text: lines (and blank lines), words \
        (whitespace-separated, as `wc -w`), characters (Unicode scalar values), bytes (UTF-8), \
        the longest line, and the most frequent words (runs of letters and digits, joined by \
        inner apostrophes or hyphens; case-folded unless case_sensitive). Give `text`, or \
        `path` for a UTF-8 workspace file (relative to the workspace).";
    type Args = TextStatsArgs;

    fn input_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "The text to measure. Give this or `path`."
                },
                "path": {
                    "type": "string",
                    "description": "A UTF-8 workspace file to measure, relative to the workspace (for example `docs/README.md`). Give this or `text`."
                },
                "top": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_TOP,
                    "default": DEFAULT_TOP,
                    "description": "How many of the most frequent words to list (0 for none)."
                },
                "case_sensitive": {
                    "type": "boolean",
                    "default": false,
                    "description": "Count `Word` and `word` as different words."
                },
                "min_word_length": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "Leave words shorter than this (in characters) out of the frequency list."
                }
            },
            "additionalProperties": false
        })
    }

    fn output_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {
                "source": {"type": "string", "description": "`text`, or the path that was read"},
                "lines": {"type": "integer"},
                "blank_lines": {"type": "integer"},
                "words": {"type": "integer"},
                "unique_words": {"type": "integer"},
                "characters": {"type": "integer"},
                "bytes": {"type": "integer"},
                "longest_line": {
                    "type": ["object", "null"],
                    "properties": {
                        "line": {"type": "integer", "description": "1-based line number"},
                        "characters": {"type": "integer"}
                    },
                    "required": ["line", "characters"]
                },
                "top_words": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"word": {"type": "string"}, "count": {"type": "integer"}},
                        "required": ["word", "count"]
                    }
                }
            },
            "required": ["source", "lines", "blank_lines", "words", "unique_words", "characters", "bytes", "longest_line", "top_words"]
        }))
    }

    fn annotations() -> Option<Annotations> {
        Some(Annotations::READ_ONLY)
    }

    fn call(args: TextStatsArgs, cx: &Context) -> Result<Output, ToolError> {
        let top = args.top.unwrap_or(DEFAULT_TOP);
        if top > MAX_TOP {
            return Err(ToolError::invalid_arguments(format!(
                "top: at most {MAX_TOP} (got {top})"
            )));
        }
        let min_word_length = args.min_word_length.unwrap_or(1);
        if min_word_length == 0 {
            return Err(ToolError::invalid_arguments("min_word_length: at least 1"));
        }
        let (source, text) = match (args.text, args.path) {
            (Some(text), None) => ("text".to_owned(), text),
            (None, Some(path)) => {
                let text = cx.read_to_string(&path)?;
                (path, text)
            }
            (Some(_), Some(_)) => {
                return Err(ToolError::invalid_arguments(
                    "give either `text` or `path`, not both",
                ));
            }
            (None, None) => {
                return Err(ToolError::invalid_arguments(
                    "give `text` (the text to measure) or `path` (a workspace file)",
                ));
            }
        };
        let options = stats::Options {
            top,
            case_sensitive: args.case_sensitive,
            min_word_length,
        };
        let stats =
            Stats::measure(&text, &options, || cx.is_cancelled()).ok_or(ToolError::Cancelled)?;
        let summary = stats.summary(&source);
        let mut structured = serde_json::to_value(&stats)
            .map_err(|e| ToolError::failed(format!("cannot encode the result: {e}")))?;
        if let Value::Object(map) = &mut structured {
            map.insert("source".into(), Value::String(source));
        }
        Ok(Output::text(summary).with_structured(structured))
    }
}

export_tools!(TextStats);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rho_plugin_sdk::{MockHost, ToolSpec};

    #[test]
    fn the_spec_is_sound() {
        assert_eq!(ToolSpec::of::<TextStats>().problems(), Vec::<String>::new());
    }

    #[test]
    fn measures_text_and_files() {
        let host =
            MockHost::new().with_file("a.md", "# Title\n\nrho runs tools.\nTools run in rho!\n");
        let out = host
            .call::<TextStats>(r#"{"path": "a.md", "top": 2}"#)
            .unwrap();
        let s = out.structured().unwrap();
        assert_eq!(s["source"], "a.md");
        assert_eq!(s["lines"], 4);
        assert_eq!(s["blank_lines"], 1);
        assert_eq!(s["words"], 9);
        assert_eq!(
            s["top_words"],
            json!([{"word": "rho", "count": 2}, {"word": "tools", "count": 2}])
        );
        assert!(out.text_content().contains("lines: 4 (1 blank)"));

        let out = host.call::<TextStats>(r#"{"text": ""}"#).unwrap();
        assert_eq!(out.structured().unwrap()["longest_line"], Value::Null);
    }

    #[test]
    fn bad_calls_say_what_to_give() {
        let host = MockHost::new();
        for (args, needle) in [
            ("{}", "give `text`"),
            (r#"{"text": "a", "path": "b"}"#, "not both"),
            (r#"{"text": "a", "top": 101}"#, "top: at most 100"),
            (r#"{"text": "a", "top": -1}"#, "top: invalid value"),
            (r#"{"text": "a", "colour": 1}"#, "unknown field `colour`"),
            (r#"{"text": "a", "min_word_length": 0}"#, "min_word_length"),
        ] {
            let err = host.call::<TextStats>(args).unwrap_err();
            assert!(
                matches!(&err, ToolError::InvalidArguments(m) if m.contains(needle)),
                "{args}: {err:?}"
            );
        }
        let err = host
            .call::<TextStats>(r#"{"path": "missing.txt"}"#)
            .unwrap_err();
        assert!(matches!(err, ToolError::Failed(m) if m.contains("missing.txt")));
    }

    #[test]
    fn cancellation_stops_the_count() {
        let host = MockHost::new();
        host.cancel();
        assert_eq!(
            host.call::<TextStats>(r#"{"text": "a b"}"#),
            Err(ToolError::Cancelled)
        );
    }
}
