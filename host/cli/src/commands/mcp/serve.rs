//! `rho mcp serve`: rho's tools as one MCP server on stdin/stdout (`Registry::serve_mcp`).
//! stdout carries only the protocol; logs go to stderr.

use super::*;
use crate::cli::ServeArgs;

pub(super) fn serve(ctx: &Context, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry()?;
    let options = rho_core::ServeOptions {
        builtins: args.builtins,
        max_risk: args.max_risk.into(),
        only: args.only,
        exclude: args.exclude,
    };
    // A signal stops serving; the servers rho started stop with it.
    runtime::run(|stop| async move {
        registry.serve_mcp(options, stop).await?;
        Ok(ExitCode::SUCCESS)
    })
}
