//! The client side of each connection: what rho declares in the handshake, what it answers when
//! a server asks (roots, forms, sampling) and what it does with a server's notifications (logs
//! into `tracing`, progress to the caller, list changes noted or re-listed).
// rmcp marks the logging, roots and sampling types deprecated (SEP-2577 deprecates them in the
// 2026-07-28 era), but 2025-11-25 servers still use all three, and rho answers them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData, Implementation,
    ListRootsResult, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::mpsc;

use crate::catalog::{Catalog, Listing};
use crate::options::Declared;
use crate::question_gate::QuestionGate;
use crate::questions::{Calls, Questions, Refusal};

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

/// rho's `ClientHandler`: declares what the session can answer (and nothing it would refuse),
/// identifies as `rho`, routes questions to the in-flight call they belong to, and re-lists
/// prompts and resources when the server says they changed.
#[derive(Clone)]
pub(crate) struct RhoClient {
    pub server: String,
    /// The version sent in `initialize` when the lifecycle is pinned to a legacy revision.
    pub protocol_version: ProtocolVersion,
    pub progress: ProgressRoutes,
    pub tools_changed: Arc<AtomicBool>,
    /// Its tools that need MCP tasks, as its transport read them from the listings.
    pub task_flags: crate::task_support::TaskFlags,
    pub questions: Questions,
    pub calls: Calls,
    pub catalog: Catalog,
    /// The URIs of `notifications/resources/updated`, for whoever subscribed through this
    /// connection (`rho mcp serve`).
    pub resource_updates: tokio::sync::broadcast::Sender<String>,
}

/// Resource updates a slow listener may fall behind by before it misses some.
const RESOURCE_UPDATE_BACKLOG: usize = 256;

impl RhoClient {
    pub fn new(
        server: &str,
        protocol_version: ProtocolVersion,
        declared: Declared,
        catalog: Catalog,
    ) -> Self {
        Self {
            server: server.to_owned(),
            protocol_version,
            progress: Arc::default(),
            tools_changed: Arc::default(),
            task_flags: crate::task_support::TaskFlags::default(),
            questions: Questions {
                server: server.to_owned(),
                declared,
                gate: QuestionGate::new(server),
            },
            calls: Calls::default(),
            catalog,
            resource_updates: tokio::sync::broadcast::channel(RESOURCE_UPDATE_BACKLOG).0,
        }
    }
}

/// rho's identity and capabilities in `initialize` (and in every modern request's metadata).
pub(crate) fn client_config(
    capabilities: ClientCapabilities,
    protocol_version: ProtocolVersion,
) -> ClientConfig {
    ClientConfig::new(
        capabilities,
        Implementation::new("rho", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(protocol_version)
}

impl ClientHandler for RhoClient {
    fn get_info(&self) -> ClientConfig {
        client_config(
            self.questions.declared.capabilities(),
            self.protocol_version.clone(),
        )
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        // A legacy request names no call: the one in flight, if any, may have roots of its own.
        let routed = self.calls.single();
        let roots = self.questions.roots(routed.as_deref().ok()).await;
        serde_json::from_value(roots).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let order = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => requested_schema.property_order.clone(),
            _ => None,
        };
        let params = serde_json::to_value(&request).unwrap_or_default();
        let routed = self.calls.single();
        let flight = routed.as_deref().map_err(|why| *why);
        let answer = self
            .questions
            .elicit(flight, &params, order.as_deref(), None, &context.ct)
            .await
            .map_err(|rejected| rejected.error())?;
        Ok(serde_json::from_value(answer)
            .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Decline)))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let routed = self.calls.single();
        let flight = routed.as_deref().map_err(|why| *why);
        let result = self
            .questions
            .sample(flight, &params, None, &context.ct)
            .await;
        match result {
            Ok(result) => serde_json::from_value(result)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            // Counted and logged by the gate, at a bounded rate.
            Err(Refusal::Rejected(rejected)) => Err(rejected.error()),
            Err(Refusal::Refused(why)) => {
                tracing::info!(target: "rho::mcp", server = self.server.as_str(), "sampling refused: {why}");
                // -1 is what the protocol's own examples use for a refused sampling request.
                Err(ErrorData::new(
                    ErrorCode(-1),
                    format!("sampling refused: {why}"),
                    None,
                ))
            }
        }
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
        // A message sent while one call runs goes to that call's asker too (a gateway passes
        // it to the client that made the call); a legacy message names no call.
        if let Ok(flight) = self.calls.single()
            && let Some(asker) = &flight.asker
        {
            let log = rho_component::ServerLog {
                level: crate::connection::rho_level(params.level),
                logger: params.logger,
                data: params.data,
            };
            asker.pass_log(server, &log);
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

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        tracing::info!(target: "rho::mcp", server = self.server.as_str(), "prompts/list_changed received");
        self.catalog.relist(context.peer, Listing::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Nobody listening is fine: nothing subscribed through this connection.
        let _ = self.resource_updates.send(params.uri);
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        tracing::info!(target: "rho::mcp", server = self.server.as_str(), "resources/list_changed received");
        self.catalog.relist(context.peer, Listing::Resources);
    }
}

/// A progress token as a map key.
pub(crate) fn progress_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}
