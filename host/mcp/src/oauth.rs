//! OAuth 2.1 for Streamable HTTP servers that declare an `[oauth]` table (`docs/mcp.md`,
//! "OAuth"), on rmcp's `auth` state machine: protected-resource metadata (RFC 9728) from the
//! `WWW-Authenticate` challenge or the well-known paths, authorization-server metadata
//! (RFC 8414 / OIDC) with its issuer checked, client registration (pre-registered, a client ID
//! metadata document, or RFC 7591), PKCE S256, the resource indicator (RFC 8707) and the
//! response's `iss` (RFC 9207). rho adds what rmcp leaves to a host:
//!
//! - every leg over HTTPS except to loopback, no redirects, bounded bodies (`guarded_http`);
//! - the browser ([`Browser`]: `$BROWSER` or the platform opener, or URL-and-paste) and the
//!   loopback listener that takes the redirect (`callback`);
//! - tokens kept in rho's credential store, with its refresh lock as rmcp's refresh guard
//!   (`server_credentials`), each bound to the server address it was issued for (`resource`):
//!   a stored token is sent only to the server at that address, checked before any request;
//! - time limits: discovery and loading stored credentials 60 s each, the browser login 5
//!   minutes;
//! - when a login may happen at all ([`LoginPolicy`]): a run that cannot put a browser in
//!   front of a person fails the server with the command that logs in.
//!
//! A configured `Authorization` header wins: such a server never enters this module.

mod browser;
mod callback;
mod guarded_http;
mod resource;
mod server_credentials;
mod status;

use std::sync::Arc;
use std::time::Duration;

use rho_component::{HttpServerSpec, McpServerSpec, McpTransport, OAuthSpec};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationMetadataSource, AuthorizationRequest, AuthorizationSession, CredentialStore as _,
    WWWAuthenticateParams,
};
use tokio::sync::Mutex;

use crate::McpError;
use crate::http::HttpClient;
pub use browser::{
    Browser, BrowserError, BrowserFuture, Handover, PASTE_MAX_BYTES, PasteBrowser, SystemBrowser,
    opening_message,
};
pub use callback::CALLBACK_PATH;
use callback::{Callback, CallbackListener};
use server_credentials::ServerCredentials;
pub use status::{AuthState, auth_state};

/// The bound on discovering a server's authorization metadata.
pub const DISCOVERY_TIME_LIMIT: Duration = Duration::from_secs(60);
/// The bound on loading (and, when due, refreshing) stored credentials.
pub const STORE_TIME_LIMIT: Duration = Duration::from_secs(60);
/// The bound on a browser login, from opening the page to the token.
pub const LOGIN_TIME_LIMIT: Duration = Duration::from_secs(5 * 60);
/// The client name rho registers with.
pub const CLIENT_NAME: &str = "rho";

/// What a run lets connections do about OAuth: where tokens are kept, and whether a person
/// can log in now.
#[derive(Clone)]
pub struct OAuthAccess {
    /// The credential store (`$RHO_HOME/credentials`).
    pub store: rho_config::CredentialStore,
    /// Whether a missing or dead token may start a browser login.
    pub login: LoginPolicy,
}

/// Whether a connection may start a browser login.
#[derive(Clone)]
pub enum LoginPolicy {
    /// Never (no terminal, `CI`, `rho mcp list/show --connect`): a server without a usable
    /// token fails, and its error says to run `rho mcp login <id>`.
    Never,
    /// Through this browser.
    Browser(Arc<dyn Browser>),
}

impl LoginPolicy {
    /// The policy of a run: the system browser when a person is at a terminal (`interactive`)
    /// and the run is not in CI (`CI` set, to any value, means CI), otherwise never.
    pub fn for_run(interactive: bool) -> Self {
        if interactive && std::env::var_os("CI").is_none() {
            Self::Browser(Arc::new(SystemBrowser))
        } else {
            Self::Never
        }
    }
}

impl std::fmt::Debug for LoginPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Never => "Never",
            Self::Browser(_) => "Browser",
        })
    }
}

impl std::fmt::Debug for OAuthAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthAccess")
            .field("store", &self.store.dir())
            .field("login", &self.login)
            .finish()
    }
}

