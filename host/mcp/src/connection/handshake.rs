//! A server's handshake: the transport opened (a stdio process or a Streamable HTTP
//! session), rho's era probe or the handshake of the era a start already knows, and the
//! retries a start makes when the era turns out otherwise (see `docs/mcp.md`, "Starting and
//! stopping").

use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};

use super::*;

/// How a start picks its handshake when the configuration pins no protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handshaking {
    /// rho's era probe decides (`crate::era`).
    Probe,
    /// `initialize`: the server spoke a revision up to 2025-11-25 last time.
    Initialize,
    /// `server/discover` (2026-07-28): the server spoke it last time, or answered the era
    /// probe only after the fallback to `initialize`.
    Discover,
}

impl Handshaking {
    /// The handshake of the era `version` belongs to (the probe for a version rho does not
    /// know).
    pub(super) fn of_version(version: &str) -> Self {
        match known_version(version) {
            Some(v) if v.has_initialize() => Self::Initialize,
            Some(_) => Self::Discover,
            None => Self::Probe,
        }
    }
}

/// The revision `version` names, when rho speaks it.
fn known_version(version: &str) -> Option<&'static ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|v| v.as_str() == version)
}

/// The handshake to run: pinned by `spec.protocol_version` when the revision is known (the
/// `initialize` handshake up to 2025-11-25, `server/discover` from 2026-07-28), otherwise the
/// one `era` names, or `None` for rho's era probe to decide. Also returns the version
/// `initialize` carries.
fn lifecycle(
    spec: &McpServerSpec,
    era: Handshaking,
) -> Result<(Option<ClientLifecycleMode>, ProtocolVersion), McpError> {
    let Some(pinned) = &spec.protocol_version else {
        let mode = match era {
            Handshaking::Probe => None,
            Handshaking::Initialize => Some(ClientLifecycleMode::Initialize),
            Handshaking::Discover => Some(ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }),
        };
        return Ok((mode, ProtocolVersion::V_2025_11_25));
    };
    let Some(version) = known_version(pinned) else {
        return Err(connect_error(
            spec,
            format!("protocol version {pinned} is not one rho speaks"),
        ));
    };
    let mode = if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    };
    Ok((Some(mode), version.clone()))
}

/// Why rmcp's handshake failed, and whether a late answer to the era probe showed a modern
/// server meanwhile.
struct Refused {
    error: ClientInitializeError,
    late_modern: bool,
}

/// rmcp's handshake on `transport`: the `lifecycle` given, or the one rho's era probe picks
/// (`server/discover` for a modern answer, `initialize` for a legacy refusal or silence).
async fn serve<T: Transport<RoleClient> + 'static>(
    client: RhoClient,
    transport: T,
    lifecycle: Option<ClientLifecycleMode>,
    liveness: Liveness,
    probe_wait: Duration,
) -> Result<RunningService<RoleClient, RhoClient>, Refused> {
    let refused = |error| Refused {
        error,
        late_modern: false,
    };
    if let Some(lifecycle) = lifecycle {
        return serve_client_with_lifecycle(client, transport, lifecycle)
            .await
            .map_err(refused);
    }
    let info = client.get_info();
    let (probed, era) = crate::era::probe(
        transport,
        &info,
        ProtocolVersion::V_2026_07_28,
        liveness,
        probe_wait,
    )
    .await
    .map_err(refused)?;
    let mode = match era {
        Era::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Era::Legacy => ClientLifecycleMode::Initialize,
        Era::Silent => {
            tracing::info!(target: "rho::mcp", server = client.server.as_str(), seconds = probe_wait.as_secs_f64(), "no answer to server/discover; trying initialize");
            ClientLifecycleMode::Initialize
        }
    };
    let late_modern = probed.late_modern();
    serve_client_with_lifecycle(client, probed, mode)
        .await
        .map_err(|error| Refused {
            error,
            late_modern: late_modern.load(Ordering::Acquire),
        })
}

