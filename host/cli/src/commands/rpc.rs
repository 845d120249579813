//! `rho rpc`: JSON-RPC 2.0 on stdin/stdout. stdout carries only protocol; logs and
//! diagnostics go to stderr.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use rho_core::host::{HostOptions, SessionHost, SessionStart};
use rho_core::{MountOptions, ProviderFlags};

use crate::cli::{RpcArgs, SessionArgs};
use crate::context::Context;
use crate::runtime;

/// The host of a session run with these flags over `registry`; `login` says whether an OAuth login may open
/// a browser, `accepts_questions` whether a person can answer servers' forms.
pub(super) fn host_options(
    ctx: &Context,
    registry: rho_core::Registry,
    args: SessionArgs,
    login: rho_mcp::oauth::LoginPolicy,
    accepts_questions: bool,
) -> HostOptions {
    for d in &registry.diagnostics {
        tracing::warn!(code = d.code.as_str(), "{}", d.message);
    }
    let start = match (&args.session, args.continue_session) {
        (Some(path), _) => SessionStart::Resume(ctx.arg_path(path)),
        (None, true) => SessionStart::Continue,
        (None, false) => SessionStart::New,
    };
    HostOptions {
        registry,
        flags: ProviderFlags {
            endpoint: args.provider.endpoint,
            api_key_env: args.provider.api_key_env,
            model: args.provider.model,
            accept_external_provider: args.provider.accept_external_provider,
        },
        ephemeral: args.ephemeral,
        start,
        mount: MountOptions {
            oauth_login: login,
            ..MountOptions::default()
        },
        ambient: Arc::new(|name| std::env::var(name).ok()),
        accepts_questions,
        fixed_provider: None,
        runtime: args.runtime.map(Into::into),
    }
}

/// Serves a session in JSON-RPC mode; with `mcp_config` (`rho rpc --mcp-config`), its MCP
/// servers are that file's alone.
pub fn run(ctx: &Context, args: RpcArgs, mcp_config: Option<&Path>) -> anyhow::Result<ExitCode> {
    // stdin and stdout carry JSON-RPC; a person may still be at the terminal stderr goes to
    // (plain `rho` with piped input), and only then may a login open a browser.
    let login = rho_mcp::oauth::LoginPolicy::for_run(std::io::stderr().is_terminal());
    let registry = match mcp_config {
        None => ctx.registry()?,
        Some(file) => ctx.registry_with_servers_file(&ctx.arg_path(file))?,
    };
    let options = host_options(ctx, registry, args.session, login, args.accept_questions);
    // SIGINT, SIGTERM and SIGHUP abort what runs and stop (a signal during the start drops the
    // start, which stops the servers it started); EOF lets received work finish.
    runtime::run(|stop| async move {
        let (host, handle, events) = tokio::select! {
            started = SessionHost::start(options) => started?,
            () = stop.cancelled() => anyhow::bail!("stopped before the session started"),
        };
        let (transport, writer) = rho_rpc::transport::stdio();
        rho_rpc::serve(host, handle, events, transport, stop).await;
        let _ = writer.await;
        Ok(ExitCode::SUCCESS)
    })
}
