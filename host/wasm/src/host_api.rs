//! The `rho:tool/host` imports: logging, progress, the cancellation check and workspace reads,
//! each attributed to the component and limited to what its capabilities grant.

use rho_component::{CancelSignal, ToolProgress};

use crate::bindings::rho::tool::host::{Host, LogLevel};
use crate::bindings::rho::tool::types;
use crate::store::CallState;
use crate::workspace_files;

/// Bytes of one log or progress message kept; the rest is cut.
const MESSAGE_MAX_BYTES: usize = 8 * 1024;

impl types::Host for CallState {}

impl Host for CallState {
    fn log(&mut self, level: LogLevel, message: String) {
        if self.logs_left == 0 {
            return;
        }
        self.logs_left -= 1;
        let component = &*self.component;
        let tool = self.tool.as_deref().unwrap_or("list-tools");
        let mut message = cut(message);
        if self.logs_left == 0 {
            message.push_str(" [further log messages of this call are dropped]");
        }
        match level {
            LogLevel::Trace => {
                tracing::trace!(target: "rho::wasm::guest", component, tool, "{message}");
            }
            LogLevel::Debug => {
                tracing::debug!(target: "rho::wasm::guest", component, tool, "{message}");
            }
            LogLevel::Info => {
                tracing::info!(target: "rho::wasm::guest", component, tool, "{message}");
            }
            LogLevel::Warn => {
                tracing::warn!(target: "rho::wasm::guest", component, tool, "{message}");
            }
            LogLevel::Error => {
                tracing::error!(target: "rho::wasm::guest", component, tool, "{message}");
            }
        }
    }

    fn report_progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(sink) = &self.progress else {
            return;
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) || self.progress_left == 0
        {
            return;
        }
        self.progress_left -= 1;
        sink(ToolProgress {
            progress,
            total,
            message: message.map(cut),
        });
    }

    fn is_cancelled(&mut self) -> bool {
        self.cancel.as_ref().is_some_and(CancelSignal::is_cancelled)
    }

    async fn read_file(&mut self, path: String) -> Result<Vec<u8>, String> {
        let Some(root) = self.read_root.clone() else {
            return Err(if self.tool.is_some() {
                "read-file is not available: the component's manifest grants no workspace access"
                    .to_owned()
            } else {
                "read-file is not available while listing tools".to_owned()
            });
        };
        // File IO blocks; keep it off the executor's workers.
        match tokio::task::spawn_blocking(move || workspace_files::read_file(&root, &path)).await {
            Ok(result) => result,
            Err(e) => Err(format!("read-file failed: {e}")),
        }
    }
}

/// `text` cut to [`MESSAGE_MAX_BYTES`] at a character boundary.
fn cut(mut text: String) -> String {
    if text.len() > MESSAGE_MAX_BYTES {
        let mut end = MESSAGE_MAX_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str(" [cut]");
    }
    text
}
