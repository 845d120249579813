//! What a session lets a connection declare ([`ClientOptions`]): the workspace root, whether a
//! person can answer forms, whether a model can answer sampling. rho declares only what it
//! would then answer (`docs/mcp.md`, "What rho declares").

use std::path::{Path, PathBuf};

use rho_component::{McpServerOrigin, McpServerSpec, SamplingPolicy};
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, FormElicitationCapability, RootsCapabilities,
    SamplingCapability,
};
use serde_json::{Value, json};

/// What the session behind a connection can answer. The default declares nothing: no roots,
/// no elicitation, no sampling (what `rho mcp list --connect` and automation runs use).
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// The session workspace, offered as the one `file://` root.
    pub roots: Option<PathBuf>,
    /// Whether a person can be shown a form (declares form-mode elicitation).
    pub elicitation: bool,
    /// Leave the server's prompts and resources unlisted at connect (a command that shows
    /// only tools, such as `rho mcp list --connect`); sessions list them.
    pub skip_offers: bool,
    /// Whether a model is bound to the run (declares sampling, for config servers that opted in
    /// with `sampling = "ask"` only).
    pub sampling: bool,
    /// Where OAuth servers' tokens are kept and whether a login may start; `None` fails every
    /// OAuth server that needs a token with the command that logs in.
    pub oauth: Option<crate::oauth::OAuthAccess>,
}

/// What one connection declared: derived once from the options and the server's spec.
#[derive(Debug, Clone, Default)]
pub(crate) struct Declared {
    /// The one root, as the JSON `roots/list` answers with.
    pub root: Option<Value>,
    pub elicitation: bool,
    pub sampling: bool,
}

impl ClientOptions {
    /// Whether a connection to `spec`'s server declares sampling: two gates, the config entry
    /// opted in (`sampling = "ask"`; plugin servers never can) and the run has a model.
    pub fn declares_sampling(&self, spec: &McpServerSpec) -> bool {
        self.sampling
            && spec.sampling == SamplingPolicy::Ask
            && spec.origin == McpServerOrigin::Config
    }
}

impl Declared {
    pub(crate) fn new(options: &ClientOptions, spec: &McpServerSpec) -> Self {
        Self {
            root: options.roots.as_deref().map(root),
            elicitation: options.elicitation,
            sampling: options.declares_sampling(spec),
        }
    }

    /// The capabilities for `initialize` and for every modern request's `_meta`.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.root.is_some() {
            // A session's workspace never changes, so rho never sends roots/list_changed.
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(false);
            capabilities.roots = Some(roots);
        }
        if self.elicitation {
            // Form mode only (rho opens no browser for URL mode). rho shows constraints as
            // help text and does not enforce them, hence `schemaValidation: false`.
            let mut elicitation = ElicitationCapability::default();
            elicitation.form = Some(FormElicitationCapability::new().with_schema_validation(false));
            capabilities.elicitation = Some(elicitation);
        }
        if self.sampling {
            // No sub-capabilities: tools and includeContext are not honoured.
            capabilities.sampling = Some(SamplingCapability::default());
        }
        capabilities
    }

    /// The answer to `roots/list`: the workspace, or nothing when no root was declared.
    pub(crate) fn roots_answer(&self) -> Value {
        json!({ "roots": self.root.iter().collect::<Vec<_>>() })
    }
}

/// The root of `workspace`: its `file://` URI and its directory name.
fn root(workspace: &Path) -> Value {
    let absolute = std::path::absolute(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| absolute.to_string_lossy().into_owned());
    json!({ "uri": file_uri(&absolute), "name": name })
}

/// `file://` plus the path's own bytes, percent-encoded (RFC 3986: everything but unreserved
/// characters and the separators a path keeps), so a path that is not UTF-8 names the same
/// directory (its text with U+FFFD would name none). A backslash is a separator only on
/// Windows; elsewhere it is a character of the name and is encoded.
pub(crate) fn file_uri(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    #[cfg(windows)]
    let bytes: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == b'\\' { b'/' } else { b })
        .collect();
    let mut uri = String::from("file://");
    if bytes.first() != Some(&b'/') {
        uri.push('/');
    }
    for &byte in bytes.iter() {
        match byte {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'.'
            | b'_'
            | b'~'
            | b'/'
            | b':'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'=' => uri.push(char::from(byte)),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rho_component::{McpTransport, StdioCommand, StdioServerSpec};

    use super::*;

    fn spec(sampling: SamplingPolicy, origin: McpServerOrigin) -> McpServerSpec {
        let mut spec = McpServerSpec::new(
            "s",
            origin,
            McpTransport::Stdio(StdioServerSpec {
                command: StdioCommand::Bare("x".into()),
                args: vec![],
                env: vec![],
                env_from_env: vec![],
                cwd: None,
            }),
        );
        spec.sampling = sampling;
        spec
    }

    fn declared(options: &ClientOptions, spec: &McpServerSpec) -> Value {
        serde_json::to_value(Declared::new(options, spec).capabilities()).unwrap()
    }

    #[test]
    fn nothing_is_declared_by_default() {
        let spec = spec(SamplingPolicy::Ask, McpServerOrigin::Config);
        assert_eq!(declared(&ClientOptions::default(), &spec), json!({}));
        assert_eq!(
            Declared::new(&ClientOptions::default(), &spec).roots_answer(),
            json!({"roots": []})
        );
    }

    #[test]
    fn everything_declared_has_the_documented_shape() {
        let options = ClientOptions {
            roots: Some("/home/me/my project".into()),
            elicitation: true,
            sampling: true,
            skip_offers: false,
            oauth: None,
        };
        let spec = spec(SamplingPolicy::Ask, McpServerOrigin::Config);
        assert_eq!(
            declared(&options, &spec),
            json!({
                "roots": {"listChanged": false},
                "elicitation": {"form": {"schemaValidation": false}},
                "sampling": {}
            })
        );
        assert_eq!(
            Declared::new(&options, &spec).roots_answer(),
            json!({"roots": [{"uri": "file:///home/me/my%20project", "name": "my project"}]})
        );
    }

    #[test]
    fn sampling_needs_both_gates_and_a_config_server() {
        let options = ClientOptions {
            sampling: true,
            ..ClientOptions::default()
        };
        let denied = spec(SamplingPolicy::Deny, McpServerOrigin::Config);
        assert_eq!(declared(&options, &denied), json!({}));
        let plugin = spec(
            SamplingPolicy::Ask,
            McpServerOrigin::Plugin {
                plugin: "p".into(),
                server: "s".into(),
                root: "/p".into(),
                data_dir: "/d".into(),
            },
        );
        assert_eq!(declared(&options, &plugin), json!({}));
        let no_model = spec(SamplingPolicy::Ask, McpServerOrigin::Config);
        assert_eq!(declared(&ClientOptions::default(), &no_model), json!({}));
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/a/b c/é#?%")),
            "file:///a/b%20c/%C3%A9%23%3F%25"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_keeps_its_bytes_in_its_uri() {
        use std::os::unix::ffi::OsStrExt;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/w/caf\xe9"));
        assert_eq!(file_uri(odd), "file:///w/caf%E9");
        assert_eq!(file_uri(Path::new("/w/a\\b")), "file:///w/a%5Cb");
    }
}
