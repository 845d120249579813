//! Command dispatch.

mod completions;
mod doctor;
mod embedded_sdk;
mod interactive;
mod man;
mod mcp;
mod plugins;
mod rpc;
mod run;
mod scaffold;
mod skills;
mod tools;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::context::Context;

/// Runs the parsed command; `Err` is a failure reported as `error: ...` with exit code 1.
pub fn run(cli: Cli, started_at: std::time::Instant) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let ctx = Context::new(cli.cwd.as_deref(), cli.json, cli.config.as_deref())?;
    let interactive =
        cli.command.is_none() && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    crate::logging::init(interactive.then(|| ctx.paths.logs_dir()).as_deref());
    let Some(command) = cli.command else {
        if interactive {
            return interactive::run(&ctx, cli.session, started_at);
        }
        return rpc::run(&ctx, cli.session, None);
    };
    if cli.session.session.is_set() {
        anyhow::bail!(
            "session flags (--model, --endpoint, ...) go after `rpc`, or without a command"
        );
    }
    match command {
        Command::Plugins(command) => plugins::run(&ctx, command),
        Command::Skills(command) => skills::run(&ctx, command),
        Command::Mcp(command) => mcp::run(&ctx, command),
        Command::Tools(command) => tools::run(&ctx, command),
        Command::Doctor { no_connect } => doctor::run(&ctx, !no_connect),
        Command::Rpc(command) => rpc::run(&ctx, command.rpc, command.mcp_config.as_deref()),
        Command::Run(args) => run::run(&ctx, args),
        Command::Completions { shell } => completions::run(shell),
        Command::Man { out } => man::run(out.map(|dir| ctx.arg_path(&dir)).as_deref(), ctx.json),
    }
}
