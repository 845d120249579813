//! The `rho` binary: parses the command line, sets up logging on stderr and runs one command.

mod cli;
mod commands;
mod context;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    init_tracing();
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            output::error_line(&format!("error: {e:#}"));
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr, filtered by `RHO_LOG` (default: warnings and errors from rho; `rmcp`'s own
/// logs are off because rho reports every server failure itself). rmcp's OAuth module is
/// capped at `info` whatever `RHO_LOG` says: its debug lines quote authorization codes.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RHO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    let filter = match "rmcp::transport::auth=info".parse() {
        Ok(cap) => filter.add_directive(cap),
        Err(_) => filter,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true)
        .try_init();
}
