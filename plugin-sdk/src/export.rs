//! [`export_tools!`](crate::export_tools): the one macro a component invokes.

/// Exports tools from this component: implements the `rho:tool/tools@0.1.0` interface
/// (`list-tools` from each tool's [`Tool`](crate::Tool) implementation, `call-tool`
/// dispatching by [`Tool::NAME`](crate::Tool::NAME), `tool-error::unknown-tool` for any other
/// name) and emits the component's exports.
///
/// Invoke it once per crate, at module level, with every tool type:
///
/// ```
/// # use rho_plugin_sdk::{Context, Output, Tool, ToolError};
/// # use serde_json::{Value, json};
/// # pub struct Ping;
/// # impl Tool for Ping {
/// #     const NAME: &'static str = "ping";
/// #     const DESCRIPTION: &'static str = "Answers pong.";
/// #     type Args = Value;
/// #     fn input_schema() -> Value { json!({"type": "object"}) }
/// #     fn call(_: Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::text("pong")) }
/// # }
/// # pub struct Echo;
/// # impl Tool for Echo {
/// #     const NAME: &'static str = "echo";
/// #     const DESCRIPTION: &'static str = "Echoes its arguments.";
/// #     type Args = Value;
/// #     fn input_schema() -> Value { json!({"type": "object"}) }
/// #     fn call(a: Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::json(a)) }
/// # }
/// rho_plugin_sdk::export_tools!(Ping, Echo);
/// ```
///
/// Tool names are checked at compile time: each must be 1 to 64 ASCII letters, digits, `_`
/// or `-`, and no two may be equal. The crate needs no `wit-bindgen` dependency of its own.
///
/// ```compile_fail
/// # use rho_plugin_sdk::{Context, Output, Tool, ToolError};
/// # use serde_json::{Value, json};
/// pub struct Bad;
/// impl Tool for Bad {
///     const NAME: &'static str = "no spaces";
///     const DESCRIPTION: &'static str = "Refused at compile time.";
///     type Args = Value;
///     fn input_schema() -> Value { json!({"type": "object"}) }
///     fn call(_: Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::text("")) }
/// }
/// rho_plugin_sdk::export_tools!(Bad);
/// ```
///
/// ```compile_fail
/// # use rho_plugin_sdk::{Context, Output, Tool, ToolError};
/// # use serde_json::{Value, json};
/// pub struct A;
/// impl Tool for A {
///     const NAME: &'static str = "same";
///     const DESCRIPTION: &'static str = "One.";
///     type Args = Value;
///     fn input_schema() -> Value { json!({"type": "object"}) }
///     fn call(_: Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::text("")) }
/// }
/// pub struct B;
/// impl Tool for B {
///     const NAME: &'static str = "same";
///     const DESCRIPTION: &'static str = "Two.";
///     type Args = Value;
///     fn input_schema() -> Value { json!({"type": "object"}) }
///     fn call(_: Value, _: &Context) -> Result<Output, ToolError> { Ok(Output::text("")) }
/// }
/// rho_plugin_sdk::export_tools!(A, B);
/// ```
#[macro_export]
macro_rules! export_tools {
    ($($tool:ty),+ $(,)?) => {
        const _: () = {
            const _: () = $crate::__private::assert_valid_names(&[
                $(<$tool as $crate::Tool>::NAME),+
            ]);

            struct RhoPluginSdkTools;

            impl $crate::__private::Guest for RhoPluginSdkTools {
                fn list_tools() -> ::std::vec::Vec<$crate::__private::WitToolSpec> {
                    ::std::vec![$($crate::__private::spec::<$tool>()),+]
                }

                fn call_tool(
                    name: ::std::string::String,
                    arguments: ::std::string::String,
                ) -> ::core::result::Result<
                    $crate::__private::WitToolResult,
                    $crate::__private::WitToolError,
                > {
                    $(
                        if name == <$tool as $crate::Tool>::NAME {
                            return $crate::__private::call::<$tool>(&arguments);
                        }
                    )+
                    ::core::result::Result::Err($crate::__private::unknown_tool(
                        &name,
                        &[$(<$tool as $crate::Tool>::NAME),+],
                    ))
                }
            }

            $crate::bindings::__export_tool_provider!(
                RhoPluginSdkTools with_types_in $crate::bindings
            );
        };
    };
}
