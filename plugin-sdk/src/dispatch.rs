//! From a `call-tool` request to a [`Tool::call`] and back: argument decoding, the
//! conversions to the WIT types, and the compile-time checks behind
//! [`export_tools!`](crate::export_tools).

use crate::bindings::rho::tool::types as wit;
use crate::wasm_host::WasmHost;
use crate::{Annotations, Content, Context, Output, Tool, ToolError, ToolSpec};

/// Decodes `arguments` (JSON text of an object) into `T::Args` and runs `T::call`.
///
/// This is exactly what a `call-tool` of `T` does inside rho, minus the WIT conversions;
/// tests reach it through [`MockHost::call`](crate::MockHost::call). Empty `arguments` count
/// as `{}`. Arguments that do not deserialize give [`ToolError::InvalidArguments`] naming the
/// field (`items[2].name: missing field ...`).
pub fn invoke<T: Tool>(arguments: &str, cx: &Context<'_>) -> Result<Output, ToolError> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args = decode::<T::Args>(arguments)?;
    cx.check_cancelled()?;
    T::call(args, cx)
}

fn decode<A: serde::de::DeserializeOwned>(arguments: &str) -> Result<A, ToolError> {
    let de = &mut serde_json::Deserializer::from_str(arguments);
    let args = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = strip_position(&inner.to_string());
        if path == "." || path.is_empty() {
            ToolError::InvalidArguments(message)
        } else {
            ToolError::InvalidArguments(format!("{path}: {message}"))
        }
    })?;
    Ok(args)
}

/// serde_json appends ` at line L column C`: noise for a one-line argument object.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => message[..at].to_owned(),
        _ => message.to_owned(),
    }
}

/// `list-tools` entry of `T`.
#[doc(hidden)]
pub fn spec<T: Tool>() -> wit::ToolSpec {
    let spec = ToolSpec::of::<T>();
    wit::ToolSpec {
        name: spec.name.to_owned(),
        title: spec.title.map(str::to_owned),
        description: spec.description.to_owned(),
        input_schema: spec.input_schema.to_string(),
        output_schema: spec.output_schema.map(|schema| schema.to_string()),
        annotations: spec.annotations.map(annotations),
    }
}

fn annotations(a: Annotations) -> wit::Annotations {
    wit::Annotations {
        read_only: a.read_only,
        destructive: a.destructive,
        idempotent: a.idempotent,
        open_world: a.open_world,
    }
}

/// `call-tool` of `T` inside the component.
#[doc(hidden)]
pub fn call<T: Tool>(arguments: &str) -> Result<wit::ToolResult, wit::ToolError> {
    // rho preopens the workspace at `/workspace` and names it the initial directory, but
    // Rust's std starts a wasip2 guest in `/`: start each call there instead, so relative
    // `std::fs` paths mean the workspace. Without workspace access this fails and nothing
    // changes (every path fails alike).
    #[cfg(target_family = "wasm")]
    let _ = std::env::set_current_dir("/workspace");
    let host = WasmHost;
    let cx = Context::new(&host, T::NAME);
    match invoke::<T>(arguments, &cx) {
        Ok(output) => Ok(result(output)),
        Err(error) => Err(tool_error(error)),
    }
}

fn result(output: Output) -> wit::ToolResult {
    let (content, structured) = output.into_parts();
    let structured = structured.map(|value| value.to_string());
    let mut content: Vec<wit::ContentBlock> = content
        .into_iter()
        .map(|block| match block {
            Content::Text(text) => wit::ContentBlock::Text(text),
            Content::Image { mime_type, data } => {
                wit::ContentBlock::Image(wit::Image { mime_type, data })
            }
        })
        .collect();
    if content.is_empty()
        && let Some(json) = &structured
    {
        content.push(wit::ContentBlock::Text(json.clone()));
    }
    wit::ToolResult {
        content,
        structured_content: structured,
    }
}

fn tool_error(error: ToolError) -> wit::ToolError {
    match error {
        ToolError::InvalidArguments(message) => wit::ToolError::InvalidArguments(message),
        ToolError::Failed(message) => wit::ToolError::Failed(message),
        ToolError::Cancelled => wit::ToolError::Cancelled,
    }
}

/// `call-tool` of a name no exported tool has.
#[doc(hidden)]
pub fn unknown_tool(name: &str, known: &[&str]) -> wit::ToolError {
    wit::ToolError::UnknownTool(format!(
        "no tool named {name:?} in this component (it has: {})",
        known.join(", ")
    ))
}

