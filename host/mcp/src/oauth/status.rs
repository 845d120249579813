//! An OAuth server's login state as `rho mcp list` shows it, from the credential store and the
//! configured address alone (no network, never the token).

use rho_component::McpServerSpec;
use rho_config::{CredentialStore, CredentialSummary};

use super::resource::{Binding, canonical_resource};

/// Where a server stands with its stored credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthState {
    /// A token is stored that has not expired (or whose lifetime the server did not say).
    LoggedIn {
        /// Seconds left, when the expiry is known.
        expires_in: Option<u64>,
    },
    /// The access token expired; it is refreshed on next use without asking.
    Expired,
    /// Nothing usable is stored: the next use needs `rho mcp login`.
    NeedsLogin,
    /// The stored login was issued for another address than the server's configured one (its
    /// URL was edited, or a plugin update moved it): never sent; `rho mcp login` replaces it.
    AddressChanged,
    /// The stored login names no address (an older rho saved it): never sent; `rho mcp login`
    /// replaces it.
    Unbound,
    /// The stored file cannot be used (corrupt, unsafe); the reason names the file.
    Unreadable(String),
}

impl AuthState {
    /// The state's name in `--json` output.
    pub fn name(&self) -> &'static str {
        match self {
            Self::LoggedIn { .. } => "logged_in",
            Self::Expired => "expired",
            Self::NeedsLogin => "needs_login",
            Self::AddressChanged => "address_changed",
            Self::Unbound => "unbound",
            Self::Unreadable(_) => "unreadable",
        }
    }
}

impl std::fmt::Display for AuthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LoggedIn { expires_in: None } => f.write_str("logged in"),
            Self::LoggedIn {
                expires_in: Some(left),
            } => write!(f, "logged in, expires in {}", duration(*left)),
            Self::Expired => f.write_str("logged in, token expired (refreshed on next use)"),
            Self::NeedsLogin => f.write_str("needs login"),
            Self::AddressChanged => write!(f, "login needed: {}", Binding::AddressChanged.reason()),
            Self::Unbound => write!(f, "login needed: {}", Binding::Unbound.reason()),
            Self::Unreadable(reason) => write!(f, "credentials unreadable: {reason}"),
        }
    }
}

/// The state in `store` at `now` (Unix seconds) of `spec`, an OAuth server (any other server
/// has nothing stored that could be used: [`AuthState::NeedsLogin`]).
pub fn auth_state(store: &CredentialStore, spec: &McpServerSpec, now: u64) -> AuthState {
    let Some(resource) =
        super::oauth_of(spec).and_then(|(http, _)| canonical_resource(&http.url).ok())
    else {
        return AuthState::NeedsLogin;
    };
    match store.load(&spec.id) {
        Ok(None) => AuthState::NeedsLogin,
        Ok(Some(credential)) if credential.token.is_null() => AuthState::NeedsLogin,
        Ok(Some(credential)) => {
            match Binding::of(credential.summary.resource.as_deref(), &resource) {
                Binding::Bound => state_of(&credential.summary, now),
                Binding::AddressChanged => AuthState::AddressChanged,
                Binding::Unbound => AuthState::Unbound,
            }
        }
        Err(e) => AuthState::Unreadable(e.to_string()),
    }
}

fn state_of(summary: &CredentialSummary, now: u64) -> AuthState {
    match summary.expires_at {
        None => AuthState::LoggedIn { expires_in: None },
        Some(at) if at > now => AuthState::LoggedIn {
            expires_in: Some(at - now),
        },
        Some(_) if summary.refreshable => AuthState::Expired,
        Some(_) => AuthState::NeedsLogin,
    }
}

/// `3h 5m`, `12m`, `40s`.
fn duration(seconds: u64) -> String {
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(expires_at: Option<u64>, refreshable: bool) -> CredentialSummary {
        CredentialSummary {
            resource: Some("https://mcp".into()),
            issuer: "https://as".into(),
            client_id: "c".into(),
            received_at: 0,
            expires_at,
            scopes: vec![],
            refreshable,
        }
    }

    #[test]
    fn states_follow_the_expiry_and_the_refresh_token() {
        assert_eq!(
            state_of(&summary(None, false), 100).to_string(),
            "logged in"
        );
        assert_eq!(
            state_of(&summary(Some(100 + 3 * 3600 + 300), false), 100).to_string(),
            "logged in, expires in 3h 5m"
        );
        assert_eq!(
            state_of(&summary(Some(140), true), 100).to_string(),
            "logged in, expires in 40s"
        );
        assert_eq!(state_of(&summary(Some(50), true), 100), AuthState::Expired);
        assert_eq!(
            state_of(&summary(Some(50), false), 100),
            AuthState::NeedsLogin
        );
        assert_eq!(duration(2 * 86_400 + 7200), "2d 2h");
    }

    fn oauth_server(url: &str) -> McpServerSpec {
        let mut spec = McpServerSpec::new(
            "remote",
            rho_component::McpServerOrigin::Config,
            rho_component::McpTransport::StreamableHttp(rho_component::HttpServerSpec {
                url: url.into(),
                headers: vec![],
                headers_from_env: vec![],
            }),
        );
        spec.oauth = Some(rho_component::OAuthSpec::default());
        spec
    }

    #[test]
    fn a_login_for_another_address_or_none_needs_a_new_login() {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialStore::new(dir.path().join("credentials"));
        let mut credential = rho_config::Credential {
            server: "remote".into(),
            summary: rho_config::CredentialSummary {
                resource: Some("http://127.0.0.1:4000/mcp".into()),
                issuer: "http://127.0.0.1:3999".into(),
                client_id: "c".into(),
                received_at: 100,
                expires_at: None,
                scopes: vec![],
                refreshable: false,
            },
            token: serde_json::json!({"access_token": "canary-31c9"}),
        };
        store.save(&credential).unwrap();
        let state = |url: &str| auth_state(&store, &oauth_server(url), 100);
        assert_eq!(
            state("HTTP://127.0.0.1:4000/mcp"),
            AuthState::LoggedIn { expires_in: None }
        );
        let moved = state("http://127.0.0.1:4001/mcp");
        assert_eq!(moved, AuthState::AddressChanged);
        assert_eq!(moved.name(), "address_changed");
        assert_eq!(
            moved.to_string(),
            "login needed: the server's address changed"
        );

        // A format 1 file, as an older rho wrote it.
        let path = store.file_of("remote").unwrap();
        let mut file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        file["format"] = 1.into();
        file.as_object_mut().unwrap().remove("resource");
        std::fs::write(&path, file.to_string()).unwrap();
        let older = state("http://127.0.0.1:4000/mcp");
        assert_eq!(older, AuthState::Unbound);
        assert!(older.to_string().contains("older rho"), "{older}");

        // Nothing to send: a credential without a token is not a login at all.
        credential.token = serde_json::Value::Null;
        store.save(&credential).unwrap();
        assert_eq!(state("http://127.0.0.1:4001/mcp"), AuthState::NeedsLogin);
    }
}