/// The handshake by `deadline`, in the `era` given. Started once more when that fails in a
/// way another era may not: probed as usual when the server refused the era it spoke last
/// time, in the 2026-07-28 era when the era probe's late answer showed a modern server whose
/// `initialize` fallback then failed.
pub(super) async fn handshake_by(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
    options: &ClientOptions,
    authorizer: Option<&crate::oauth::Authorizer>,
    deadline: Instant,
    era: Handshaking,
) -> Result<Connection, Handshake> {
    let deadline = tokio::time::Instant::from_std(deadline);
    let attempt =
        |era| tokio::time::timeout_at(deadline, handshake(spec, ambient, options, authorizer, era));
    let first = match attempt(era).await {
        Ok(Err(Handshake::EraRefused(error))) => {
            tracing::info!(target: "rho::mcp", server = spec.id.as_str(), "the server refused the protocol era it spoke last time ({error}); starting it again to probe its era");
            attempt(Handshaking::Probe).await
        }
        first => first,
    };
    match first {
        Err(_) => Err(Handshake::Failed(startup_timeout(spec))),
        Ok(Err(Handshake::LateModern(error))) => {
            tracing::info!(target: "rho::mcp", server = spec.id.as_str(), "the server answered server/discover only after the fallback to initialize, which failed ({error}); starting it again in the 2026-07-28 era");
            match attempt(Handshaking::Discover).await {
                Err(_) => Err(Handshake::Failed(startup_timeout(spec))),
                Ok(Ok(mut connection)) => {
                    connection.restarts = 1;
                    connection.last_restart = Some(
                        "it answered server/discover only after the fallback to initialize"
                            .to_owned(),
                    );
                    Ok(connection)
                }
                Ok(outcome) => outcome,
            }
        }
        Ok(outcome) => outcome,
    }
}

/// Why a handshake failed.
pub(super) enum Handshake {
    /// For good, with this error.
    Failed(McpError),
    /// With this error, after a late answer to the era probe showed a modern server: a start
    /// in the 2026-07-28 era may succeed.
    LateModern(McpError),
    /// With this error, in the era the server spoke last time: a start that probes its era
    /// may succeed.
    EraRefused(McpError),
    /// The server answered 401 to the token (after rmcp's one silent refresh); its
    /// `WWW-Authenticate` challenge, when it sent one.
    Unauthorized(Option<String>),
}

impl From<McpError> for Handshake {
    fn from(error: McpError) -> Self {
        Self::Failed(error)
    }
}

/// [`serve`] over Streamable HTTP through `http_client` (rho's, or it wrapped for OAuth).
async fn serve_http<C: StreamableHttpClient>(
    client: RhoClient,
    http_client: C,
    config: StreamableHttpClientTransportConfig,
    lifecycle: Option<ClientLifecycleMode>,
    probe_wait: Duration,
) -> Result<RunningService<RoleClient, RhoClient>, Refused> {
    let transport = crate::http::transport(http_client, config);
    serve(client, transport, lifecycle, Liveness::Sent, probe_wait).await
}

/// Whether `error` is the server refusing the handshake it was offered (an error answer, or
/// one of another shape or version), not the server failing (gone, silent).
fn refuses_handshake(error: &ClientInitializeError) -> bool {
    matches!(
        error,
        ClientInitializeError::JsonRpcError(_)
            | ClientInitializeError::NoCompatibleProtocolVersion { .. }
            | ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::ExpectedInitResult(_)
    )
}

