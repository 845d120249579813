//! rho as a person at a terminal runs it: stdin and stderr on a real pty
//! (`tests/peers/on_terminal.py`), stdout a pipe the test reads as usual. Commands that only
//! act for a person at a terminal (the browser login) need this; everything else runs without
//! one.

use std::process::{Command, Stdio};

use crate::{Run, Sandbox, repo_root};

impl Sandbox {
    /// `rho --cwd <project> <args>` with `env` added, its stdin and stderr on a terminal
    /// (nothing is typed; `NO_COLOR` keeps its log lines plain). `Run::stderr` is what the
    /// terminal showed, with LF line ends.
    pub fn rho_on_terminal(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let terminal = repo_root().join("tests/peers/on_terminal.py");
        let rho = self.command(args);
        let mut command = Command::new("python3");
        command
            .arg(terminal)
            .arg(rho.get_program())
            .args(rho.get_args())
            .env_clear()
            .envs(
                rho.get_envs()
                    .filter_map(|(name, value)| Some((name, value?))),
            )
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        Run::from(
            command
                .output()
                .expect("python3 runs the terminal stand-in (tests/peers/on_terminal.py)"),
        )
    }
}
