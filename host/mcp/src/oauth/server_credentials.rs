//! One server's slot in rho's credential store (`rho_config::CredentialStore`, `docs/credentials.md`),
//! as rmcp's [`CredentialStore`] sees it: rmcp's token response is the store's opaque token
//! body, and the store's refresh lock is rmcp's refresh guard, so two rho processes never
//! spend one rotating refresh token twice.
//!
//! Every token rmcp puts on a request comes through [`CredentialStore::load`] here, so this is
//! where the binding to the server's address is enforced: a stored credential issued for
//! another address, or naming none, is never handed to rmcp (it sees no credential, and the
//! server's answer leads to a login, whose save replaces the file). Saves record the address.
//!
//! The store works on small files with blocking calls; each call runs on the blocking pool.

use std::time::{SystemTime, UNIX_EPOCH};

use rho_config::{Credential, CredentialStore as Store, CredentialSummary};
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, OAuthTokenResponse, StoredCredentials,
};

use super::resource::Binding;

/// `server`'s credentials in `store`, for the server at `resource`.
#[derive(Clone)]
pub(crate) struct ServerCredentials {
    pub(crate) store: Store,
    pub(crate) server: String,
    /// The configured server's canonical address (`resource::canonical_resource`): the only
    /// resource a credential loaded here may have been issued for, and the one a save records.
    pub(crate) resource: String,
}

impl ServerCredentials {
    /// Runs `work` on the store in the blocking pool; its errors become rmcp's store errors
    /// (which rmcp never mistakes for "log in again").
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Store, &str) -> Result<T, rho_config::ConfigError> + Send + 'static,
    ) -> Result<T, AuthError> {
        let (store, server) = (self.store.clone(), self.server.clone());
        tokio::task::spawn_blocking(move || work(&store, &server))
            .await
            .map_err(|e| AuthError::CredentialStoreError(format!("the store task failed: {e}")))?
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    /// The stored credential and how it fits this server; `None` when there is none.
    async fn stored(&self) -> Result<Option<(Credential, Binding)>, AuthError> {
        let resource = self.resource.clone();
        self.blocking(move |store, server| {
            Ok(store.load(server)?.map(|credential| {
                let binding = Binding::of(credential.summary.resource.as_deref(), &resource);
                (credential, binding)
            }))
        })
        .await
    }

    /// Why the stored token must not be sent to this server, when one is stored that does not
    /// fit it (a credential without a token has nothing to send).
    pub(crate) async fn refusal(&self) -> Result<Option<Binding>, AuthError> {
        Ok(self.stored().await?.and_then(|(credential, binding)| {
            (binding != Binding::Bound && !credential.token.is_null()).then_some(binding)
        }))
    }
}

/// The store's record of rmcp's credentials, issued for `resource`.
pub(crate) fn to_credential(
    server: &str,
    resource: &str,
    stored: &StoredCredentials,
) -> Result<Credential, String> {
    let received_at = stored.token_received_at.unwrap_or_else(now);
    let token = match &stored.token_response {
        Some(response) => serde_json::to_value(response)
            .map_err(|e| format!("the token response cannot be stored: {e}"))?,
        None => serde_json::Value::Null,
    };
    let response = stored.token_response.as_ref();
    Ok(Credential {
        server: server.to_owned(),
        summary: CredentialSummary {
            resource: Some(resource.to_owned()),
            issuer: stored.issuer.clone().unwrap_or_default(),
            client_id: stored.client_id.clone(),
            received_at,
            expires_at: response
                .and_then(oauth2::TokenResponse::expires_in)
                .map(|lifetime| received_at.saturating_add(lifetime.as_secs())),
            scopes: stored.granted_scopes.clone(),
            refreshable: response
                .is_some_and(|r| oauth2::TokenResponse::refresh_token(r).is_some()),
        },
        token,
    })
}

/// rmcp's credentials from the store's record.
pub(crate) fn from_credential(credential: Credential) -> Result<StoredCredentials, String> {
    let token_response: Option<OAuthTokenResponse> = match credential.token {
        serde_json::Value::Null => None,
        body => Some(serde_json::from_value(body).map_err(|e| {
            // serde's message names the field and what was expected, never the value.
            format!("the stored token is not a token response ({e})")
        })?),
    };
    let summary = credential.summary;
    let issuer = Some(summary.issuer).filter(|i| !i.is_empty());
    Ok(StoredCredentials::new(
        summary.client_id,
        token_response,
        summary.scopes,
        Some(summary.received_at),
    )
    .with_issuer(issuer))
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let server = self.server.clone();
        let credential = match self.stored().await? {
            None => return Ok(None),
            Some((credential, Binding::Bound)) => credential,
            Some((_, binding)) => {
                tracing::info!(target: "rho::mcp", server = server.as_str(), "the stored OAuth credential is not used: {}", binding.reason());
                return Ok(None);
            }
        };
        from_credential(credential)
            .map(Some)
            .map_err(|reason| AuthError::CredentialStoreError(format!("server {server}: {reason}")))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let credential = to_credential(&self.server, &self.resource, &credentials)
            .map_err(AuthError::CredentialStoreError)?;
        self.blocking(move |store, _| store.save(&credential)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.blocking(|store, server| store.remove(server).map(drop))
            .await
    }

    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // The refresh token is dead: drop the token so the next connection logs in instead of
        // refreshing again. Only if the file still holds the rejected token: another process
        // may have saved a newer one meanwhile.
        let rejected = to_credential(&self.server, &self.resource, rejected)
            .map_err(AuthError::CredentialStoreError)?;
        self.blocking(move |store, server| match store.load(server)? {
            Some(current) if current.token == rejected.token => store.remove(server).map(drop),
            _ => Ok(()),
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self.blocking(|store, server| store.lock(server)).await?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "canary-5e02";

    #[tokio::test]
    async fn a_credential_reaches_rmcp_only_for_the_address_it_was_issued_for() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("credentials"));
        let at = |resource: &str| ServerCredentials {
            store: store.clone(),
            server: "remote".into(),
            resource: resource.into(),
        };
        let issued = at("http://127.0.0.1:4000/mcp");
        let token: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": CANARY, "token_type": "Bearer", "expires_in": 3600
        }))
        .unwrap();
        issued
            .save(StoredCredentials::new(
                "c".into(),
                Some(token),
                vec![],
                Some(now()),
            ))
            .await
            .unwrap();
        let saved = store.load("remote").unwrap().unwrap();
        assert_eq!(
            saved.summary.resource.as_deref(),
            Some("http://127.0.0.1:4000/mcp")
        );

        let loaded = issued.load().await.unwrap().unwrap();
        let sent = loaded.token_response.unwrap();
        assert_eq!(oauth2::TokenResponse::access_token(&sent).secret(), CANARY);
        assert_eq!(issued.refusal().await.unwrap(), None);

        let moved = at("http://127.0.0.1:4001/mcp");
        assert!(
            moved.load().await.unwrap().is_none(),
            "sent to another address"
        );
        assert_eq!(
            moved.refusal().await.unwrap(),
            Some(Binding::AddressChanged)
        );
        assert!(
            store.load("remote").unwrap().is_some(),
            "kept for a login to replace"
        );
    }
}
