//! The palettes' rows as the message box changes (commands, prompt arguments and their
//! suggestions, resources and files) and what taking a row does.

use super::*;

impl App {
    pub(super) fn accept_entry(&mut self, kind: TokenKind, entry: &Entry, enter: bool) {
        let token = match (kind, self.composer.token_at_cursor()) {
            (TokenKind::Word, _) => None,
            (_, Some(token)) => Some(token),
            (_, None) => return,
        };
        let token = token.unwrap_or_else(|| crate::composer::Token {
            kind: TokenKind::Word,
            start: 0,
            end: 0,
            text: String::new(),
        });
        match Take::of(kind, entry, enter) {
            Take::Run => {
                self.composer.clear();
                self.submit(entry.insert.clone());
            }
            Take::Insert if kind == TokenKind::Word => {
                let Some(word) = self.composer.word_at_cursor() else {
                    return;
                };
                let with = match entry.kind {
                    EntryKind::Argument => entry.insert.clone(),
                    _ => format!("{} ", entry.insert),
                };
                self.composer.replace_token(&word, &with);
                self.update_palette();
            }
            Take::Insert => {
                self.composer
                    .replace_token(&token, &format!("{} ", entry.insert));
            }
            Take::InsertTemplate => {
                self.composer.replace_token(&token, &entry.insert);
            }
            Take::InsertPath => {
                self.composer
                    .replace_token(&token, &format!("@{} ", entry.insert));
            }
            Take::Attach => {
                self.composer.replace_token(&token, "");
                if let Some(server) = &entry.server {
                    let known = self
                        .attachments
                        .iter()
                        .any(|a| a.server == *server && a.uri == entry.insert);
                    if !known {
                        self.attachments.push(Attachment {
                            server: server.clone(),
                            uri: entry.insert.clone(),
                            reading: true,
                        });
                        self.send(
                            Operation::ReadResource {
                                server: server.clone(),
                                uri: entry.insert.clone(),
                            },
                            Purpose::Read(server.clone(), entry.insert.clone()),
                        );
                    }
                }
            }
        }
    }

    pub(super) fn update_palette(&mut self) {
        let Some(token) = self.composer.token_at_cursor() else {
            self.palette = self
                .argument_entries()
                .filter(|entries| !entries.is_empty())
                .map(|entries| (TokenKind::Word, Palette::new(entries, "")));
            return;
        };
        let query = token.text.trim_start_matches(['/', '@']).to_owned();
        if let Some((kind, palette)) = self.palette.as_mut()
            && *kind == token.kind
        {
            palette.filter(&query);
            return;
        }
        let entries = match token.kind {
            TokenKind::Slash => self.slash_entries(),
            TokenKind::At => self.resource_entries(),
            TokenKind::Word => Vec::new(),
        };
        self.palette = Some((token.kind, Palette::new(entries, &query)));
    }

    fn slash_entries(&self) -> Vec<Entry> {
        let mut entries = palette::command_entries();
        entries.extend(self.prompts.iter().map(|p| Entry {
            insert: p.command.clone(),
            description: p.prompt.description.clone().unwrap_or_default(),
            kind: EntryKind::Prompt,
            server: Some(p.server.clone()),
        }));
        entries.extend(self.skills.iter().map(|s| Entry {
            insert: format!("/{}", s.name),
            description: s.description.clone(),
            kind: EntryKind::Skill,
            server: None,
        }));
        entries
    }

    /// For the word at the cursor after a prompt command: the arguments not given yet, or
    /// the server's suggestions for the value being typed (`name=va…`; for a prompt of one
    /// argument, the word itself). Suggestions come from the cache; a miss asks the server
    /// (one request at a time, never waited for) and shows what arrives.
    fn argument_entries(&mut self) -> Option<Vec<Entry>> {
        let word = self.composer.word_at_cursor()?;
        let buffer = self.composer.buffer().to_owned();
        let command = buffer.split_whitespace().next()?.to_owned();
        if word.start == 0 || !command.starts_with(rho_core::host::PROMPT_COMMAND_PREFIX) {
            return None;
        }
        let prompt = self.prompts.iter().find(|p| p.command == command)?.clone();
        let arguments = &prompt.prompt.arguments;
        let (argument, value, prefix) = match (word.text.split_once('='), arguments.as_slice()) {
            (Some((name, value)), _) => (name.to_owned(), value.to_owned(), format!("{name}=")),
            (None, [only]) => (only.name.clone(), word.text.clone(), String::new()),
            (None, _) => {
                // Argument names not given yet.
                let given: Vec<&str> = buffer
                    .split_whitespace()
                    .filter_map(|w| w.split_once('=').map(|(k, _)| k))
                    .collect();
                return Some(
                    arguments
                        .iter()
                        .filter(|a| !given.contains(&a.name.as_str()))
                        .filter(|a| a.name.starts_with(&word.text))
                        .map(|a| Entry {
                            insert: format!("{}=", a.name),
                            description: format!(
                                "{}{}",
                                if a.required { "required · " } else { "" },
                                a.description.clone().unwrap_or_default()
                            ),
                            kind: EntryKind::Argument,
                            server: Some(prompt.server.clone()),
                        })
                        .collect(),
                );
            }
        };
        if !arguments.iter().any(|a| a.name == argument) {
            return None;
        }
        let key = (command.clone(), argument.clone(), value.clone());
        let Some(values) = self
            .completions
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
        else {
            if self.completing.is_none() {
                let others = buffer
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|w| w.split_once('='))
                    .filter(|(k, _)| *k != argument)
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect();
                self.completing = Some(key.clone());
                self.send(
                    Operation::Complete {
                        command,
                        argument,
                        value,
                        arguments: others,
                    },
                    Purpose::Completion(key),
                );
            }
            return Some(Vec::new());
        };
        Some(
            values
                .into_iter()
                .map(|v| Entry {
                    insert: format!("{prefix}{v}"),
                    description: format!("suggested by {}", prompt.server),
                    kind: EntryKind::Value,
                    server: Some(prompt.server.clone()),
                })
                .collect(),
        )
    }

    fn resource_entries(&self) -> Vec<Entry> {
        let files = self.workspace_files.iter().map(|path| Entry {
            insert: path.clone(),
            description: "file".to_owned(),
            kind: EntryKind::File,
            server: None,
        });
        self.resources
            .iter()
            .map(|(server, resource)| Entry {
                insert: resource.uri.clone(),
                description: format!("{server} · {}", resource.name),
                kind: if resource.template {
                    EntryKind::Template
                } else {
                    EntryKind::Resource
                },
                server: Some(server.clone()),
            })
            .chain(files)
            .collect()
    }
}
