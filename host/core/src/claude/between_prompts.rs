//! What a Claude runtime does between prompts: switch Claude's model (its `set_model`
//! control request to a running `claude`, `--model` for later starts) and compact Claude's
//! conversation (Claude's own `/compact`).

use rho_component::CancelSignal;

use super::process::ClaudeProcess;
use super::{ClaudeError, ClaudeRuntime, next_line, stream, user_message};

/// The longest model name passed to Claude.
pub(super) const MAX_MODEL_NAME: usize = 128;

/// How long rho waits for Claude to answer a request of its own while no turn runs.
const CONTROL_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

impl ClaudeRuntime {
    /// Switches Claude to `model` (`setModel`): a running `claude` is told at once (its
    /// `set_model` control request; Claude checks the name), and every later start passes
    /// `--model`. Called between prompts.
    pub async fn set_model(&mut self, model: &str) -> Result<(), ClaudeError> {
        let printable = |c: char| !c.is_control() && !c.is_whitespace();
        if model.is_empty()
            || model.chars().count() > MAX_MODEL_NAME
            || !model.chars().all(printable)
        {
            return Err(ClaudeError::BadModel {
                model: model.chars().take(MAX_MODEL_NAME).collect(),
            });
        }
        if let Some(process) = self.process.as_mut() {
            // An id of its own each time: a late answer to an earlier switch is not this one's.
            static SWITCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = SWITCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let id = format!("rho-set-model-{n}");
            let request = serde_json::json!({
                "type": "control_request",
                "request_id": id,
                "request": {"subtype": "set_model", "model": model},
            });
            process.send(&request.to_string()).await?;
            let answered = tokio::time::timeout(CONTROL_WAIT, control_answer(process, &id))
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {} s", CONTROL_WAIT.as_secs())));
            if let Err(message) = answered {
                return Err(self.hide_secrets(ClaudeError::Refused {
                    doing: "switching models",
                    message,
                }));
            }
        }
        self.settings.model = Some(model.to_owned());
        self.model = Some(model.to_owned());
        Ok(())
    }

    /// Compacts Claude's conversation (`compact`: Claude's own `/compact`, which summarizes
    /// the session in Claude's session). Returns Claude's summary as it continues from it;
    /// `cancel` stops the process. With no Claude session yet there is nothing to compact.
    pub async fn compact(&mut self, cancel: &CancelSignal) -> Result<String, ClaudeError> {
        if self.session_id.is_none() {
            return Err(ClaudeError::Refused {
                doing: "compacting",
                message: "there is no Claude conversation yet".into(),
            });
        }
        let compacted = tokio::select! {
            compacted = self.run_compact() => compacted,
            () = cancel.cancelled() => Err(ClaudeError::Refused {
                doing: "compacting",
                message: "cancelled".into(),
            }),
        };
        if compacted.is_err()
            && let Some(process) = self.process.take()
        {
            process.stop().await;
        }
        compacted.map_err(|error| self.hide_secrets(error))
    }

    async fn run_compact(&mut self) -> Result<String, ClaudeError> {
        let process = self.ensure_started()?;
        process.send(&user_message("/compact").to_string()).await?;
        let mut summary = String::new();
        loop {
            let line = next_line(process).await?;
            let value: serde_json::Value =
                serde_json::from_slice(&line).map_err(|e| ClaudeError::Malformed {
                    reason: e.to_string(),
                })?;
            match value.get("type").and_then(serde_json::Value::as_str) {
                // The summary Claude continues from comes as a user message of its own.
                Some("user")
                    if value.get("isReplay").and_then(serde_json::Value::as_bool) != Some(true) =>
                {
                    summary = stream::message_text(&value);
                }
                Some("result") => {
                    if value.get("is_error").and_then(serde_json::Value::as_bool) == Some(true) {
                        let message = value
                            .get("result")
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or("compaction failed")
                            .to_owned();
                        return Err(ClaudeError::Turn { message });
                    }
                    return Ok(summary);
                }
                _ => {}
            }
        }
    }
}

/// Reads Claude's output until its answer to control request `id` (Claude is idle: only
/// status lines and echoes come first): `Ok` on success, Claude's error otherwise.
async fn control_answer(process: &mut ClaudeProcess, id: &str) -> Result<(), String> {
    loop {
        let line = next_line(process).await.map_err(|e| e.to_string())?;
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        let response = &value["response"];
        if value["type"] != "control_response" || response["request_id"] != id {
            continue;
        }
        if response["subtype"] == "success" {
            return Ok(());
        }
        return Err(response["error"]
            .as_str()
            .unwrap_or("Claude refused it")
            .to_owned());
    }
}
