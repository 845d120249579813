//! `rho mcp call`: one tool call on one server, its progress on stderr and its result on stdout.

use super::auth::{oauth_access, person_at_terminal};
use super::*;

pub(super) fn call(
    ctx: &Context,
    id: &str,
    tool: &str,
    args: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let arguments = match args {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            Ok(_) => bail!("arguments must be a JSON object"),
            Err(e) => bail!("arguments are not valid JSON: {e}"),
        },
    };
    let slots = load_slots(ctx)?;
    let spec = startable(&slots, id)?;
    let json = ctx.json;
    // A person at a terminal may log in when the server needs it.
    let access = oauth_access(ctx, LoginPolicy::for_run(person_at_terminal()));
    runtime::run(|stop| async move {
        // A call needs the tools only: the server's prompts and resources stay unlisted.
        let options = rho_mcp::ClientOptions {
            skip_offers: true,
            oauth: Some(access),
            ..rho_mcp::ClientOptions::default()
        };
        // A signal while connecting drops the connection, which stops the server.
        let connection = tokio::select! {
            connected = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &options) => connected?,
            () = stop.cancelled() => bail!("stopped while connecting"),
        };
        let mut names = rho_component::naming::ExportedNames::default();
        let exported: Vec<(String, String)> = connection
            .tools
            .iter()
            .map(|t| (names.assign(&spec.id, &t.name), t.name.clone()))
            .collect();
        let Some(raw) = exported
            .iter()
            .find(|(e, raw)| e == tool || raw == tool)
            .map(|(_, raw)| raw.clone())
        else {
            connection.close().await;
            bail!("server {id:?} has no tool {tool:?} (see `rho mcp show {id} --connect`)");
        };
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::channel::<rho_mcp::Progress>(64);
        let printer = tokio::spawn(async move {
            while let Some(p) = progress_rx.recv().await {
                let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = p
                    .message
                    .map(|m| format!(" {}", clean(&m)))
                    .unwrap_or_default();
                crate::output::error_line(&format!("progress {}{total}{message}", p.progress));
            }
        });
        // A signal cancels the call (the server is told), then the connection closes.
        let cancel = rho_mcp::Cancel::new();
        let on_signal = cancel.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            on_signal.cancel();
        });
        let result = connection
            .call_tool(&raw, arguments, Some(progress_tx), cancel)
            .await;
        connection.close().await;
        let _ = printer.await;
        let result = result?;
        let rendered = rho_mcp::render_result(&result, spec.max_output_bytes);
        if json {
            json_sorted(&McpCall {
                server: &spec.id,
                tool: &raw,
                is_error: rendered.is_error,
                text: &rendered.text,
                truncated: rendered.truncated,
                structured_content: rendered.structured.as_ref(),
                image: rendered.image.as_ref().map(|i| ImageEntry {
                    mime_type: &i.mime_type,
                    bytes: i.data.len(),
                }),
            });
        } else {
            let mut text = crate::output::clean_block(&rendered.text);
            text.push('\n');
            if let Some(image) = &rendered.image {
                text.push_str(&format!(
                    "[image kept for display: {}, {} encoded bytes]\n",
                    image.mime_type,
                    image.data.len()
                ));
            }
            out(&text);
        }
        Ok(if rendered.is_error {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
