//! Exported tool names, the one naming function of the registry: `<prefix><owner>__<tool>`
//! with rho's `_rho_` hex encoding (`docs/mcp.md`, "Tools") and the rule of model APIs that a
//! tool name is 1 to 64 characters of `[A-Za-z0-9_-]`. MCP tools are `mcp__<server>__<tool>`,
//! WASM tools `wasm__<plugin>__<tool>`; built-in names carry neither prefix, so the kinds never
//! collide.
//!
//! Routing never splits an exported name on `__`: [`ExportedNames`] keeps the table from each
//! exported name back to its owner and raw tool name, and guarantees that two different tools
//! never share an exported name.
//!
//! Exported names are for the model. People read [`display_name`] (`everything › get-env`):
//! the owner and the tool's own name, never hex (`docs/mcp.md`, "What people see").

use std::collections::BTreeMap;

/// The prefix of every exported MCP tool name.
pub const PREFIX: &str = "mcp__";
/// The prefix of every exported WASM tool name.
pub const WASM_PREFIX: &str = "wasm__";
/// Marks a hex-encoded name component.
pub const ENCODED_PREFIX: &str = "_rho_";
/// The longest name model APIs accept (`^[A-Za-z0-9_-]{1,64}$`).
pub const MAX_NAME_LEN: usize = 64;

/// Encodes one component: unchanged when it is only ASCII letters, digits and `_`, holds no
/// `__` and does not start with `_rho_`; otherwise `_rho_` and the lowercase hex of its UTF-8.
pub fn encode_component(component: &str) -> String {
    encode(component, false)
}

/// The encoding of WASM name components: like [`encode_component`], but `-` stays as it is
/// (model APIs accept it, and plugin names are kebab-case). The `__` separator stays
/// unambiguous because a component holding `__` is still encoded.
pub fn encode_wasm_component(component: &str) -> String {
    encode(component, true)
}

fn encode(component: &str, dash: bool) -> String {
    let plain = !component.is_empty()
        && component
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || (dash && b == b'-'))
        && !component.contains("__")
        && !component.starts_with(ENCODED_PREFIX);
    if plain {
        return component.to_owned();
    }
    let mut out = String::with_capacity(ENCODED_PREFIX.len() + component.len() * 2);
    out.push_str(ENCODED_PREFIX);
    for byte in component.bytes() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The full (possibly over-long) exported MCP name before shortening.
pub fn full_name(server: &str, tool: &str) -> String {
    prefixed_name(PREFIX, server, tool)
}

/// The full (possibly over-long) exported name with `prefix` before shortening.
pub fn prefixed_name(prefix: &str, owner: &str, tool: &str) -> String {
    let dash = prefix == WASM_PREFIX;
    format!("{prefix}{}__{}", encode(owner, dash), encode(tool, dash))
}

/// What separates a tool's owner from its own name where a person reads it.
pub const DISPLAY_SEPARATOR: &str = " › ";

/// The name a person reads for a tool: `<owner> › <tool>` for a tool with an owner (the MCP
/// server identity, the plugin of a WASM tool), the tool's own name for a built-in one. The one
/// rendering every front-end uses (`ToolSpec::display_name` goes through it); the exported name
/// is shown beside it, never instead of it. The result is raw text from a server or a package:
/// front-ends print it through [`crate::terminal_safe`].
pub fn display_name(owner: Option<&str>, tool: &str) -> String {
    match owner {
        Some(owner) => format!("{owner}{DISPLAY_SEPARATOR}{tool}"),
        None => tool.to_owned(),
    }
}

/// FNV-1a, 64-bit: small, stable across versions and platforms (a shortened name must not
/// change between releases).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// Shortens `name` to [`MAX_NAME_LEN`] deterministically: a prefix, `_`, and 16 hex digits of a
/// hash of the (owner, tool) pair (and `salt`, used only to resolve a collision). MCP names
/// hash exactly as they always did, so shortened names never change between releases.
fn shorten(prefix: &str, name: &str, server: &str, tool: &str, salt: u32) -> String {
    let salt = salt.to_string();
    let hash = if prefix == PREFIX {
        fnv1a(&[server, tool, &salt])
    } else {
        fnv1a(&[prefix, server, tool, &salt])
    };
    let suffix = format!("_{hash:016x}");
    let keep = MAX_NAME_LEN - suffix.len();
    let mut out: String = name.chars().take(keep).collect();
    out.push_str(&suffix);
    out
}

/// Where an exported name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportTarget {
    /// The name prefix (`mcp__`, `wasm__`).
    pub prefix: &'static str,
    /// The owner: the MCP server identity, or the plugin of a WASM tool.
    pub server: String,
    /// The server's own tool name, sent back unchanged on a call.
    pub tool: String,
}

