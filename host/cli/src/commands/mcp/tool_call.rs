//! `rho mcp call`: one tool call on one server through the registry (`Registry::call_tool`:
//! started and named as a session would), its progress on stderr and its result on stdout.

use super::auth::person_at_terminal;
use super::*;

pub(super) fn call(
    ctx: &Context,
    id: &str,
    tool: &str,
    args: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let arguments = match args {
        None => serde_json::Value::Null,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(map @ serde_json::Value::Object(_)) => map,
            Ok(_) => bail!("arguments must be a JSON object"),
            Err(e) => bail!("arguments are not valid JSON: {e}"),
        },
    };
    let registry = ctx.registry()?;
    let json = ctx.json;
    // A person at a terminal may log in when the server needs it.
    let options = rho_core::MountOptions {
        oauth_login: LoginPolicy::for_run(person_at_terminal()),
        ..rho_core::MountOptions::default()
    };
    runtime::run(|stop| async move {
        // A signal cancels the call (the server is told) or the start, then the server stops.
        let mut context = rho_component::ToolContext::new(&registry.paths.project.cwd);
        context.cancel = stop.clone();
        context.progress = Some(std::sync::Arc::new(|p: rho_component::ToolProgress| {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p
                .message
                .map(|m| format!(" {}", clean(&m)))
                .unwrap_or_default();
            crate::output::error_line(&format!("progress {}{total}{message}", p.progress));
        }));
        let called = registry
            .call_tool(id, tool, arguments, &context, options)
            .await?;
        // A signal ends rho with 128 + its number, whatever the cancelled call printed.
        if stop.is_cancelled() {
            bail!("stopped by a signal");
        }
        let rendered = called.output;
        // A failed call (no result, or a result flagged isError) is an error a person reads
        // on stderr; a program reading --json gets it as the result with `is_error`.
        if rendered.is_error && !json {
            bail!("{}", rendered.text);
        }
        if json {
            json_sorted(&McpCall {
                server: id,
                tool: &called.tool,
                output: &rendered,
            });
        } else {
            out(&crate::output::call_result(&rendered));
        }
        Ok(if rendered.is_error {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
