//! Where logs go: stderr, or for the interactive session (whose screen they would break) a
//! file, `$RHO_HOME/logs/rho.log` (directory 0700, file 0600, moved to `rho.log.1` once it
//! passes [`LOG_ROTATE_BYTES`]). Filtered by `RHO_LOG` (default: warnings and errors from
//! rho; `rmcp`'s own logs are off because rho reports every server failure itself). rmcp's
//! OAuth module is capped at `info` whatever `RHO_LOG` says: its debug lines quote
//! authorization codes.

use std::fs::{File, OpenOptions};
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
        .with_target(true);
    match logs_dir {
        None => {
            let _ = builder.with_writer(std::io::stderr).try_init();
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
