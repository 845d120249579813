//! Servers' prompts as slash commands (`/mcp:<server>:<prompt>`), their arguments as typed
//! after the command, and what an expanded prompt and attached resources make of a turn
//! (`docs/mcp.md`, "Prompts" and "Resources").
//!
//! A prompt with exactly one argument takes everything after the command as its value; a
//! prompt with several reads whitespace-separated `key=value` pairs (a value may be quoted to
//! hold spaces). A missing required argument, an unknown key or a stray word is an error that
//! names it, and no turn starts.

use std::collections::BTreeMap;

use rho_component::{PromptMessage, PromptRole, ResourceAttachment, ServerPrompt};

use super::operation::HostError;
use crate::provider::ImagePart;
use crate::session::PromptInput;

/// What starts a prompt command.
pub const PROMPT_COMMAND_PREFIX: &str = "/mcp:";

/// One server prompt, as a slash command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct PromptCommand {
    /// `/mcp:<server>:<prompt>`: a `prompt` whose message starts with it expands the prompt.
    pub command: String,
    /// The server identity.
    pub server: String,
    /// The prompt as the server declared it (its fields beside `command` and `server`).
    #[serde(flatten)]
    pub prompt: ServerPrompt,
}

impl PromptCommand {
    /// The command of `prompt` on `server`.
    pub fn new(server: &str, prompt: ServerPrompt) -> Self {
        Self {
            command: command_name(server, &prompt.name),
            server: server.to_owned(),
            prompt,
        }
    }
}

/// `/mcp:<server>:<prompt>`.
pub fn command_name(server: &str, prompt: &str) -> String {
    format!("{PROMPT_COMMAND_PREFIX}{server}:{prompt}")
}

/// `(server, prompt, the rest of the message)` when `message` starts with a prompt command.
/// Server identities never contain `:`, so the first `:` after the prefix ends the server.
pub fn split_command(message: &str) -> Option<(&str, &str, &str)> {
    let rest = message.trim_start().strip_prefix(PROMPT_COMMAND_PREFIX)?;
    let (command, arguments) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    let (server, prompt) = command.split_once(':')?;
    (!server.is_empty() && !prompt.is_empty()).then_some((server, prompt, arguments))
}

/// The arguments typed after `command` for `prompt`, checked against its declaration.
pub fn parse_arguments(
    command: &str,
    prompt: &ServerPrompt,
    text: &str,
) -> Result<BTreeMap<String, String>, HostError> {
    let mut values = BTreeMap::new();
    match prompt.arguments.as_slice() {
        [] if !text.is_empty() => {
            return Err(HostError::invalid_params(format!(
                "{command} takes no arguments"
            )));
        }
        [] => {}
        // One argument takes the whole rest: `key=value` for a single field is friction.
        [only] => {
            if !text.is_empty() {
                values.insert(only.name.clone(), text.to_owned());
            }
        }
        declared => {
            for (key, value) in pairs(command, text)? {
                if !declared.iter().any(|a| a.name == key) {
                    let known: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
                    return Err(HostError::invalid_params(format!(
                        "{command} has no argument {key:?} (it takes {})",
                        known.join(", ")
                    )));
                }
                values.insert(key, value);
            }
        }
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !values.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(HostError::invalid_params(format!(
            "{command} needs the argument{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    Ok(values)
}

/// Whitespace-separated `key=value` pairs; a value in double quotes may hold spaces.
fn pairs(command: &str, text: &str) -> Result<Vec<(String, String)>, HostError> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            let word = rest.split_whitespace().next().unwrap_or(rest);
            return Err(HostError::invalid_params(format!(
                "{command} takes key=value arguments; {word:?} is not one"
            )));
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            let word = key.split_whitespace().next().unwrap_or(key);
            return Err(HostError::invalid_params(format!(
                "{command} takes key=value arguments; {word:?} is not one"
            )));
        }
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => {
                    return Err(HostError::invalid_params(format!(
                        "{command}: the value of {key} has no closing quote"
                    )));
                }
            },
            None => match after.find(char::is_whitespace) {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            },
        };
        out.push((key.to_owned(), value.to_owned()));
        rest = next.trim_start();
    }
    Ok(out)
}

