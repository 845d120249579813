//! `rho-test-browser`: stands in for a person's browser in rho's OAuth tests. rho runs it as
//! `$BROWSER <authorization-url>` (one argument, no shell); it logs in to the test
//! authorization server (`tests/peers/oauth/authorization_server.mjs`, oidc-provider's
//! devInteractions pages) as `alice`, consents, and delivers the final redirect to the
//! redirect URI, which is rho's loopback listener.
//!
//! Environment:
//! - `RHO_TEST_BROWSER`: `form` (default) follows the pages over plain HTTP with a fresh cookie
//!   jar and redirects off, submitting each page's form as it asks; `chromium` runs the same
//!   journey in a real headless Chromium driven by chromedriver over WebDriver (Debian
//!   `chromium` + `chromium-driver`; `bash .ci/run` installs them), and the browser itself
//!   navigates to the redirect URI.
//! - `RHO_TEST_BROWSER_TAMPER` (form mode): `none` (default); `state` replaces the `state`
//!   value of the final redirect; `path` first sends it to `/wrong` on the same host and port
//!   with the same query, which must answer 404, and then to the real redirect URI (so a test
//!   sees the listener refuse the wrong path and keep waiting); `iss` replaces the `iss` value
//!   by `http://127.0.0.1:1`.
//! - `RHO_TEST_BROWSER_LOG=<file>`: appends every URL visited, one per line (the first line is
//!   the URL rho opened).
//! - `RHO_TEST_BROWSER_HOLD=<file>` (form mode): writes the final redirect URL to the file
//!   instead of visiting it, and exits 0 (for pasting into `rho mcp login --no-browser`).
//! - `RHO_TEST_BROWSER_VERBOSE=1`: narrates each step (and lets chromedriver talk) on stderr.
//!
//! Exit status: 0 the redirect URI answered 2xx (or the redirect was held); 3 it answered
//! something else or could not be reached; 1 the journey failed before the redirect (the
//! reason is on stderr); 2 usage. Every request has a 10 s timeout and a run ends within 60 s,
//! so a run nobody waits for still ends. Nothing is written to stdout.
mod chromium;
mod form;
mod html;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use url::Url;

/// Who logs in (devInteractions accepts any login; it becomes the token's subject).
pub const LOGIN: &str = "alice";
/// devInteractions accepts any password.
pub const PASSWORD: &str = "any-password";
/// The whole run, login journey and delivery included.
const RUN_BUDGET: Duration = Duration::from_secs(60);
/// What `iss` becomes under `RHO_TEST_BROWSER_TAMPER=iss`.
const FOREIGN_ISSUER: &str = "http://127.0.0.1:1";
/// What `state` becomes under `RHO_TEST_BROWSER_TAMPER=state`.
const FOREIGN_STATE: &str = "rho-test-browser-tampered-state";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Form,
    Chromium,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tamper {
    None,
    State,
    Path,
    Iss,
}

struct Settings {
    start: Url,
    mode: Mode,
    tamper: Tamper,
    hold: Option<PathBuf>,
    log: Option<PathBuf>,
}

/// The URLs visited so far, appended to `RHO_TEST_BROWSER_LOG` as they happen (so a run that
/// times out still leaves its trail).
pub struct Journey {
    log: Option<PathBuf>,
}

impl Journey {
    /// Records one visited URL.
    pub fn visit(&mut self, url: &Url) {
        if std::env::var_os("RHO_TEST_BROWSER_VERBOSE").is_some() {
            say(&format!("visiting {url}"));
        }
        let Some(path) = &self.log else { return };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| writeln!(file, "{url}"));
        if let Err(e) = written {
            say(&format!("cannot append to {}: {e}", path.display()));
        }
    }
}

/// One line of report on stderr. A closed stderr is no reason to fail: rho may have started
/// this browser detached and stopped listening.
pub fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "rho-test-browser: {message}");
}

