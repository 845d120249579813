//! The text of the reporting commands (`/help`, `/mcp`, `/doctor`, `/plugins`, `/skills`,
//! `/tools`), built from what the host reports; shown as notices in the conversation.

use rho_component::{ServerResource, ToolSpec, Transport};
use rho_core::ToolSearch;
use rho_core::doctor::Check;
use rho_core::host::{Extensions, PromptCommand};
use rho_core::session::{ContextBudget, OwnerBudget, ToolBudget};

use crate::palette::COMMANDS;
use crate::text::width_of;

/// `/help`: the keys and the commands.
pub fn help() -> String {
    let mut text = String::from(
        "keys: enter send · ctrl+j or shift+enter newline · ↑/↓ history · / commands · \
         @ resources · pgup/pgdn scroll, ctrl+end back to the newest · ctrl+o expand results · \
         ctrl+r show reasoning · esc esc stop a turn · ctrl+c clear, stop, or twice to quit · \
         ctrl+d quit on an empty line\ncommands:",
    );
    let rows: Vec<Vec<String>> = COMMANDS
        .iter()
        .map(|(name, what)| vec![(*name).to_owned(), (*what).to_owned()])
        .collect();
    text.push('\n');
    text.push_str(&table(&rows));
    text
}

/// `1234` as `1.2k`.
pub(crate) fn tokens(count: u64) -> String {
    if count >= 1000 {
        format!("{:.1}k", count as f64 / 1000.0)
    } else {
        count.to_string()
    }
}

/// The tool search in one line: whether definitions wait behind it and what they cost.
fn tool_search_line(budget: &ToolBudget) -> String {
    let mode = match budget.mode {
        ToolSearch::Auto => format!("auto, past {} tokens", tokens(budget.budget_tokens)),
        ToolSearch::Always => "always".to_owned(),
        ToolSearch::Never => "never".to_owned(),
    };
    if budget.deferring {
        format!(
            "tool search: on ({mode}): the next request sends ≈{} of ≈{} tokens of tool definitions",
            tokens(budget.sent_tokens),
            tokens(budget.all_tokens)
        )
    } else {
        format!(
            "tool search: off ({mode}): every tool definition is sent, ≈{} tokens",
            tokens(budget.all_tokens)
        )
    }
}

/// What a server's definitions cost and how many wait behind the tool search.
fn server_budget_line(budget: &OwnerBudget) -> String {
    let mut line = format!(
        "definitions: ≈{} tokens for {} tool{}",
        tokens(budget.tokens),
        budget.tools,
        if budget.tools == 1 { "" } else { "s" }
    );
    if budget.waiting > 0 || budget.loaded > 0 {
        line.push_str(&format!(
            "; {} waiting behind tool_search, {} loaded",
            budget.waiting, budget.loaded
        ));
    }
    line
}

