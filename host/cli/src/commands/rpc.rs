//! `rho rpc`: JSON-RPC 2.0 on stdin/stdout. stdout carries only protocol; logs and
//! diagnostics go to stderr.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use rho_core::host::{HostOptions, SessionHost, SessionStart};
use rho_core::{MountOptions, ProviderFlags};

use super::runtime;
use crate::cli::RpcArgs;
use crate::context::Context;

pub fn run(ctx: &Context, args: RpcArgs) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry();
    for d in &registry.diagnostics {
        tracing::warn!(code = d.code.as_str(), "{}", d.message);
    }
    let start = match (&args.session, args.continue_session) {
        (Some(path), _) => SessionStart::Resume(ctx.arg_path(path)),
        (None, true) => SessionStart::Continue,
        (None, false) => SessionStart::New,
    };
    let options = HostOptions {
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
            // stdin and stdout carry JSON-RPC; a person may still be at the terminal stderr
            // goes to (plain `rho` with piped input), and only then may a login open a browser.
            oauth_login: rho_mcp::oauth::LoginPolicy::for_run(std::io::stderr().is_terminal()),
            ..MountOptions::default()
        },
        ambient: Arc::new(|name| std::env::var(name).ok()),
        accepts_questions: args.accept_questions,
        fixed_provider: None,
    };
    let runtime = runtime()?;
    runtime.block_on(async move {
        let (host, handle, events) = SessionHost::start(options)
            .await
            .map_err(anyhow::Error::msg)?;
        let (transport, writer) = rho_rpc::transport::stdio();
        // SIGINT and SIGTERM abort what runs and stop; EOF lets received work finish.
        let stop = rho_component::CancelSignal::new();
        let on_signal = stop.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let terminated = async {
                match term.as_mut() {
                    Some(term) => {
                        term.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = terminated => {}
            }
            on_signal.cancel();
        });
        rho_rpc::serve(host, handle, events, transport, stop).await;
        let _ = writer.await;
        Ok::<_, anyhow::Error>(())
    })?;
    // The stdin reader thread may still be blocked in read(2); nothing is left to do.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(ExitCode::SUCCESS)
}