/// The HTTP settings and `[oauth]` table of a server that authorizes with OAuth: one that
/// declares the table and has no configured `Authorization` header (which wins).
pub fn oauth_of(spec: &McpServerSpec) -> Option<(&HttpServerSpec, &OAuthSpec)> {
    let McpTransport::StreamableHttp(http) = &spec.transport else {
        return None;
    };
    let oauth = spec.oauth.as_ref()?;
    let has_header = http
        .headers
        .iter()
        .map(|(name, _)| name)
        .chain(http.headers_from_env.iter().map(|(name, _)| name))
        .any(|name| name.eq_ignore_ascii_case("authorization"));
    (!has_header).then_some((http, oauth))
}

/// What a finished login obtained (never the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginReport {
    /// The issuer of the authorization server.
    pub issuer: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires (Unix seconds), if the server said.
    pub expires_at: Option<u64>,
    /// Whether a refresh token was issued.
    pub refreshable: bool,
}

/// `rho mcp login <id>`: discovers, registers and logs in through `browser`, asking for
/// `scopes` (empty: the configured ones, else the server's choice), and keeps the tokens in
/// `store`, replacing any there.
///
/// # Errors
///
/// A server without an `[oauth]` table (or with a configured `Authorization` header), and
/// every failure of the flow, naming the server.
pub async fn login(
    spec: &McpServerSpec,
    store: &rho_config::CredentialStore,
    browser: &dyn Browser,
    scopes: &[String],
    ambient: &Ambient<'_>,
) -> Result<LoginReport, McpError> {
    let Some((http, oauth)) = oauth_of(spec) else {
        return Err(connect_error(
            spec,
            if spec.oauth.is_some() {
                "a configured Authorization header replaces OAuth for this server".into()
            } else {
                "this server has no [oauth] table; add `[mcp.servers.<id>.oauth]` to log in with \
                 OAuth"
                    .into()
            },
        ));
    };
    let credentials = server_credentials(spec, http, store)?;
    let manager = manager(spec, http, credentials.clone()).await?;
    let mut oauth = oauth.clone();
    if !scopes.is_empty() {
        oauth.scopes = scopes.to_vec();
    }
    let client = Client::new(spec, &oauth, ambient)?;
    authorize(spec, manager, &client, None, browser).await?;
    let stored = credentials
        .load()
        .await
        .map_err(|e| connect_error(spec, e.to_string()))?;
    let credential = stored
        .map(|s| server_credentials::to_credential(&spec.id, &credentials.resource, &s))
        .transpose()
        .map_err(|e| connect_error(spec, e))?
        .ok_or_else(|| connect_error(spec, "the login kept no token".into()))?;
    let summary = credential.summary;
    Ok(LoginReport {
        issuer: summary.issuer,
        scopes: summary.scopes,
        expires_at: summary.expires_at,
        refreshable: summary.refreshable,
    })
}

/// A connection's authorization: the manager rmcp's `AuthClient` asks for each request's
/// token, and what a step-up login needs.
#[derive(Clone)]
pub(crate) struct Authorizer {
    /// rmcp's client wrapper around the manager (its `http_client` is replaced per
    /// connection attempt; rmcp's wrapper cannot be built around a shared manager otherwise).
    client: AuthClient<HttpClient>,
    manager: Arc<Mutex<AuthorizationManager>>,
    login: LoginPolicy,
    credentials: ServerCredentials,
    /// A confidential client's secret (never shown: `Authorizer` has no `Debug`).
    secret: Option<String>,
}

/// `spec`'s slot in `store`, bound to the server's canonical address.
fn server_credentials(
    spec: &McpServerSpec,
    http: &HttpServerSpec,
    store: &rho_config::CredentialStore,
) -> Result<ServerCredentials, McpError> {
    let resource = resource::canonical_resource(&http.url).map_err(|e| connect_error(spec, e))?;
    Ok(ServerCredentials {
        store: store.clone(),
        server: spec.id.clone(),
        resource,
    })
}

