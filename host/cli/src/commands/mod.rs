//! Command dispatch.

mod mcp;
mod plugins;
mod skills;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::context::Context;

/// Runs the parsed command; `Err` is a failure reported as `error: ...` with exit code 1.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let ctx = Context::new(cli.cwd.as_deref(), cli.json, cli.config.as_deref())?;
    match cli.command {
        Command::Plugins(command) => plugins::run(&ctx, command),
        Command::Skills(command) => skills::run(&ctx, command),
        Command::Mcp(command) => mcp::run(&ctx, command),
    }
}
