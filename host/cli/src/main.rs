//! The `rho` binary: parses the command line, sets up logging and runs one command.

mod cli;
mod commands;
mod context;
mod logging;
mod output;
mod runtime;
mod shapes;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let started_at = std::time::Instant::now();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match commands::run(cli, started_at) {
        Ok(code) => code,
        Err(e) => {
            // A signal ended the command after it stopped what it started: the status says which.
            if let Some(runtime::Ended(signal)) = e.chain().find_map(|c| c.downcast_ref()) {
                return signal.exit_code();
            }
            output::error_line(&format!("error: {e:#}"));
            ExitCode::from(1)
        }
    }
}