/// The manager for a connection to an OAuth server, holding a usable token: the stored one
/// (refreshed when due), or one from a browser login when `access` allows one. A stored token
/// issued for another address than the server's (or naming none) is never sent: without a
/// login this fails at once, before any request; with one, the connection starts without a
/// token and the server's challenge leads to a login that replaces it.
pub(crate) async fn connect(
    spec: &McpServerSpec,
    http: &HttpServerSpec,
    oauth: &OAuthSpec,
    access: Option<&OAuthAccess>,
    http_client: HttpClient,
    ambient: &Ambient<'_>,
) -> Result<Authorizer, McpError> {
    let secret = Client::new(spec, oauth, ambient)?.secret;
    let Some(access) = access else {
        return Err(needs_login(spec, "this run keeps no OAuth credentials"));
    };
    let credentials = server_credentials(spec, http, &access.store)?;
    let refusal = tokio::time::timeout(STORE_TIME_LIMIT, credentials.refusal())
        .await
        .map_err(|_| connect_error(spec, "loading its stored credentials took over 60 s".into()))?
        .map_err(|e| connect_error(spec, e.to_string()))?;
    if let (Some(binding), LoginPolicy::Never) = (refusal, &access.login) {
        return Err(needs_login(spec, binding.reason()));
    }
    let mut manager = manager(spec, http, credentials.clone()).await?;
    let stored = tokio::time::timeout(STORE_TIME_LIMIT, credentials.load())
        .await
        .map_err(|_| connect_error(spec, "loading its stored credentials took over 60 s".into()))?
        .map_err(|e| connect_error(spec, e.to_string()))?;
    let mut background = None;
    match stored
        .as_ref()
        .and_then(|s| s.token_response.as_ref().map(|t| (s, t)))
    {
        // No token: the handshake goes out without one, and the server's 401 challenge
        // leads the login (`connect_with` → `relogin`), which finds what the challenge names.
        None => {}
        Some((stored, token)) if !refresh_due(stored, token) => {
            // A live token is sent as it is; the metadata a later refresh needs (and the
            // issuer check) is found in the background, off the connection's critical path.
            background = Some(stored.client_id.clone());
        }
        Some(_) => {
            // Due for refresh: discovery now, then the refresh. Without metadata, or with a
            // dead refresh token, the handshake goes out without a token (login as above).
            if let Err(e) = discover(spec, &mut manager, None).await {
                tracing::info!(target: "rho::mcp", server = spec.id.as_str(), "cannot refresh the stored OAuth token ({e}); the server's answer decides");
            } else {
                let refreshed = tokio::time::timeout(STORE_TIME_LIMIT, async {
                    if !manager.initialize_from_store().await? {
                        return Ok(());
                    }
                    match manager.get_access_token().await {
                        Ok(_) | Err(AuthError::AuthorizationRequired) => Ok(()),
                        Err(AuthError::TokenRefreshRejected(_)) => Ok(()),
                        Err(e) => Err(e),
                    }
                })
                .await
                .map_err(|_| {
                    connect_error(spec, "refreshing its stored token took over 60 s".into())
                })?;
                refreshed.map_err(|e| auth_error(spec, &e))?;
            }
        }
    }
    let client = AuthClient::new(http_client, manager);
    let authorizer = Authorizer {
        manager: client.auth_manager.clone(),
        client,
        login: access.login.clone(),
        credentials,
        secret,
    };
    if let Some(client_id) = background {
        tokio::spawn(complete_in_background(
            spec.clone(),
            http.clone(),
            authorizer.clone(),
            client_id,
        ));
    }
    Ok(authorizer)
}

/// Whether rmcp would refresh `token` now: less than min(30 s, half its lifetime) left.
fn refresh_due(
    stored: &rmcp::transport::auth::StoredCredentials,
    token: &rmcp::transport::auth::OAuthTokenResponse,
) -> bool {
    let (Some(lifetime), Some(received)) = (
        oauth2::TokenResponse::expires_in(token),
        stored.token_received_at,
    ) else {
        return false;
    };
    let left = lifetime
        .as_secs()
        .saturating_sub(server_credentials::now().saturating_sub(received));
    left < 30u64.min(lifetime.as_secs() / 2).max(1)
}

