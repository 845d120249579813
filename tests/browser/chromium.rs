//! The real-browser mode: headless Debian Chromium driven by chromedriver over plain WebDriver
//! HTTP (W3C WebDriver, classic), so the login journey runs through a real page, cookies,
//! forms and redirects included.

use std::net::TcpListener;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use url::Url;

use crate::{Journey, LOGIN, PASSWORD};

const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Starting the browser is the slow part (a few seconds on a loaded 2-core machine).
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);
/// The W3C name of an element reference in WebDriver answers.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
const INSTALL_HINT: &str = "bash .ci/run installs it (apt-get install chromium chromium-driver)";

/// What the browser ended on.
pub struct Arrival {
    /// The final page URL (the redirect URI with the code).
    pub url: Url,
    /// The HTTP status of that page's response, when Chromium reports one (0 on an error page).
    pub status: Option<u64>,
    /// The start of the page's text.
    pub text: String,
}

/// Runs the journey from `start` in a fresh headless Chromium; the browser itself delivers the
/// final redirect.
pub async fn journey(journey: &mut Journey, start: &Url) -> Result<Arrival, String> {
    let chromium = find(
        "RHO_TEST_CHROMIUM",
        &["/usr/lib/chromium/chromium", "/usr/bin/chromium"],
        "chromium",
    )?;
    let driver_bin = find(
        "RHO_TEST_CHROMEDRIVER",
        &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
        "chromedriver",
    )?;
    let profile = tempfile::Builder::new()
        .prefix("rho-test-browser-")
        .tempdir()
        .map_err(|e| format!("cannot create a browser profile directory: {e}"))?;
    let driver = Driver::start(&driver_bin).await?;
    let result = drive(&driver, &chromium, profile.path(), journey, start).await;
    driver.stop().await;
    result
}

fn find(env: &str, candidates: &[&str], name: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(env) {
        return Ok(PathBuf::from(path));
    }
    if let Some(path) = candidates.iter().map(PathBuf::from).find(|p| p.exists()) {
        return Ok(path);
    }
    let in_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.exists())
    });
    in_path.ok_or_else(|| format!("{name} is not installed: {INSTALL_HINT}"))
}

async fn drive(
    driver: &Driver,
    chromium: &Path,
    profile: &Path,
    journey: &mut Journey,
    start: &Url,
) -> Result<Arrival, String> {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        &format!("--user-data-dir={}", profile.display()),
    ];
    let capabilities = json!({
        "capabilities": {"alwaysMatch": {
            "goog:chromeOptions": {"binary": chromium.to_string_lossy(), "args": args},
            "pageLoadStrategy": "normal",
            "timeouts": {"pageLoad": 10_000, "script": 5_000, "implicit": 0},
        }}
    });
    let created = driver
        .call("POST", "/session", Some(capabilities), SESSION_TIMEOUT)
        .await
        .map_err(|e| format!("chromium did not start: {e}"))?;
    let session = created["sessionId"]
        .as_str()
        .ok_or_else(|| format!("no sessionId in {created}"))?
        .to_owned();
    *driver.session.lock().map_err(|_| "poisoned")? = Some(session.clone());
    let s = |path: &str| format!("/session/{session}{path}");

    let origin = start.origin();
    // Navigation may end in an error page when nothing listens on the redirect URI; the URL
    // is what counts, so a failed load is not a failure here.
    let _ = driver
        .call(
            "POST",
            &s("/url"),
            Some(json!({"url": start.as_str()})),
            REQUEST_TIMEOUT,
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut acted_on = Vec::<String>::new();
    loop {
        if Instant::now() > deadline {
            return Err("the login journey did not leave the authorization server".into());
        }
        let current = driver
            .call("GET", &s("/url"), None, REQUEST_TIMEOUT)
            .await?;
        let current = current.as_str().unwrap_or_default().to_owned();
        let Ok(url) = Url::parse(&current) else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        // Before the first navigation commits the page is `about:blank` or Chromium's new-tab
        // page; only a web page elsewhere is the redirect URI.
        if matches!(url.scheme(), "http" | "https") && url.origin() != origin {
            journey.visit(&url);
            return arrival(driver, &s, url).await;
        }
        if acted_on.contains(&current) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let Some(prompt) = find_element(driver, &s, "input[name=prompt]").await? else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        journey.visit(&url);
        let prompt = driver
            .call(
                "GET",
                &s(&format!("/element/{prompt}/attribute/value")),
                None,
                REQUEST_TIMEOUT,
            )
            .await?;
        if prompt == "login" {
            for (selector, text) in [
                ("input[name=login]", LOGIN),
                ("input[name=password]", PASSWORD),
            ] {
                let element = find_element(driver, &s, selector)
                    .await?
                    .ok_or_else(|| format!("the login page has no {selector}"))?;
                driver
                    .call(
                        "POST",
                        &s(&format!("/element/{element}/value")),
                        Some(json!({"text": text})),
                        REQUEST_TIMEOUT,
                    )
                    .await?;
            }
        }
        let submit = find_element(driver, &s, "button[type=submit]")
            .await?
            .ok_or_else(|| format!("the {prompt} page has no submit button"))?;
        acted_on.push(current);
        let _ = driver
            .call(
                "POST",
                &s(&format!("/element/{submit}/click")),
                Some(json!({})),
                REQUEST_TIMEOUT,
            )
            .await;
    }
}