/// Transport and handshake in `era`; the connection comes back with nothing discovered yet.
async fn handshake(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
    options: &ClientOptions,
    authorizer: Option<&crate::oauth::Authorizer>,
    era: Handshaking,
) -> Result<Connection, Handshake> {
    let (lifecycle, handshake_version) = lifecycle(spec, era)?;
    // A refusal of the era remembered from last time (not one the configuration pins) may be
    // the server having changed era: the caller probes it.
    let remembered = era != Handshaking::Probe && spec.protocol_version.is_none();
    let catalog = Catalog::new(&spec.id, spec.call_timeout);
    let declared = Declared::new(options, spec);
    let client = RhoClient::new(&spec.id, handshake_version, declared, catalog.clone());
    let mut standalone = StandaloneStream::default();
    let probe_wait = PROBE_ANSWER_WAIT.min(spec.startup_timeout / 2);
    let failed = |message: String, refused: &Refused| {
        let error = connect_error(spec, message);
        if refused.late_modern {
            Handshake::LateModern(error)
        } else if remembered && refuses_handshake(&refused.error) {
            Handshake::EraRefused(error)
        } else {
            Handshake::Failed(error)
        }
    };
    let (service, process) = match &spec.transport {
        McpTransport::Stdio(stdio) => {
            let env = server_environment(spec, ambient)?;
            let secrets = stdio
                .env_from_env
                .iter()
                .filter_map(|(name, _)| env.get(&OsString::from(name)))
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let (process, stdout, stdin) = spawn(spec, stdio, env, secrets)?;
            // A second handle on our end of its stdin tells when the server has read the probe.
            let liveness = match rustix::io::dup(&stdin) {
                Ok(pipe) => Liveness::Pipe(pipe),
                Err(_) => Liveness::Sent,
            };
            let stdout = crate::task_support::Tapped::new(stdout, client.task_flags.clone());
            let transport = AsyncRwTransport::new_client(stdout, stdin);
            match serve(client.clone(), transport, lifecycle, liveness, probe_wait).await {
                Ok(service) => (service, Some(process)),
                Err(refused) => {
                    // "connection closed" says nothing; the server's own last words usually do.
                    let tail = process.stderr_tail().await;
                    let message = with_tail(format!("handshake failed: {}", refused.error), &tail);
                    return Err(failed(message, &refused));
                }
            }
        }
        McpTransport::StreamableHttp(http) => {
            let (http_client, config, stream) =
                crate::http::client(spec, http, ambient, client.task_flags.clone())?;
            standalone = stream;
            let served = match authorizer {
                None => {
                    serve_http(client.clone(), http_client, config, lifecycle, probe_wait).await
                }
                Some(authorizer) => {
                    let http_client = authorizer.client(http_client);
                    serve_http(client.clone(), http_client, config, lifecycle, probe_wait).await
                }
            };
            let service = match served {
                Ok(service) => service,
                Err(Refused { error, .. })
                    if authorizer.is_some() && error.is_authorization_required() =>
                {
                    return Err(Handshake::Unauthorized(
                        error.auth_challenge().map(str::to_owned),
                    ));
                }
                Err(refused) => {
                    return Err(failed(
                        format!("handshake failed: {}", refused.error),
                        &refused,
                    ));
                }
            };
            (service, None)
        }
    };
    let info = service.peer_info();
    let capabilities = info.as_ref().map(|i| &i.capabilities);
    let summary = ServerSummary {
        protocol_version: info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
        server_info: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .and_then(|s| serde_json::to_value(s).ok()),
        instructions: info.as_ref().and_then(|i| i.instructions.clone()),
        logging: capabilities.is_some_and(|c| c.logging.is_some()),
        prompts: capabilities.is_some_and(|c| c.prompts.is_some()),
        resources: capabilities.is_some_and(|c| c.resources.is_some()),
        completions: capabilities.is_some_and(|c| c.completions.is_some()),
        resource_subscriptions: capabilities
            .and_then(|c| c.resources.as_ref())
            .and_then(|r| r.subscribe)
            == Some(true)
            && info
                .as_ref()
                .is_some_and(|i| i.protocol_version < ProtocolVersion::V_2026_07_28),
    };
    let stop = catalog.closed().clone().drop_guard();
    Ok(Connection {
        spec: spec.clone(),
        client,
        service,
        process,
        summary,
        tools: Vec::new(),
        tools_left_out: 0,
        withdrawn: std::collections::BTreeSet::new(),
        added: Vec::new(),
        completions: Completions::default(),
        standalone,
        authorizer: authorizer.cloned(),
        options: options.clone(),
        restarts: 0,
        last_restart: None,
        broken: AtomicBool::new(false),
        unchecked: false,
        _stop_relisting: stop,
    })
}