/// The metadata of a connection that started with a live stored token: discovered on a
/// manager of its own (requests keep flowing meanwhile), then handed to the connection's
/// manager with the stored client, so a refresh later in the session knows the token
/// endpoint. A credential minted by another issuer than the one discovered now is discarded
/// (rmcp's `initialize_from_store`); the next request then goes without a token, and the
/// server's 401 leads to a login.
async fn complete_in_background(
    spec: McpServerSpec,
    http: HttpServerSpec,
    authorizer: Authorizer,
    client_id: String,
) {
    let Ok(mut probe) = manager(&spec, &http, authorizer.credentials.clone()).await else {
        return;
    };
    let metadata = match discover(&spec, &mut probe, None).await {
        Ok(metadata) => metadata,
        Err(e) => {
            tracing::info!(target: "rho::mcp", server = spec.id.as_str(), "OAuth metadata not found yet ({e}); a refresh will need a login");
            return;
        }
    };
    let mut manager = authorizer.manager.lock().await;
    manager.set_metadata(metadata);
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(target: "rho::mcp", server = spec.id.as_str(), "the stored OAuth token was minted by another issuer and was discarded");
        }
        Err(e) => {
            tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), client = client_id.as_str(), "stored OAuth credentials not usable for refresh: {e}");
        }
    }
}

impl Authorizer {
    /// `http` sending this authorization's token with every request (refreshing it when due,
    /// once more after a 401).
    pub(crate) fn client(&self, http: HttpClient) -> AuthClient<HttpClient> {
        let mut client = self.client.clone();
        client.http_client = http;
        client
    }
    /// A new login after the server refused the connection's token (revoked, or minted for
    /// scopes it no longer accepts); `challenge` is its `WWW-Authenticate`.
    pub(crate) async fn relogin(
        &self,
        spec: &McpServerSpec,
        challenge: Option<&str>,
    ) -> Result<(), McpError> {
        let LoginPolicy::Browser(browser) = &self.login else {
            return Err(needs_login(spec, "the server refused the stored token"));
        };
        let (http, oauth) =
            oauth_of(spec).ok_or_else(|| connect_error(spec, "not an OAuth server".into()))?;
        let client = Client {
            oauth,
            secret: self.secret.clone(),
        };
        let mut guard = self.manager.lock().await;
        let fresh = manager(spec, http, self.credentials.clone()).await?;
        *guard = authorize(spec, fresh, &client, challenge, browser.as_ref()).await?;
        Ok(())
    }

    /// Step-up after `403 insufficient_scope` (`challenge` names the scope needed): a login
    /// for the union of the granted scopes and the required ones, bounded by rmcp's attempt
    /// limit (3) per connection.
    pub(crate) async fn step_up(
        &self,
        spec: &McpServerSpec,
        challenge: &str,
    ) -> Result<(), McpError> {
        let LoginPolicy::Browser(browser) = &self.login else {
            return Err(needs_login(
                spec,
                "the server needs more scopes than the stored token has (run the login with \
                 --scopes)",
            ));
        };
        let (http, _) =
            oauth_of(spec).ok_or_else(|| connect_error(spec, "not an OAuth server".into()))?;
        let base = url::Url::parse(&http.url).map_err(|e| connect_error(spec, e.to_string()))?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let required = params.scope.unwrap_or_default();
        let manager = self.manager.lock().await;
        // The registered redirect URI names the port of the first login's listener.
        let url = manager
            .request_scope_upgrade(&required)
            .await
            .map_err(|e| auth_error(spec, &e))?;
        let redirect = query(&url, "redirect_uri")
            .and_then(|uri| url::Url::parse(&uri).ok())
            .and_then(|uri| uri.port())
            .ok_or_else(|| {
                connect_error(spec, "the step-up URL has no loopback redirect".into())
            })?;
        let listener = CallbackListener::bind_port(redirect)
            .await
            .map_err(|e| connect_error(spec, e))?;
        let callback = browse(spec, &url, &listener, browser.as_ref()).await?;
        let callback = AuthorizationCallback::from_redirect_url(&callback)
            .map_err(|e| auth_error(spec, &e))?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| auth_error(spec, &e))?;
        Ok(())
    }
}

/// Who rho is to the authorization server: the `[oauth]` table, and the secret of a
/// confidential pre-registered client (read from the environment variable the table names).
struct Client<'a> {
    oauth: &'a OAuthSpec,
    secret: Option<String>,
}

