//! From host values to wire values, and from session events to notification lines.

use rho_component::{ToolOrigin, ToolSpec};
use rho_core::host::{Extensions, ModelEntry, ProviderReport};
use rho_core::provider::ChatMessage;
use rho_core::session::{SessionEvent, SessionStats};

use crate::jsonrpc::notification_line;
use crate::methods::Notification;
use crate::wire::{
    AgentErrorParams, DeltaParams, DoctorResult, ExtensionsResult, MessageWire, ModelsResult,
    PluginWire, ProviderProblem, ProviderWire, ProvidersResult, ServerToolWire, ServerWire,
    SkillWire, StateChangeParams, StatsResult, ToolWire, UsageByPurposeWire,
};

pub(crate) fn message(m: &ChatMessage) -> MessageWire {
    MessageWire {
        role: m.role,
        content: m.content.clone(),
        reasoning: (!m.reasoning.is_empty()).then(|| m.reasoning.clone()),
        tool_calls: m.tool_calls.clone(),
        tool_call_id: m.tool_call_id.clone(),
        name: m.name.clone(),
    }
}

/// The notification line for a session event.
pub(crate) fn event_line(event: &SessionEvent) -> String {
    match event {
        SessionEvent::AgentStart => notification_line::<()>(Notification::AgentStart.name(), None),
        SessionEvent::StateChange(state) => notification_line(
            Notification::StateChange.name(),
            Some(&StateChangeParams { state: *state }),
        ),
        SessionEvent::MessageDelta(delta) => notification_line(
            Notification::MessageDelta.name(),
            Some(&DeltaParams {
                delta: delta.clone(),
            }),
        ),
        SessionEvent::ReasoningDelta(delta) => notification_line(
            Notification::ReasoningDelta.name(),
            Some(&DeltaParams {
                delta: delta.clone(),
            }),
        ),
        SessionEvent::ToolCall(call) => {
            notification_line(Notification::ToolCall.name(), Some(call))
        }
        SessionEvent::ApprovalRequest(ask) => {
            notification_line(Notification::ApprovalRequest.name(), Some(ask))
        }
        SessionEvent::ToolDenied(denial) => {
            notification_line(Notification::ToolDenied.name(), Some(denial))
        }
        SessionEvent::ToolProgress(progress) => {
            notification_line(Notification::ToolProgress.name(), Some(progress))
        }
        SessionEvent::ToolResult(result) => {
            notification_line(Notification::ToolResult.name(), Some(result))
        }
        SessionEvent::Usage(report) => notification_line(Notification::Usage.name(), Some(report)),
        SessionEvent::AgentEnd(turn) => {
            notification_line(Notification::AgentEnd.name(), Some(turn))
        }
        SessionEvent::AgentError(error) => notification_line(
            Notification::AgentError.name(),
            Some(&AgentErrorParams {
                error: error.clone(),
            }),
        ),
        SessionEvent::Question(question) => {
            notification_line(Notification::QuestionRequest.name(), Some(question))
        }
        SessionEvent::Notice(notice) => {
            notification_line(Notification::Notice.name(), Some(notice))
        }
        SessionEvent::ServerRestart(restart) => {
            notification_line(Notification::ServerRestart.name(), Some(restart))
        }
        SessionEvent::ToolsChanged(changed) => {
            notification_line(Notification::ToolsChanged.name(), Some(changed))
        }
        SessionEvent::ToolsetInitialized(toolset) => {
            notification_line(Notification::ToolsetInitialized.name(), Some(toolset))
        }
        SessionEvent::ToolsetClosed(toolset) => {
            notification_line(Notification::ToolsetClosed.name(), Some(toolset))
        }
        SessionEvent::ToolsetChanged(changed) => {
            notification_line(Notification::ToolsetChanged.name(), Some(changed))
        }
    }
}

pub(crate) fn models(models: Vec<ModelEntry>, errors: Vec<(String, String)>) -> ModelsResult {
    ModelsResult {
        models,
        errors: errors
            .into_iter()
            .map(|(provider, error)| ProviderProblem { provider, error })
            .collect(),
    }
}

pub(crate) fn providers(providers: Vec<ProviderReport>) -> ProvidersResult {
    ProvidersResult {
        providers: providers
            .into_iter()
            .map(|p| ProviderWire {
                id: p.id,
                source: p.source,
                endpoint: p.endpoint,
                external: p.external,
                default_model: p.default_model,
                reachable: p.error.is_none(),
                error: p.error,
                active: p.active,
            })
            .collect(),
    }
}

pub(crate) fn stats(s: &SessionStats) -> StatsResult {
    StatsResult {
        session_id: s.session_id.clone(),
        session_file: s.session_file.clone(),
        usage: s.usage,
        usage_by_purpose: UsageByPurposeWire {
            turns: s.usage,
            mcp_sampling: s.sampling_usage,
        },
        context: s.context,
        messages: s.messages,
    }
}

pub(crate) fn extensions(e: Extensions) -> ExtensionsResult {
    ExtensionsResult {
        plugins: e
            .plugins
            .into_iter()
            .map(|p| PluginWire {
                name: p.name,
                scope: p.scope,
                status: p.status,
                path: p.path,
            })
            .collect(),
        skills: e
            .skills
            .iter()
            .map(|s| SkillWire {
                name: s.name.clone(),
                description: s.description.clone(),
                source: (&s.source).into(),
                plugin: s.source.plugin().map(str::to_owned),
            })
            .collect(),
        servers: e
            .servers
            .iter()
            .map(|s| {
                let status = s.status();
                let tools = s.tools();
                let health = s.health();
                ServerWire {
                    id: s.id.clone(),
                    source: s.source,
                    plugin: s.plugin.clone(),
                    status: (&status).into(),
                    error: status.error().map(str::to_owned),
                    not_loaded: status.not_loaded().map(|r| r.as_str().to_owned()),
                    protocol_version: s.protocol_version(),
                    tools: tools.iter().map(|t| t.name.clone()).collect(),
                    tool_details: tools
                        .iter()
                        .map(|t| ServerToolWire {
                            name: t.name.clone(),
                            tool: t.tool.clone(),
                            display_name: t.display_name(&s.id),
                            needs_tasks: t.needs_tasks,
                        })
                        .collect(),
                    added_tools: s.added_tools(),
                    ping_failure: health.ping_failure,
                    restarts: health.restarts,
                    last_restart: health.last_restart,
                    questions_rejected: s.rejected_questions(),
                    auth: e.auth.get(&s.id).cloned(),
                    digest: s.toolset().map(|t| t.digest),
                }
            })
            .collect(),
        tools: e.tools,
        diagnostics: e.diagnostics.clone(),
        context: e.context,
    }
}

pub(crate) fn tool(spec: &ToolSpec) -> ToolWire {
    let (server, plugin) = match &spec.origin {
        ToolOrigin::Mcp { server, plugin, .. } => (Some(server.clone()), plugin.clone()),
        ToolOrigin::Wasm { plugin, .. } => (None, Some(plugin.clone())),
        ToolOrigin::Builtin => (None, None),
    };
    ToolWire {
        name: spec.name.clone(),
        tool: spec.own_name().to_owned(),
        display_name: spec.display_name(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        input_schema: spec.input_schema.clone(),
        risk: spec.risk,
        source: (&spec.origin).into(),
        server,
        plugin,
    }
}

pub(crate) fn doctor(checks: Vec<rho_core::doctor::Check>) -> DoctorResult {
    DoctorResult {
        ok: !checks
            .iter()
            .any(|c| c.status == rho_core::doctor::CheckStatus::Error),
        checks,
    }
}