/// An expanded prompt as the text of one user turn: the user's messages as they are, and the
/// assistant's labelled, so the model reads them as prior context rather than as requests.
pub fn turn_text(messages: &[PromptMessage]) -> String {
    if let [only] = messages
        && only.role == PromptRole::User
    {
        return only.text.clone();
    }
    let mut text = String::new();
    for message in messages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        match message.role {
            PromptRole::User => text.push_str(&message.text),
            PromptRole::Assistant => {
                text.push_str("[The assistant said earlier, as part of this prompt]\n");
                text.push_str(&message.text);
            }
        }
    }
    text
}

/// Adds read resources to a turn: their text after the message, their image (at most one
/// each) as an image the model can look at.
pub fn attach(input: &mut PromptInput, attachments: Vec<ResourceAttachment>) {
    for attachment in attachments {
        if !input.text.is_empty() {
            input.text.push_str("\n\n");
        }
        input.text.push_str(&attachment.text);
        if let Some(image) = attachment.image {
            input.images.push(ImagePart {
                mime_type: image.mime_type,
                data: image.data,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rho_component::PromptArgument;

    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> ServerPrompt {
        ServerPrompt {
            name: "p".into(),
            title: None,
            description: None,
            arguments: arguments
                .iter()
                .map(|(name, required)| PromptArgument {
                    name: (*name).into(),
                    title: None,
                    description: None,
                    required: *required,
                })
                .collect(),
        }
    }

    #[test]
    fn commands_split_into_server_prompt_and_arguments() {
        assert_eq!(
            split_command("/mcp:docs:search how do sessions resume"),
            Some(("docs", "search", "how do sessions resume"))
        );
        assert_eq!(
            split_command("/mcp:web/fetch:get"),
            Some(("web/fetch", "get", ""))
        );
        assert_eq!(split_command("/mcp:docs"), None);
        assert_eq!(split_command("hello /mcp:a:b"), None);
        assert_eq!(split_command("/mcp::b"), None);
    }

    #[test]
    fn one_argument_takes_the_whole_rest() {
        let values = parse_arguments("/c", &prompt(&[("q", true)]), "a b=c  d").unwrap();
        assert_eq!(values["q"], "a b=c  d");
        let missing = parse_arguments("/c", &prompt(&[("q", true)]), "").unwrap_err();
        assert_eq!(missing.message, "/c needs the argument q");
    }

    #[test]
    fn several_arguments_read_key_value_pairs() {
        let declared = prompt(&[("id", true), ("severity", false), ("note", false)]);
        let values =
            parse_arguments("/c", &declared, r#"id=4821 severity=high note="two words""#).unwrap();
        assert_eq!(values["id"], "4821");
        assert_eq!(values["severity"], "high");
        assert_eq!(values["note"], "two words");
        let missing = parse_arguments("/c", &declared, "severity=high").unwrap_err();
        assert_eq!(missing.message, "/c needs the argument id");
        let unknown = parse_arguments("/c", &declared, "id=1 colour=red").unwrap_err();
        assert!(
            unknown.message.contains("\"colour\""),
            "{}",
            unknown.message
        );
        let stray = parse_arguments("/c", &declared, "id=1 oops").unwrap_err();
        assert!(stray.message.contains("\"oops\""), "{}", stray.message);
        let open = parse_arguments("/c", &declared, r#"id="1"#).unwrap_err();
        assert!(open.message.contains("closing quote"), "{}", open.message);
        let none = parse_arguments("/c", &prompt(&[]), "x").unwrap_err();
        assert_eq!(none.message, "/c takes no arguments");
    }

    #[test]
    fn assistant_messages_are_labelled() {
        let messages = [
            PromptMessage {
                role: PromptRole::User,
                text: "q".into(),
            },
            PromptMessage {
                role: PromptRole::Assistant,
                text: "a".into(),
            },
        ];
        assert_eq!(
            turn_text(&messages),
            "q\n\n[The assistant said earlier, as part of this prompt]\na"
        );
        assert_eq!(turn_text(&messages[..1]), "q");
    }
}