impl<'a> Client<'a> {
    fn new(
        spec: &McpServerSpec,
        oauth: &'a OAuthSpec,
        ambient: &Ambient<'_>,
    ) -> Result<Self, McpError> {
        let secret =
            match &oauth.client_secret_env {
                None => None,
                Some(variable) => {
                    let value = ambient(variable).ok_or_else(|| McpError::MissingEnv {
                        server: spec.id.clone(),
                        variable: variable.clone(),
                    })?;
                    Some(value.into_string().map_err(|_| {
                        connect_error(spec, format!("{variable} is not valid UTF-8"))
                    })?)
                }
            };
        Ok(Self { oauth, secret })
    }
}

/// Looks up an ambient variable (rho's environment, or a test's stand-in).
pub type Ambient<'a> = dyn Fn(&str) -> Option<std::ffi::OsString> + Sync + 'a;

/// A manager for `http` with rho's HTTP client and `credentials` as its store.
async fn manager(
    spec: &McpServerSpec,
    http: &HttpServerSpec,
    credentials: ServerCredentials,
) -> Result<AuthorizationManager, McpError> {
    let client = guarded_http::GuardedHttp::new().map_err(|e| connect_error(spec, e))?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(&http.url, Arc::new(client))
        .await
        .map_err(|e| auth_error(spec, &e))?;
    manager.set_credential_store(credentials);
    Ok(manager)
}

/// Discovery, bounded: protected-resource metadata (from `challenge` when there is one),
/// then the authorization server's. A server that publishes none is refused: rho never
/// guesses endpoints from the MCP URL.
async fn discover(
    spec: &McpServerSpec,
    manager: &mut AuthorizationManager,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, McpError> {
    let resolution = tokio::time::timeout(
        DISCOVERY_TIME_LIMIT,
        manager.resolve_metadata_from_challenge(challenge),
    )
    .await
    .map_err(|_| connect_error(spec, "OAuth discovery took over 60 s".into()))?
    .map_err(|e| auth_error(spec, &e))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(connect_error(
            spec,
            "the server publishes no OAuth metadata (no protected-resource or authorization-server \
             metadata document); rho does not guess authorization endpoints"
                .into(),
        ));
    }
    manager.set_metadata(resolution.metadata.clone());
    Ok(resolution.metadata)
}

/// The browser login: discovery when not done yet, registration, the authorization page, the
/// redirect, the token exchange (which saves the tokens). Bounded by [`LOGIN_TIME_LIMIT`]
/// from the page on.
async fn authorize(
    spec: &McpServerSpec,
    mut manager: AuthorizationManager,
    client: &Client<'_>,
    challenge: Option<&str>,
    browser: &dyn Browser,
) -> Result<AuthorizationManager, McpError> {
    let oauth = client.oauth;
    discover(spec, &mut manager, challenge).await?;
    let listener = CallbackListener::bind()
        .await
        .map_err(|e| connect_error(spec, e))?;
    let mut request = AuthorizationRequest::new(listener.redirect_uri())
        .with_client_name(CLIENT_NAME)
        .with_scopes(oauth.scopes.iter().cloned());
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(client_id) = &oauth.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = &client.secret {
            request = request.with_client_secret(secret.clone());
        }
    } else if let Some(url) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(url);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| auth_error(spec, &e))?;
    let callback = browse(spec, session.get_authorization_url(), &listener, browser).await?;
    drop(listener);
    session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| auth_error(spec, &e))?;
    Ok(session.auth_manager)
}

/// Shows `url` through `browser` and waits for the redirect (at the listener, or pasted),
/// within [`LOGIN_TIME_LIMIT`]. Returns the redirect URL with the login's `state`.
async fn browse(
    spec: &McpServerSpec,
    url: &str,
    listener: &CallbackListener,
    browser: &dyn Browser,
) -> Result<String, McpError> {
    guarded_http::check_endpoint(url).map_err(|reason| {
        connect_error(
            spec,
            format!("refused to open the authorization page: {reason}"),
        )
    })?;
    let state = query(url, "state")
        .ok_or_else(|| connect_error(spec, "the authorization URL carries no state".into()))?;
    let wait = async {
        let opened = browser.open(url);
        tokio::pin!(opened);
        // The browser may come back to the listener before the opener returns.
        let handover = tokio::select! {
            handover = &mut opened => handover.map_err(|e| connect_error(spec, e.to_string()))?,
            callback = listener.wait(&state) => return finish(spec, callback),
        };
        match handover {
            Handover::Opened => finish(spec, listener.wait(&state).await),
            Handover::Pasted(pasted) => {
                pasted_callback(spec, &pasted, &listener.redirect_uri(), &state)
            }
        }
    };
    tokio::time::timeout(LOGIN_TIME_LIMIT, wait)
        .await
        .map_err(|_| {
            connect_error(
                spec,
                "the browser login did not finish within 5 minutes".into(),
            )
        })?
}