/// The start of a page's text, on one line, for error messages.
pub fn excerpt(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

fn settings() -> Result<Settings, String> {
    let mut args = std::env::args().skip(1);
    let (Some(url), None) = (args.next(), args.next()) else {
        return Err("usage: rho-test-browser <authorization-url>".into());
    };
    let start = Url::parse(&url).map_err(|e| format!("not a URL ({e}): {url}"))?;
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mode = match var("RHO_TEST_BROWSER").as_deref() {
        None | Some("form") => Mode::Form,
        Some("chromium") => Mode::Chromium,
        Some(other) => return Err(format!("RHO_TEST_BROWSER={other}: use form or chromium")),
    };
    let tamper = match var("RHO_TEST_BROWSER_TAMPER").as_deref() {
        None | Some("none") => Tamper::None,
        Some("state") => Tamper::State,
        Some("path") => Tamper::Path,
        Some("iss") => Tamper::Iss,
        Some(other) => {
            return Err(format!(
                "RHO_TEST_BROWSER_TAMPER={other}: use none, state, path or iss"
            ));
        }
    };
    let hold = var("RHO_TEST_BROWSER_HOLD").map(PathBuf::from);
    if mode == Mode::Chromium && (tamper != Tamper::None || hold.is_some()) {
        // A real browser follows the last redirect itself; there is no point to step in.
        return Err(
            "RHO_TEST_BROWSER_TAMPER and RHO_TEST_BROWSER_HOLD work in form mode only".into(),
        );
    }
    Ok(Settings {
        start,
        mode,
        tamper,
        hold,
        log: var("RHO_TEST_BROWSER_LOG").map(PathBuf::from),
    })
}

/// The redirect as a tampering test wants it delivered.
fn tamper(url: &Url, how: Tamper) -> Url {
    match how {
        Tamper::None => url.clone(),
        Tamper::State => with_query_value(url, "state", FOREIGN_STATE),
        Tamper::Iss => with_query_value(url, "iss", FOREIGN_ISSUER),
        Tamper::Path => {
            let mut wrong = url.clone();
            wrong.set_path("/wrong");
            wrong
        }
    }
}

/// `url` with every `key` in its query set to `value` (added when absent); other pairs keep
/// their order.
fn with_query_value(url: &Url, key: &str, value: &str) -> Url {
    let mut pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let mut found = false;
    for (k, v) in &mut pairs {
        if k == key {
            *v = value.to_owned();
            found = true;
        }
    }
    if !found {
        pairs.push((key.to_owned(), value.to_owned()));
    }
    let mut out = url.clone();
    out.set_query(None);
    out.query_pairs_mut().extend_pairs(&pairs);
    out
}

async fn run(settings: Settings) -> Result<u8, String> {
    let mut journey = Journey {
        log: settings.log.clone(),
    };
    journey.visit(&settings.start);
    match settings.mode {
        Mode::Form => {
            let redirect = form::follow(&mut journey, &settings.start).await?;
            let target = tamper(&redirect, settings.tamper);
            if let Some(hold) = &settings.hold {
                std::fs::write(hold, format!("{target}\n"))
                    .map_err(|e| format!("cannot write {}: {e}", hold.display()))?;
                say(&format!("held the redirect in {}", hold.display()));
                return Ok(0);
            }
            journey.visit(&target);
            let delivered = deliver(&target).await;
            if settings.tamper != Tamper::Path {
                return Ok(exit_status(delivered));
            }
            if delivered != Ok(404) {
                say(&format!("the wrong path answered {delivered:?}, not 404"));
                return Ok(3);
            }
            journey.visit(&redirect);
            Ok(exit_status(deliver(&redirect).await))
        }
        Mode::Chromium => {
            let arrival = chromium::journey(&mut journey, &settings.start).await?;
            let status = arrival
                .status
                .map_or_else(|| "unknown".to_owned(), |s| s.to_string());
            say(&format!(
                "chromium reached {} (HTTP status {status}): {}",
                arrival.url, arrival.text
            ));
            Ok(match arrival.status {
                Some(200..=299) => 0,
                _ => 3,
            })
        }
    }
}

/// Visits the redirect URI once, as the browser's last navigation: its HTTP status, or why
/// it could not be reached.
async fn deliver(target: &Url) -> Result<u16, String> {
    let response = form::client()?
        .get(target.clone())
        .send()
        .await
        .map_err(|e| format!("the redirect URI could not be reached: {e}"))?;
    let status = response.status();
    say(&format!("{} answered {status}", target.path()));
    Ok(status.as_u16())
}

/// The exit status for a delivery: 0 for 2xx, 3 otherwise.
fn exit_status(delivered: Result<u16, String>) -> u8 {
    match delivered {
        Ok(200..=299) => 0,
        Ok(_) => 3,
        Err(e) => {
            say(&e);
            3
        }
    }
}

fn main() -> ExitCode {
    let settings = match settings() {
        Ok(settings) => settings,
        Err(e) => {
            say(&e);
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            say(&format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(async { tokio::time::timeout(RUN_BUDGET, run(settings)).await }) {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(e)) => {
            say(&e);
            ExitCode::FAILURE
        }
        Err(_) => {
            say(&format!("gave up after {} s", RUN_BUDGET.as_secs()));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIRECT: &str =
        "http://127.0.0.1:8765/callback?code=abc&state=s1&iss=http%3A%2F%2F127.0.0.1%3A3999";

    #[test]
    fn tampering_changes_only_what_it_names() {
        let url = Url::parse(REDIRECT).unwrap();
        assert_eq!(tamper(&url, Tamper::None), url);
        assert_eq!(
            tamper(&url, Tamper::State).as_str(),
            "http://127.0.0.1:8765/callback?code=abc&state=rho-test-browser-tampered-state&iss=http%3A%2F%2F127.0.0.1%3A3999"
        );
        assert_eq!(
            tamper(&url, Tamper::Iss).as_str(),
            "http://127.0.0.1:8765/callback?code=abc&state=s1&iss=http%3A%2F%2F127.0.0.1%3A1"
        );
        assert_eq!(
            tamper(&url, Tamper::Path).as_str(),
            "http://127.0.0.1:8765/wrong?code=abc&state=s1&iss=http%3A%2F%2F127.0.0.1%3A3999"
        );
    }

    #[test]
    fn a_missing_value_is_added() {
        let url = Url::parse("http://127.0.0.1:1/cb?code=x").unwrap();
        assert_eq!(
            tamper(&url, Tamper::State).as_str(),
            "http://127.0.0.1:1/cb?code=x&state=rho-test-browser-tampered-state"
        );
    }

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt("a\n  b\tc"), "a b c");
        assert_eq!(excerpt(&"x".repeat(400)).chars().count(), 301);
    }
}
