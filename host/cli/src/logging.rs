//! Where logs go: stderr, or for the interactive session (whose screen they would break) a
//! file, `$RHO_HOME/logs/rho.log` (directory 0700, file 0600, moved to `rho.log.1` once it
//! passes [`LOG_ROTATE_BYTES`]). Filtered by `RHO_LOG` (default: warnings and errors from
//! rho; `rmcp`'s own logs are off because rho reports every server failure itself). rmcp's
//! OAuth module is capped at `info` whatever `RHO_LOG` says: its debug lines quote
//! authorization codes.
//!
//! Every field of every record (the message too) goes through
//! [`rho_component::terminal_safe`]: a server's error quoted in a log line cannot move the
//! cursor, retitle the terminal or overwrite the line with a carriage return. Colour is used
//! only when stderr is a terminal and `NO_COLOR` is not set; a log file never has any.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A log file this large at start is moved aside.
pub const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Sets up logging: into a file under `logs_dir` when given, else stderr. A log file that
/// cannot be opened means no logs (never the screen).
pub fn init(logs_dir: Option<&Path>) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RHO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    let filter = match "rmcp::transport::auth=info".parse() {
        Ok(cap) => filter.add_directive(cap),
        Err(_) => filter,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(true)
        .fmt_fields(safe_fields());
    match logs_dir {
        None => {
            let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let _ = builder
                .with_ansi(colour)
                .with_writer(std::io::stderr)
                .try_init();
        }
        Some(dir) => {
            let Some(file) = open_log(dir) else { return };
            let file = Arc::new(Mutex::new(file));
            let _ = builder
                .with_ansi(false)
                .with_writer(move || LogWriter(Arc::clone(&file)))
                .try_init();
        }
    }
}

/// The field formatter: `message name=value …`, each value made terminal-safe.
fn safe_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(write_field).delimited(" ")
}

/// Writes one field: the message as it reads, any other as `name=value` (strings quoted).
fn write_field(
    writer: &mut tracing_subscriber::fmt::format::Writer<'_>,
    field: &tracing::field::Field,
    value: &dyn fmt::Debug,
) -> fmt::Result {
    let text = rho_component::terminal_safe(&format!("{value:?}"));
    if field.name() == "message" {
        writer.write_str(&text)
    } else {
        write!(writer, "{}={text}", field.name())
    }
}

fn open_log(dir: &Path) -> Option<File> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .ok()?;
    let path = dir.join("rho.log");
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(&path, dir.join("rho.log.1"));
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()
}

/// One log record's writer over the shared file.
struct LogWriter(Arc<Mutex<File>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut file) => file.write(buf),
            Err(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock() {
            Ok(mut file) => file.flush(),
            Err(_) => Ok(()),
        }
    }
}
