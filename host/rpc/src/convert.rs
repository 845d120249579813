//! From engine values to wire values, and from session events to notification lines.

use rho_component::Diagnostic;
use rho_core::provider::{ChatMessage, Role, Usage};
use rho_core::session::{CallOutcome, CallRecord, ContextSnapshot, SessionEvent, TurnResult};

use crate::jsonrpc::notification_line;
use crate::wire::{
    AgentEndParams, AgentErrorParams, ApprovalRequestParams, CallRecordWire, ContextWire,
    DeltaParams, DiagnosticWire, MessageWire, OutcomeWire, StateChangeParams, ToolCallParams,
    ToolCallWire, ToolDeniedParams, ToolProgressParams, ToolResultParams, UsageParams, UsageWire,
};

pub(crate) fn usage(u: &Usage) -> UsageWire {
    UsageWire {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        total_tokens: u.total_tokens,
        total_cost: u.total_cost,
        request_count: u.request_count,
    }
}

pub(crate) fn context(c: &ContextSnapshot) -> ContextWire {
    ContextWire {
        tokens: c.tokens,
        window: c.window,
        percent: c.percent,
        messages: c.messages,
    }
}

pub(crate) fn message(m: &ChatMessage) -> MessageWire {
    MessageWire {
        role: match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
        .to_owned(),
        content: m.content.clone(),
        reasoning: (!m.reasoning.is_empty()).then(|| m.reasoning.clone()),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| ToolCallWire {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect(),
        tool_call_id: m.tool_call_id.clone(),
        name: m.name.clone(),
    }
}

pub(crate) fn diagnostic(d: &Diagnostic) -> DiagnosticWire {
    DiagnosticWire {
        severity: d.severity.as_str().to_owned(),
        code: d.code.as_str().to_owned(),
        message: d.message.clone(),
        component: d.component.clone(),
        path: d.path.clone(),
    }
}

fn call_record(c: &CallRecord) -> CallRecordWire {
    let (kind, message) = match &c.outcome {
        CallOutcome::Success => ("success", None),
        CallOutcome::Error { message } => ("error", Some(message.clone())),
        CallOutcome::Denied => ("denied", None),
        CallOutcome::Redirected => ("redirected", None),
        CallOutcome::Cancelled => ("cancelled", None),
    };
    CallRecordWire {
        name: c.name.clone(),
        arguments: c.arguments.clone(),
        outcome: OutcomeWire {
            kind: kind.to_owned(),
            message,
        },
        duration_ms: c.duration_ms,
    }
}

pub(crate) fn agent_end(t: &TurnResult) -> AgentEndParams {
    AgentEndParams {
        reply: t.reply.clone(),
        iterations: t.iterations,
        usage: usage(&t.usage),
        tool_calls: t.tool_calls.iter().map(call_record).collect(),
        duration_ms: t.duration_ms,
        finish_reason: t.finish_reason.clone(),
    }
}

/// The notification line for a session event.
pub(crate) fn event_line(event: &SessionEvent) -> String {
    match event {
        SessionEvent::AgentStart => notification_line::<()>("agent/start", None),
        SessionEvent::StateChange(state) => notification_line(
            "state/change",
            Some(&StateChangeParams {
                state: serde_json::to_value(state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            }),
        ),
        SessionEvent::MessageDelta(delta) => notification_line(
            "message/delta",
            Some(&DeltaParams {
                delta: delta.clone(),
            }),
        ),
        SessionEvent::ReasoningDelta(delta) => notification_line(
            "reasoning/delta",
            Some(&DeltaParams {
                delta: delta.clone(),
            }),
        ),
        SessionEvent::ToolCall {
            call_id,
            name,
            arguments,
        } => notification_line(
            "tool/call",
            Some(&ToolCallParams {
                call_id: call_id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            }),
        ),
        SessionEvent::ApprovalRequest {
            tool,
            arguments,
            risk,
        } => notification_line(
            "approval/request",
            Some(&ApprovalRequestParams {
                tool: tool.clone(),
                arguments: arguments.clone(),
                risk: risk.as_str().to_owned(),
            }),
        ),
        SessionEvent::ToolDenied { name } => notification_line(
            "tool/denied",
            Some(&ToolDeniedParams { name: name.clone() }),
        ),
        SessionEvent::ToolProgress {
            call_id,
            name,
            progress,
            total,
            message,
        } => notification_line(
            "tool/progress",
            Some(&ToolProgressParams {
                call_id: call_id.clone(),
                name: name.clone(),
                progress: *progress,
                total: *total,
                message: message.clone(),
            }),
        ),
        SessionEvent::ToolResult {
            call_id,
            name,
            is_error,
            output,
        } => notification_line(
            "tool/result",
            Some(&ToolResultParams {
                call_id: call_id.clone(),
                name: name.clone(),
                is_error: *is_error,
                output: output.clone(),
            }),
        ),
        SessionEvent::Usage {
            iteration,
            usage: u,
            context: c,
        } => notification_line(
            "usage",
            Some(&UsageParams {
                iteration: *iteration,
                usage: usage(u),
                context: context(c),
            }),
        ),
        SessionEvent::AgentEnd(turn) => notification_line("agent/end", Some(&agent_end(turn))),
        SessionEvent::AgentError(error) => notification_line(
            "agent/error",
            Some(&AgentErrorParams {
                error: error.clone(),
            }),
        ),
    }
}