fn finish(spec: &McpServerSpec, callback: Callback) -> Result<String, McpError> {
    match callback {
        Callback::Url(url) => Ok(url),
        Callback::WrongState => Err(connect_error(
            spec,
            "the browser came back with a state that is not this login's (a forged or stale \
             redirect); the login was stopped"
                .into(),
        )),
    }
}

/// A pasted redirect: it must go to this login's redirect URI and carry its state.
fn pasted_callback(
    spec: &McpServerSpec,
    pasted: &str,
    redirect_uri: &str,
    state: &str,
) -> Result<String, McpError> {
    let Ok(url) = url::Url::parse(pasted) else {
        return Err(connect_error(spec, "the pasted text is not a URL".into()));
    };
    let expected = url::Url::parse(redirect_uri).map_err(|e| connect_error(spec, e.to_string()))?;
    if url.scheme() != expected.scheme()
        || url.host_str() != expected.host_str()
        || url.port() != expected.port()
        || url.path() != expected.path()
    {
        return Err(connect_error(
            spec,
            format!("the pasted address is not this login's redirect ({redirect_uri}?…)"),
        ));
    }
    match url.query().and_then(|q| callback::query_value(q, "state")) {
        Some(pasted_state) if pasted_state == state => Ok(pasted.to_owned()),
        _ => finish(spec, Callback::WrongState),
    }
}

/// The decoded value of `name` in `url`'s query.
fn query(url: &str, name: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    callback::query_value(url.query()?, name)
}

fn connect_error(spec: &McpServerSpec, message: String) -> McpError {
    McpError::Connect {
        server: spec.id.clone(),
        message,
    }
}

/// A server that needs a login this run cannot start.
pub(crate) fn needs_login(spec: &McpServerSpec, why: &str) -> McpError {
    connect_error(
        spec,
        format!(
            "OAuth login required: {why}; run `rho mcp login {}` (or start rho on a terminal) \
             to authorize it",
            spec.id
        ),
    )
}

/// The cause in rmcp's registration error, without the "registration failed" prefixes its
/// layers add on the way up.
fn registration_cause(why: &str) -> &str {
    let mut cause = why;
    while let Some(rest) = ["Dynamic registration failed: ", "Registration failed: "]
        .iter()
        .find_map(|prefix| cause.strip_prefix(prefix))
    {
        cause = rest;
    }
    cause
}

/// rmcp's error, with what it means for the person reading it.
fn auth_error(spec: &McpServerSpec, error: &AuthError) -> McpError {
    let message = match error {
        AuthError::AuthorizationRequired => {
            return needs_login(spec, "the server asks for a login");
        }
        AuthError::AuthorizationServerMismatch { .. }
        | AuthError::AuthorizationServerMissingIssuer { .. } => {
            format!("OAuth refused: {error} (the response did not come from the server's issuer)")
        }
        AuthError::RegistrationFailed(why) => format!(
            "the authorization server refused to register rho as a client: {} (set `client_id` \
             in its [oauth] table to a client registered for rho there)",
            registration_cause(why)
        ),
        AuthError::DiscoveryRequestFailed { url, .. } => {
            match guarded_http::check_endpoint(url.as_str()) {
                Err(reason) => format!(
                    "OAuth refused: the server's metadata names {url}: {reason} (every OAuth endpoint \
                 must use HTTPS, except on loopback)"
                ),
                Ok(()) => format!("OAuth: {error}"),
            }
        }
        _ => format!("OAuth: {error}"),
    };
    // rmcp's messages often keep the cause (a refused plaintext endpoint, a status) in their
    // sources.
    let mut message = message;
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    connect_error(spec, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_error_keeps_only_its_cause() {
        assert_eq!(
            registration_cause(
                "Dynamic registration failed: Registration failed: HTTP 401 Unauthorized: {}"
            ),
            "HTTP 401 Unauthorized: {}"
        );
        assert_eq!(registration_cause("no endpoint"), "no endpoint");
    }
}