async fn arrival(driver: &Driver, s: &dyn Fn(&str) -> String, url: Url) -> Result<Arrival, String> {
    // The navigation timing entry carries the final response's status (0 on an error page).
    let script = json!({
        "script": "const e = performance.getEntriesByType('navigation')[0]; \
                   return [e ? e.responseStatus : null, document.body ? document.body.innerText : ''];",
        "args": [],
    });
    let answer = driver
        .call("POST", &s("/execute/sync"), Some(script), REQUEST_TIMEOUT)
        .await
        .unwrap_or(Value::Null);
    Ok(Arrival {
        url,
        status: answer[0].as_u64(),
        text: crate::excerpt(answer[1].as_str().unwrap_or_default()),
    })
}

async fn find_element(
    driver: &Driver,
    s: &dyn Fn(&str) -> String,
    selector: &str,
) -> Result<Option<String>, String> {
    let found = driver
        .call(
            "POST",
            &s("/elements"),
            Some(json!({"using": "css selector", "value": selector})),
            REQUEST_TIMEOUT,
        )
        .await?;
    Ok(found
        .as_array()
        .and_then(|all| all.first())
        .and_then(|e| e[ELEMENT_KEY].as_str())
        .map(str::to_owned))
}

/// A chromedriver in its own process group, stopped on drop. Chromium and its helpers run
/// inside that group, except `chrome_crashpad_handler`, which starts its own session but exits
/// once Chromium is gone.
struct Driver {
    child: Child,
    base: String,
    http: reqwest::Client,
    session: std::sync::Mutex<Option<String>>,
    /// Set once the child is reaped: its pid (and group id) may then belong to someone else.
    stopped: bool,
}

impl Driver {
    async fn start(bin: &Path) -> Result<Self, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port for chromedriver: {e}"))?
            .port();
        let verbose = std::env::var_os("RHO_TEST_BROWSER_VERBOSE").is_some();
        // Our stdout is not a log: chromedriver's banner and Chromium's noise go to our stderr
        // when asked for, else nowhere.
        let output = || {
            if verbose {
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .map_or_else(|_| Stdio::null(), Stdio::from)
            } else {
                Stdio::null()
            }
        };
        let child = Command::new(bin)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdin(Stdio::null())
            .stdout(output())
            .stderr(output())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        let driver = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            http,
            session: std::sync::Mutex::new(None),
            stopped: false,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let status = driver
                .call("GET", "/status", None, Duration::from_secs(2))
                .await;
            if status.is_ok_and(|s| s["ready"] == true) {
                return Ok(driver);
            }
            if Instant::now() > deadline {
                return Err(format!("chromedriver did not answer on port {port}"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// One WebDriver command; its `value`, or the WebDriver error as text.
    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "POST" => self
                .http
                .post(&url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.unwrap_or_else(|| json!({})).to_string()),
            "DELETE" => self.http.delete(&url),
            _ => self.http.get(&url),
        };
        let response = request
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| format!("WebDriver {method} {path}: {e}"))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| format!("WebDriver {method} {path}: {e}"))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "WebDriver {method} {path}: not JSON ({e}): {}",
                crate::excerpt(&text)
            )
        })?;
        if !status.is_success() {
            return Err(format!(
                "WebDriver {method} {path}: {status}: {} {}",
                value["value"]["error"].as_str().unwrap_or("?"),
                crate::excerpt(value["value"]["message"].as_str().unwrap_or_default())
            ));
        }
        Ok(value["value"].clone())
    }

    /// Closes the session (Chromium exits) and stops chromedriver.
    async fn stop(mut self) {
        let session = self.session.lock().ok().and_then(|mut s| s.take());
        if let Some(session) = session {
            let _ = self
                .call(
                    "DELETE",
                    &format!("/session/{session}"),
                    None,
                    Duration::from_secs(5),
                )
                .await;
        }
        self.kill();
    }

    fn kill(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        rho_e2e::kill_group_and_reap(&mut self.child);
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Also on timeouts and errors: no browser outlives this process's run.
        self.kill();
    }
}
