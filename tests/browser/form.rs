//! The default browser: plain HTTP with its own cookie jar and no automatic redirects, doing
//! what a person does on the authorization server's login and consent pages.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, LOCATION, SET_COOKIE};
use url::Url;

use crate::{Journey, LOGIN, PASSWORD};

/// Every request is bounded; the whole run is bounded again by the caller.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// More steps than any login + consent journey needs; a loop means the page is not understood.
const MAX_STEPS: usize = 30;

/// A client with redirects off and no proxy (everything here is loopback).
pub fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

/// Walks from `start` through the authorization server's pages until a redirect leaves its
/// origin, and returns that redirect (not visited).
pub async fn follow(journey: &mut Journey, start: &Url) -> Result<Url, String> {
    let client = client()?;
    let origin = start.origin();
    let mut jar = Jar::default();
    let mut url = start.clone();
    let mut form_body: Option<String> = None;
    for _ in 0..MAX_STEPS {
        let request = match form_body.take() {
            Some(body) => client
                .post(url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body),
            None => client.get(url.clone()),
        };
        let request = match jar.header_for(&url) {
            Some(cookies) => request.header(COOKIE, cookies),
            None => request,
        };
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        jar.store(&url, response.headers());
        if status.is_redirection() {
            let location = location(response.headers(), &url)?;
            if location.origin() != origin {
                return Ok(location);
            }
            url = location;
            journey.visit(&url);
            continue;
        }
        let text = response
            .text()
            .await
            .map_err(|e| format!("{url}: reading the page: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "{url} answered {status}: {}",
                crate::excerpt(&text)
            ));
        }
        let Some(form) = crate::html::first_form(&text) else {
            return Err(format!(
                "{url}: a page without a form: {}",
                crate::excerpt(&text)
            ));
        };
        let mut fields = form.hidden.clone();
        for field in &form.fields {
            match field.as_str() {
                "login" => fields.push(("login".into(), LOGIN.into())),
                "password" => fields.push(("password".into(), PASSWORD.into())),
                other => return Err(format!("{url}: the form asks for {other:?}")),
            }
        }
        let prompt = form.hidden_value("prompt").unwrap_or("?");
        verbose(&format!("submitting the {prompt} form"));
        let target = url
            .join(&form.action)
            .map_err(|e| format!("{url}: form action {:?}: {e}", form.action))?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&fields)
            .finish();
        if form.method == "post" {
            form_body = Some(body);
            url = target;
        } else {
            url = target;
            url.set_query(Some(&body));
        }
        journey.visit(&url);
    }
    Err(format!(
        "no redirect out of {} after {MAX_STEPS} steps",
        start.origin().ascii_serialization()
    ))
}

fn location(headers: &HeaderMap, base: &Url) -> Result<Url, String> {
    let value = headers
        .get(LOCATION)
        .ok_or_else(|| format!("{base}: a redirect without Location"))?;
    let text = value
        .to_str()
        .map_err(|_| format!("{base}: Location is not text"))?;
    base.join(text)
        .map_err(|e| format!("{base}: Location {text:?}: {e}"))
}

fn verbose(message: &str) {
    if std::env::var_os("RHO_TEST_BROWSER_VERBOSE").is_some() {
        crate::say(message);
    }
}

/// Cookies of one origin (the authorization server's), by name and path.
#[derive(Default)]
struct Jar {
    cookies: Vec<Cookie>,
}

struct Cookie {
    name: String,
    value: String,
    path: String,
}

impl Jar {
    fn store(&mut self, url: &Url, headers: &HeaderMap) {
        for value in headers.get_all(SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let mut parts = text.split(';');
            let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else {
                continue;
            };
            let mut path = default_path(url);
            let mut expired = false;
            for attribute in parts {
                let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
                match key.trim().to_ascii_lowercase().as_str() {
                    "path" if val.trim().starts_with('/') => path = val.trim().to_owned(),
                    "max-age" => expired |= val.trim().parse::<i64>().is_ok_and(|s| s <= 0),
                    // oidc-provider clears a cookie with an expiry at the epoch.
                    "expires" => expired |= val.contains("1970"),
                    _ => {}
                }
            }
            let name = name.trim().to_owned();
            self.cookies.retain(|c| !(c.name == name && c.path == path));
            if !expired {
                self.cookies.push(Cookie {
                    name,
                    value: value.trim().to_owned(),
                    path,
                });
            }
        }
    }

    fn header_for(&self, url: &Url) -> Option<String> {
        let path = url.path();
        let sent: Vec<String> = self
            .cookies
            .iter()
            .filter(|c| path_matches(path, &c.path))
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        (!sent.is_empty()).then(|| sent.join("; "))
    }
}

/// RFC 6265 §5.1.4: the directory of the request path.
fn default_path(url: &Url) -> String {
    let path = url.path();
    match path.rfind('/') {
        Some(0) | None => "/".to_owned(),
        Some(i) => path[..i].to_owned(),
    }
}

/// RFC 6265 §5.1.4 path-match.
fn path_matches(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request[cookie.len()..].starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(SET_COOKIE, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn cookies_go_only_where_their_path_allows_and_cleared_ones_go_away() {
        let base = Url::parse("http://127.0.0.1:1/auth?x=1").unwrap();
        let mut jar = Jar::default();
        jar.store(
            &base,
            &headers(&[
                "_interaction=a; path=/interaction/u1; httponly",
                "_interaction_resume=b; path=/auth/u1; httponly",
                "_session=s; path=/; expires=Tue, 15 Dec 2026 00:00:00 GMT",
            ]),
        );
        let at = |jar: &Jar, p: &str| jar.header_for(&base.join(p).unwrap());
        assert_eq!(
            at(&jar, "/interaction/u1").unwrap(),
            "_interaction=a; _session=s"
        );
        assert_eq!(
            at(&jar, "/auth/u1").unwrap(),
            "_interaction_resume=b; _session=s"
        );
        assert_eq!(at(&jar, "/interaction/u10").unwrap(), "_session=s");
        jar.store(
            &base,
            &headers(&[
                "_interaction=; path=/interaction/u1; expires=Thu, 01 Jan 1970 00:00:00 GMT",
            ]),
        );
        assert_eq!(at(&jar, "/interaction/u1").unwrap(), "_session=s");
    }

    #[test]
    fn default_path_is_the_request_directory() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(default_path(&url("http://h/a/b/c")), "/a/b");
        assert_eq!(default_path(&url("http://h/auth")), "/");
    }
}
