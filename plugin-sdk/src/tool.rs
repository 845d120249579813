//! The [`Tool`] trait a component's tools implement, their [`Annotations`], and the
//! [`ToolSpec`] the SDK derives from them for `list-tools`.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Context, Output, ToolError};

/// One tool of a component.
///
/// A tool is a type (usually a unit struct) with a name, a description, typed arguments and a
/// `call` function. [`export_tools!`](crate::export_tools) lists and dispatches every tool of
/// the component.
///
/// ```
/// use rho_plugin_sdk::{Context, Output, Tool, ToolError};
/// use serde::Deserialize;
/// use serde_json::{Value, json};
///
/// pub struct Shout;
///
/// #[derive(Deserialize)]
/// #[serde(deny_unknown_fields)]
/// pub struct ShoutArgs {
///     text: String,
/// }
///
/// impl Tool for Shout {
///     const NAME: &'static str = "shout";
///     const DESCRIPTION: &'static str = "Upper-cases a text.";
///     type Args = ShoutArgs;
///
///     fn input_schema() -> Value {
///         json!({
///             "type": "object",
///             "properties": {"text": {"type": "string", "description": "The text to upper-case"}},
///             "required": ["text"],
///             "additionalProperties": false
///         })
///     }
///
///     fn call(args: ShoutArgs, _cx: &Context) -> Result<Output, ToolError> {
///         Ok(Output::text(args.text.to_uppercase()))
///     }
/// }
/// ```
///
/// # The input schema is written by hand
///
/// [`input_schema`](Tool::input_schema) is the JSON Schema the model sees; the SDK does not
/// derive it from [`Args`](Tool::Args) (that would pull a schema generator into every
/// component). Keep the two in step: same field names, the same required fields, and
/// `#[serde(deny_unknown_fields)]` on the arguments when the schema says
/// `"additionalProperties": false`. [`ToolSpec::problems`] and a test that calls the tool
/// through [`MockHost::call`](crate::MockHost::call) with the schema's own examples catch
/// most drift.
///
/// # Errors and panics
///
/// Return [`ToolError`] for every failure the model should read. A panic aborts the
/// component (release builds use `panic = "abort"`): rho reports a trap and starts a fresh
/// instance for the next call.
pub trait Tool {
    /// The tool's name inside the component: ASCII letters, digits, `_` and `-`, at most 64
    /// bytes (checked at compile time by [`export_tools!`](crate::export_tools)). rho exports
    /// it as `wasm__<plugin>__<name>`, where a part holding anything but ASCII letters, digits
    /// and `_` is hex-encoded (`_rho_<hex>`): prefer `snake_case` names.
    const NAME: &'static str;

    /// A short display title.
    const TITLE: Option<&'static str> = None;

    /// What the tool does and when to use it. The model reads this to decide whether to
    /// call the tool: say what goes in, what comes out, and the limits.
    const DESCRIPTION: &'static str;

    /// The arguments, deserialized from the call's JSON object. Arguments that do not fit
    /// become `tool-error::invalid-arguments` with serde's message prefixed by the path of the
    /// offending field (`limit: invalid type: string "x", expected u32`). Use
    /// `serde_json::Value` to take the arguments as they are, or `()`-like structs with
    /// `#[derive(Deserialize)]` for no arguments.
    type Args: DeserializeOwned;

    /// The JSON Schema of the arguments: an object schema (`"type": "object"`), written by
    /// hand (see the trait docs).
    fn input_schema() -> Value;

    /// The JSON Schema of the structured content the tool returns
    /// ([`Output::with_structured`]), if it returns any.
    fn output_schema() -> Option<Value> {
        None
    }

    /// Behaviour hints shown to the user. They never lower the risk level the plugin's
    /// manifest declares.
    fn annotations() -> Option<Annotations> {
        None
    }

    /// Runs the tool.
    fn call(args: Self::Args, cx: &Context<'_>) -> Result<Output, ToolError>;
}

/// Hints about a tool's behaviour (the WIT `annotations` record).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Annotations {
    /// The tool only reads.
    pub read_only: bool,
    /// The tool may destroy data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool reaches outside the workspace (in rho it cannot: components get no network).
    pub open_world: bool,
}

impl Annotations {
    /// A tool that only reads and computes: read-only and idempotent.
    pub const READ_ONLY: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

/// Everything `list-tools` says about one tool, taken from its [`Tool`] implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// [`Tool::NAME`].
    pub name: &'static str,
    /// [`Tool::TITLE`].
    pub title: Option<&'static str>,
    /// [`Tool::DESCRIPTION`].
    pub description: &'static str,
    /// [`Tool::input_schema`].
    pub input_schema: Value,
    /// [`Tool::output_schema`].
    pub output_schema: Option<Value>,
    /// [`Tool::annotations`].
    pub annotations: Option<Annotations>,
}

impl ToolSpec {
    /// The spec of tool `T`.
    pub fn of<T: Tool>() -> Self {
        Self {
            name: T::NAME,
            title: T::TITLE,
            description: T::DESCRIPTION,
            input_schema: T::input_schema(),
            output_schema: T::output_schema(),
            annotations: T::annotations(),
        }
    }

    /// What rho would object to in this spec (empty when it is fine): the name's characters
    /// and length, an empty description, schemas that are not object schemas, and required
    /// properties the input schema does not define. Call it from a unit test:
    ///
    /// ```
    /// # use rho_plugin_sdk::{Context, Output, Tool, ToolError, ToolSpec};
    /// # struct Ping;
    /// # impl Tool for Ping {
    /// #     const NAME: &'static str = "ping";
    /// #     const DESCRIPTION: &'static str = "Answers pong.";
    /// #     type Args = serde_json::Value;
    /// #     fn input_schema() -> serde_json::Value { serde_json::json!({"type": "object"}) }
    /// #     fn call(_: serde_json::Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::text("pong")) }
    /// # }
    /// assert_eq!(ToolSpec::of::<Ping>().problems(), Vec::<String>::new());
    /// ```
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !valid_tool_name(self.name) {
            problems.push(format!(
                "name {:?}: use 1 to 64 ASCII letters, digits, '_' or '-'",
                self.name
            ));
        }
        if self.description.trim().is_empty() {
            problems.push("description is empty".to_owned());
        }
        schema_problems("input schema", &self.input_schema, &mut problems);
        if let Some(output) = &self.output_schema {
            schema_problems("output schema", output, &mut problems);
        }
        problems
    }
}

fn schema_problems(what: &str, schema: &Value, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        problems.push(format!("{what} is not a JSON object"));
        return;
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(format!("{what} must have \"type\": \"object\""));
    }
    let properties = object.get("properties").and_then(Value::as_object);
    if let Some(required) = object.get("required") {
        match required.as_array() {
            Some(names) => {
                for name in names {
                    match name.as_str() {
                        Some(n) if properties.is_some_and(|p| p.contains_key(n)) => {}
                        Some(n) => problems.push(format!(
                            "{what}: required property {n:?} is not under \"properties\""
                        )),
                        None => problems.push(format!("{what}: \"required\" holds a non-string")),
                    }
                }
            }
            None => problems.push(format!("{what}: \"required\" is not an array")),
        }
    }
}

/// Whether `name` is a valid tool name: 1 to 64 ASCII letters, digits, `_` or `-`.
pub const fn valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 64 {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return false;
        }
        i += 1;
    }
    true
}
