//! The client side of each connection: what rho declares in the handshake and what it does with
//! a server's notifications (logs into `tracing`, progress to the caller, list changes noted).
// rmcp marks the logging types deprecated (SEP-2577 drops logging from the 2026-07-28 era), but
// 2025-11-25 servers still send `notifications/message`, and rho routes them into tracing.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

/// One progress report of a running call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How far along (server units).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A message, when the server sends one.
    pub message: Option<String>,
}

/// Progress sinks by progress token: only live calls are registered, so late progress for a
/// finished call is dropped.
pub(crate) type ProgressRoutes = Arc<Mutex<HashMap<String, mpsc::Sender<Progress>>>>;

/// rho's `ClientHandler`: declares no capability it would refuse, identifies as `rho`.
#[derive(Clone)]
pub(crate) struct RhoClient {
    pub server: String,
    /// The version sent in `initialize` when the lifecycle is pinned to a legacy revision.
    pub protocol_version: ProtocolVersion,
    pub progress: ProgressRoutes,
    pub tools_changed: Arc<AtomicBool>,
}

impl RhoClient {
    pub fn new(server: &str, protocol_version: ProtocolVersion) -> Self {
        Self {
            server: server.to_owned(),
            protocol_version,
            progress: Arc::default(),
            tools_changed: Arc::default(),
        }
    }
}

/// rho's identity in `initialize` (and in every modern request's metadata).
pub(crate) fn client_config(protocol_version: ProtocolVersion) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("rho", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(protocol_version)
}

impl ClientHandler for RhoClient {
    fn get_info(&self) -> ClientConfig {
        client_config(self.protocol_version.clone())
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let logger = params.logger.as_deref().unwrap_or("");
        let data = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let server = self.server.as_str();
        // Severities above error map onto error.
        match params.level {
            LoggingLevel::Debug => {
                tracing::debug!(target: "rho::mcp::server", server, logger, "{data}")
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(target: "rho::mcp::server", server, logger, "{data}")
            }
            LoggingLevel::Warning => {
                tracing::warn!(target: "rho::mcp::server", server, logger, "{data}")
            }
            _ => tracing::error!(target: "rho::mcp::server", server, logger, "{data}"),
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = progress_key(&params.progress_token);
        let sender = self
            .progress
            .lock()
            .ok()
            .and_then(|routes| routes.get(&token).cloned());
        if let Some(sender) = sender {
            // A full channel drops the report rather than stall the connection.
            let _ = sender.try_send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Relaxed);
        tracing::info!(target: "rho::mcp", server = self.server.as_str(), "tools/list_changed received");
    }
}

/// A progress token as a map key.
pub(crate) fn progress_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}
