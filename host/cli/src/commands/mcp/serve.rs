//! `rho mcp serve`: rho's tools as one MCP server on stdin/stdout or Streamable HTTP
//! (`Registry::serve_mcp`). On stdio, stdout carries only the protocol; logs go to stderr.

use super::*;
use crate::cli::ServeArgs;

pub(super) fn serve(ctx: &Context, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry()?;
    let bearer = match &args.token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.is_empty() => Some(rho_core::Bearer {
                variable: var.clone(),
                token,
            }),
            _ => bail!("--token-env {var}: the variable is not set (or empty)"),
        },
    };
    let transport = match args.http {
        None => rho_core::ServeTransport::Stdio,
        Some(addr) => rho_core::ServeTransport::Http {
            addr,
            allow_remote: args.allow_remote,
            bearer,
        },
    };
    let options = rho_core::ServeOptions {
        transport,
        builtins: args.builtins,
        max_risk: args.max_risk.into(),
        only: args.only,
        exclude: args.exclude,
        tool_search: args.tool_search,
        names: if args.upstream_names {
            rho_core::ServedNames::Upstream
        } else {
            rho_core::ServedNames::Exported
        },
    };
    // A signal stops serving; the servers rho started stop with it.
    runtime::run(|stop| async move {
        registry
            .serve_mcp(options, stop, |addr| {
                crate::output::error_line(&format!(
                    "rho mcp serve: listening on http://{addr}/mcp"
                ));
            })
            .await?;
        Ok(ExitCode::SUCCESS)
    })
}
