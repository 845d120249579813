//! The [`Host`] of a tool running inside rho: the component's `rho:tool/host` imports.

#[cfg(target_arch = "wasm32")]
use crate::bindings::rho::tool::host as wit;
use crate::{Host, Level, ReadError};

/// Calls the component's imports. Outside a wasm32 component (native builds of a guest
/// crate, its docs and tests) there is no host: logs and progress go nowhere, nothing is
/// cancelled and reads fail, instead of aborting in a missing import.
pub(crate) struct WasmHost;

#[cfg(target_arch = "wasm32")]
impl Host for WasmHost {
    fn log(&self, level: Level, message: &str) {
        let level = match level {
            Level::Trace => wit::LogLevel::Trace,
            Level::Debug => wit::LogLevel::Debug,
            Level::Info => wit::LogLevel::Info,
            Level::Warn => wit::LogLevel::Warn,
            Level::Error => wit::LogLevel::Error,
        };
        wit::log(level, message);
    }

    fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        wit::report_progress(progress, total, message);
    }

    fn is_cancelled(&self) -> bool {
        wit::is_cancelled()
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        wit::read_file(path).map_err(|message| ReadError::Unreadable {
            path: path.to_owned(),
            message,
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Host for WasmHost {
    fn log(&self, _level: Level, _message: &str) {}

    fn report_progress(&self, _progress: f64, _total: Option<f64>, _message: Option<&str>) {}

    fn is_cancelled(&self) -> bool {
        false
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        Err(ReadError::Unreadable {
            path: path.to_owned(),
            message: format!(
                "{path}: no host to read from (not running as a component inside rho)"
            ),
        })
    }
}
