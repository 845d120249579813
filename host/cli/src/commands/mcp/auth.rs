//! `rho mcp login` and `rho mcp logout`, and the login states inventories show (from the
//! credential store alone, never a token).

use super::*;

/// The credential store of this run.
pub(super) fn credentials(ctx: &Context) -> rho_config::CredentialStore {
    rho_config::CredentialStore::new(ctx.paths.credentials_dir())
}

/// Whether a person is at this run's terminal: stdin to answer, stderr to read what rho says
/// (and the authorization address when no browser window appears).
pub(super) fn person_at_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// `rho mcp login <id>`. The system browser opens only where [`LoginPolicy::for_run`] lets a
/// login start (a person at the terminal, outside CI); elsewhere the command says how instead,
/// before anything is contacted.
pub(super) fn login(
    ctx: &Context,
    id: &str,
    no_browser: bool,
    scopes: &[String],
) -> anyhow::Result<ExitCode> {
    let slots = load_slots(ctx)?;
    let spec = startable(&slots, id)?;
    let browser: Arc<dyn Browser> = if no_browser {
        Arc::new(PasteBrowser)
    } else {
        match LoginPolicy::for_run(person_at_terminal()) {
            LoginPolicy::Browser(browser) => browser,
            LoginPolicy::Never => {
                let why = if std::env::var_os("CI").is_some() {
                    "CI is set"
                } else {
                    "rho is not running on a terminal"
                };
                bail!(
                    "not opening a browser to log in to {id:?}: {why}; run `rho mcp login {id}` \
                     from a terminal outside CI, or pass --no-browser to open the address \
                     yourself and paste back where the browser ends up"
                );
            }
        }
    };
    let store = credentials(ctx);
    let report = runtime::run(|_| async {
        Ok(rho_mcp::oauth::login(
            &spec,
            &store,
            browser.as_ref(),
            scopes,
            &rho_mcp::process_ambient,
        )
        .await?)
    })?;
    if ctx.json {
        json_sorted(&McpLogin {
            server: id,
            issuer: &report.issuer,
            scopes: &report.scopes,
            expires_at: report.expires_at,
            refreshable: report.refreshable,
        });
    } else {
        let scopes = if report.scopes.is_empty() {
            String::new()
        } else {
            format!(" with scopes {}", report.scopes.join(" "))
        };
        out(&format!(
            "logged in to {} at {}{}\n",
            clean(id),
            clean(&report.issuer),
            clean(&scopes)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// `rho mcp logout <id>`: removes the stored tokens (a file rho cannot read included).
pub(super) fn logout(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let slots = load_slots(ctx)?;
    if !slots.iter().any(|s| s.id == id) {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    }
    let removed = credentials(ctx).remove(id)?;
    if ctx.json {
        json_sorted(&McpLogout {
            server: id,
            removed,
        });
    } else if removed {
        out(&format!(
            "logged out of {}: its tokens are removed\n",
            clean(id)
        ));
    } else {
        out(&format!("{} has no stored tokens\n", clean(id)));
    }
    Ok(ExitCode::SUCCESS)
}

/// The login state of every OAuth server among `entries`.
pub(super) fn add_auth_states(ctx: &Context, entries: &mut [ServerEntry]) {
    let store = credentials(ctx);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in entries.iter_mut() {
        if let Some(spec) = entry.spec.filter(|s| rho_mcp::oauth::oauth_of(s).is_some()) {
            let state = rho_mcp::oauth::auth_state(&store, spec, now);
            entry.auth = Some(AuthEntry::of(&state));
        }
    }
}
