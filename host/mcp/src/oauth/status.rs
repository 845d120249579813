//! An OAuth server's login state as `rho mcp list` shows it, from the credential store alone
//! (no network, never the token).

use rho_config::{CredentialStore, CredentialSummary};

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
            Self::Unreadable(reason) => write!(f, "credentials unreadable: {reason}"),
        }
    }
}

/// `server`'s state in `store` at `now` (Unix seconds).
pub fn auth_state(store: &CredentialStore, server: &str, now: u64) -> AuthState {
    match store.load(server) {
        Ok(None) => AuthState::NeedsLogin,
        Ok(Some(credential)) if credential.token.is_null() => AuthState::NeedsLogin,
        Ok(Some(credential)) => state_of(&credential.summary(), now),
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
}