/// The table of exported names of one registry (a session's tool set).
#[derive(Debug, Clone, Default)]
pub struct ExportedNames {
    by_name: BTreeMap<String, ExportTarget>,
}

impl ExportedNames {
    /// Assigns the exported name of MCP `tool` on `server`. The same pair always gets the
    /// same name; a pair whose natural name is taken by another pair gets a hash-suffixed one.
    pub fn assign(&mut self, server: &str, tool: &str) -> String {
        self.assign_with(PREFIX, server, tool)
    }

    /// [`ExportedNames::assign`] for any kind of tool: `prefix` is [`PREFIX`] or
    /// [`WASM_PREFIX`], `owner` the server or plugin.
    pub fn assign_with(&mut self, prefix: &'static str, server: &str, tool: &str) -> String {
        let target = ExportTarget {
            prefix,
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        let natural = prefixed_name(prefix, server, tool);
        let mut candidate = if natural.len() <= MAX_NAME_LEN {
            natural.clone()
        } else {
            shorten(prefix, &natural, server, tool, 0)
        };
        let mut salt = 0;
        loop {
            match self.by_name.get(&candidate) {
                None => {
                    self.by_name.insert(candidate.clone(), target);
                    return candidate;
                }
                Some(existing) if *existing == target => return candidate,
                Some(_) => {
                    salt += 1;
                    candidate = shorten(prefix, &natural, server, tool, salt);
                }
            }
        }
    }

    /// Where an exported name leads.
    pub fn resolve(&self, exported: &str) -> Option<&ExportTarget> {
        self.by_name.get(exported)
    }

    /// Every exported name and its target, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ExportTarget)> {
        self.by_name.iter().map(|(k, v)| (k.as_str(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn encoding_follows_the_spec() {
        assert_eq!(
            full_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(encode_component("a__b"), "_rho_615f5f62");
        assert_eq!(encode_component("get-sum"), "_rho_6765742d73756d");
        assert_eq!(encode_component("_rho_x"), "_rho_5f72686f5f78");
        assert_eq!(encode_component("é"), "_rho_c3a9");
        assert_eq!(encode_component(""), "_rho_");
        assert_eq!(full_name("pl/srv", "t"), "mcp___rho_706c2f737276__t");
        // Distinct inputs stay distinct.
        assert_ne!(full_name("a.b", "c"), full_name("a_b", "c"));
    }

    #[test]
    fn people_read_the_owner_and_the_tools_own_name() {
        assert_eq!(
            display_name(Some("everything"), "get-env"),
            "everything › get-env"
        );
        assert_eq!(display_name(Some("pl/srv"), "a__b"), "pl/srv › a__b");
        assert_eq!(display_name(None, "read_file"), "read_file");
    }

    #[test]
    fn long_and_colliding_names_are_shortened_deterministically() {
        let mut names = ExportedNames::default();
        let long_tool = "t".repeat(300);
        let a = names.assign("server", &long_tool);
        assert!(valid(&a) && a.len() == MAX_NAME_LEN, "{a}");
        assert_eq!(names.assign("server", &long_tool), a, "stable");
        let mut again = ExportedNames::default();
        assert_eq!(
            again.assign("server", &long_tool),
            a,
            "deterministic across tables"
        );
        // `x_` + `__` + `y` and `x` + `__` + `_y` have the same natural name.
        let first = names.assign("x_", "y");
        let second = names.assign("x", "_y");
        assert_eq!(first, "mcp__x___y");
        assert_ne!(first, second);
        assert!(valid(&second));
        assert_eq!(names.resolve(&second).unwrap().tool, "_y");
        assert_eq!(names.resolve(&first).unwrap().server, "x_");
        for (name, _) in names.iter() {
            assert!(valid(name), "{name}");
        }
    }

    #[test]
    fn wasm_names_have_their_own_prefix_and_never_meet_mcp_names() {
        let mut names = ExportedNames::default();
        let wasm = names.assign_with(WASM_PREFIX, "data-tools", "convert");
        assert_eq!(wasm, "wasm__data-tools__convert");
        assert_eq!(
            names.assign_with(WASM_PREFIX, "p", "a__b"),
            "wasm__p___rho_615f5f62"
        );
        let mcp = names.assign("data-tools", "convert");
        assert_ne!(wasm, mcp);
        assert_eq!(names.resolve(&wasm).unwrap().prefix, WASM_PREFIX);
        let long = names.assign_with(WASM_PREFIX, "p", &"t".repeat(100));
        assert!(valid(&long) && long.starts_with("wasm__p__"), "{long}");
    }
}