/// Compile-time check of [`export_tools!`](crate::export_tools): names are valid and unique.
#[doc(hidden)]
pub const fn assert_valid_names(names: &[&str]) {
    let mut i = 0;
    while i < names.len() {
        assert!(
            crate::valid_tool_name(names[i]),
            "export_tools!: a tool NAME is invalid (use 1 to 64 ASCII letters, digits, '_' or '-')"
        );
        let mut j = i + 1;
        while j < names.len() {
            assert!(
                !same(names[i].as_bytes(), names[j].as_bytes()),
                "export_tools!: two tools have the same NAME"
            );
            j += 1;
        }
        i += 1;
    }
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::MockHost;
    use serde::Deserialize;
    use serde_json::{Value, json};

    struct Add;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AddArgs {
        numbers: Vec<Term>,
    }

    #[derive(Deserialize)]
    struct Term {
        value: i64,
    }

    impl Tool for Add {
        const NAME: &'static str = "add";
        const DESCRIPTION: &'static str = "Adds numbers.";
        type Args = AddArgs;
        fn input_schema() -> Value {
            json!({"type": "object", "properties": {"numbers": {"type": "array"}}, "required": ["numbers"]})
        }
        fn call(args: AddArgs, cx: &Context) -> Result<Output, ToolError> {
            cx.info("adding");
            let sum: i64 = args.numbers.iter().map(|t| t.value).sum();
            Ok(Output::new().with_structured(json!({"sum": sum})))
        }
    }

    #[test]
    fn arguments_are_typed_and_errors_name_the_field() {
        let host = MockHost::new();
        let out = host
            .call::<Add>(r#"{"numbers": [{"value": 1}, {"value": 2}]}"#)
            .unwrap();
        assert_eq!(out.structured(), Some(&json!({"sum": 3})));
        assert_eq!(host.logs().len(), 1);

        let err = host
            .call::<Add>(r#"{"numbers": [{"value": 1}, {"value": "x"}]}"#)
            .unwrap_err();
        assert_eq!(
            err,
            ToolError::InvalidArguments(
                "numbers[1].value: invalid type: string \"x\", expected i64".into()
            )
        );
        let err = host.call::<Add>("{}").unwrap_err();
        assert_eq!(
            err,
            ToolError::InvalidArguments("missing field `numbers`".into())
        );
        let err = host
            .call::<Add>(r#"{"numbers": [], "extra": 1}"#)
            .unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments(m) if m.contains("unknown field `extra`"))
        );
        let err = host.call::<Add>("[1]").unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)));
    }

    #[test]
    fn structured_only_results_get_a_text_block() {
        let r = result(Output::new().with_structured(json!({"a": 1})));
        assert_eq!(r.structured_content.as_deref(), Some(r#"{"a":1}"#));
        assert!(matches!(&r.content[..], [wit::ContentBlock::Text(t)] if t == r#"{"a":1}"#));
    }

    #[test]
    fn a_cancelled_call_does_not_run() {
        let host = MockHost::new();
        host.cancel();
        assert_eq!(
            host.call::<Add>(r#"{"numbers": []}"#),
            Err(ToolError::Cancelled)
        );
        assert!(host.logs().is_empty());
    }

    #[test]
    fn specs_convert_and_unknown_tools_are_named() {
        let s = spec::<Add>();
        assert_eq!(s.name, "add");
        assert!(s.output_schema.is_none());
        let v: Value = serde_json::from_str(&s.input_schema).unwrap();
        assert_eq!(v["type"], "object");
        assert!(ToolSpec::of::<Add>().problems().is_empty());
        let e = unknown_tool("sub", &["add"]);
        assert!(
            matches!(e, wit::ToolError::UnknownTool(m) if m.contains("\"sub\"") && m.contains("add"))
        );
    }

    #[test]
    fn spec_problems_are_found() {
        let mut s = ToolSpec::of::<Add>();
        s.name = "bad name";
        s.input_schema = json!({"type": "object", "required": ["x"]});
        let problems = s.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    #[test]
    fn position_suffix_is_dropped() {
        assert_eq!(
            strip_position("missing field `a` at line 1 column 2"),
            "missing field `a`"
        );
        assert_eq!(strip_position("plain"), "plain");
    }
}