/// `/context`: what the next model request costs the context, by part.
pub fn context(context: &ContextBudget) -> String {
    let tools = &context.tools;
    let total = context.system_tokens + tools.sent_tokens + context.conversation_tokens;
    let window = if tools.window_known {
        format!("{} tokens", tokens(tools.context_window))
    } else {
        format!(
            "{} tokens (assumed: the model's is not known)",
            tokens(tools.context_window)
        )
    };
    let waiting: usize = tools.owners.values().map(|o| o.waiting).sum();
    let held = if tools.deferring {
        format!(
            " (of ≈{}; {waiting} tool{} wait behind tool_search)",
            tokens(tools.all_tokens),
            if waiting == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    #[allow(clippy::cast_precision_loss)] // a percentage for display
    let share = if tools.context_window > 0 {
        format!(
            " ({:.0}% of the window)",
            total as f64 / tools.context_window as f64 * 100.0
        )
    } else {
        String::new()
    };
    let rows = vec![
        vec![
            "system prompt".to_owned(),
            format!("≈{}", tokens(context.system_tokens)),
        ],
        vec![
            "tool definitions".to_owned(),
            format!("≈{}{held}", tokens(tools.sent_tokens)),
        ],
        vec![
            "conversation".to_owned(),
            format!("≈{}", tokens(context.conversation_tokens)),
        ],
        vec![
            "next request".to_owned(),
            format!("≈{}{share}", tokens(total)),
        ],
    ];
    let mut text = format!("context (estimates, about 4 bytes a token), window {window}:");
    for line in table(&rows).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    text.push('\n');
    text.push_str(&tool_search_line(tools));
    text
}

/// `/mcp`: every server entry with its transport, status, error, restarts, rejected questions,
/// whether its tools changed since the resumed session last ran, what its tool definitions
/// cost, tools, prompts and resources.
pub fn mcp(
    extensions: &Extensions,
    prompts: &[PromptCommand],
    resources: &[(String, ServerResource)],
) -> String {
    if extensions.servers.is_empty() {
        return "no MCP server is configured (rho mcp add, or a plugin's mcp.json)".to_owned();
    }
    let mut text = String::from("MCP servers:");
    text.push_str(&format!(
        "\n{}",
        tool_search_line(&extensions.context.tools)
    ));
    for server in &extensions.servers {
        let status = server.status();
        let health = server.health();
        text.push_str(&format!(
            "\n{}  {}  {}",
            server.id,
            server.transport.map_or("-", Transport::as_str),
            status.label()
        ));
        let detail = match &status {
            rho_core::ServerStatus::Failed(e)
            | rho_core::ServerStatus::Invalid(e)
            | rho_core::ServerStatus::Untrusted(e) => Some(e.clone()),
            _ => None,
        };
        if let Some(detail) = detail {
            text.push_str(&format!("\n    error: {detail}"));
        }
        if health.restarts > 0 {
            let s = if health.restarts == 1 { "" } else { "s" };
            let why = health
                .last_restart
                .as_deref()
                .map(|r| format!(" (last: {r})"))
                .unwrap_or_default();
            text.push_str(&format!(
                "\n    started again {} time{s}{why}",
                health.restarts
            ));
        }
        let rejected = server.rejected_questions();
        if rejected > 0 {
            let s = if rejected == 1 { "" } else { "s" };
            text.push_str(&format!(
                "\n    {rejected} question{s} rejected: more than one open and {} waiting at once",
                rho_core::MAX_QUEUED_QUESTIONS
            ));
        }
        if let Some(ping) = &health.ping_failure {
            text.push_str(&format!("\n    last ping failed: {ping}"));
        }
        if let Some(changed) = server.digest_changed() {
            text.push_str(&format!(
                "\n    tools changed since this session last ran (digest {} → {})",
                changed.previous, changed.current
            ));
        }
        if let Some(auth) = extensions.auth.get(&server.id) {
            text.push_str(&format!("\n    oauth: {auth}"));
        }
        if let Some(budget) = extensions.context.tools.owners.get(&server.id) {
            text.push_str(&format!("\n    {}", server_budget_line(budget)));
        }
        let tools = server.tools();
        if !tools.is_empty() {
            // What people read first, the exported name the model calls second.
            let rows: Vec<Vec<String>> = tools
                .iter()
                .map(|t| {
                    let mut row = vec![t.display_name(&server.id), t.name.clone()];
                    if t.needs_tasks {
                        row.push(rho_core::NEEDS_TASKS_MARK.to_owned());
                    }
                    row
                })
                .collect();
            text.push_str("\n    tools:");
            for line in table(&rows).lines() {
                text.push_str(&format!("\n    {line}"));
            }
        }
        let added = server.added_tools();
        if !added.is_empty() {
            text.push_str(&format!(
                "\n    added since the session started: {}",
                added.join(", ")
            ));
        }
        let offered: Vec<&str> = prompts
            .iter()
            .filter(|p| p.server == server.id)
            .map(|p| p.command.as_str())
            .collect();
        if !offered.is_empty() {
            text.push_str(&format!("\n    prompts: {}", offered.join(", ")));
        }
        let count = resources.iter().filter(|(s, _)| *s == server.id).count();
        if count > 0 {
            text.push_str(&format!("\n    resources: {count} (type @ to attach)"));
        }
    }
    text
}

/// `/doctor`: the rows of `rho doctor` (`rho_core::doctor`), with the session's servers.
pub fn doctor(checks: &[Check]) -> String {
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            vec![
                c.check.as_str().to_owned(),
                c.status.as_str().to_owned(),
                c.detail.clone(),
            ]
        })
        .collect();
    format!("doctor:\n{}", table(&rows))
}

/// `/plugins`.
pub fn plugins(extensions: &Extensions) -> String {
    if extensions.plugins.is_empty() {
        return "no plugin is installed (rho plugins install <path>)".to_owned();
    }
    let rows: Vec<Vec<String>> = extensions
        .plugins
        .iter()
        .map(|p| {
            vec![
                p.name.clone(),
                p.scope.as_str().to_owned(),
                p.status.as_str().to_owned(),
                p.path.display().to_string(),
            ]
        })
        .collect();
    format!("plugins:\n{}", table(&rows))
}

/// `/skills`.
pub fn skills(extensions: &Extensions) -> String {
    if extensions.skills.is_empty() {
        return "no skill is available".to_owned();
    }
    let rows: Vec<Vec<String>> = extensions
        .skills
        .iter()
        .map(|s| vec![s.name.clone(), s.description.clone()])
        .collect();
    format!("skills:\n{}", table(&rows))
}

/// `/tools`: each tool as people read it, then the exported name the model calls, in the
/// order of what people read.
pub fn tools<'a>(tools: impl Iterator<Item = &'a ToolSpec>) -> String {
    let mut rows: Vec<Vec<String>> = tools
        .map(|t| {
            vec![
                t.display_name(),
                t.name.clone(),
                t.risk.as_str().to_owned(),
                t.description.lines().next().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return "no tool is available in this session".to_owned();
    }
    rows.sort();
    format!("tools:\n{}", table(&rows))
}

/// Rows with their columns padded to the widest cell (the last column is not padded).
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| width_of(cell))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = Vec::new();
    for row in rows {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths.get(c).copied().unwrap_or(0) - width_of(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push(line);
    }
    out.join("\n")
}
