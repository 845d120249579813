//! Endpoint rules shared by every source of MCP servers: remote URLs and HTTP headers.
//!
//! Agent Plugins §7.2.1 and rho's own config rules agree: absolute `http`/`https` URLs without
//! user information or a fragment, plaintext only to loopback, and valid header fields with no
//! name given twice in different case. Pure functions: no IO.

use std::net::IpAddr;

fn quote(text: &str) -> String {
    format!("{:?}", text.chars().take(200).collect::<String>())
}

/// Why a remote URL breaks the rules of [`check_remote_url`]. Its message never holds the URL
/// itself (it may carry a password in its user information).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlProblem {
    /// Not an absolute URL (the parser's reason).
    NotAbsolute(String),
    /// A scheme other than `http`/`https` (quoted, cut to 200 characters).
    Scheme(String),
    /// User information (`user:password@`).
    UserInfo,
    /// A fragment (`#...`).
    Fragment,
    /// No host.
    NoHost,
    /// `http` to a host that is not loopback (quoted).
    PlaintextRemote(String),
}

impl std::fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAbsolute(why) => write!(f, "url is not an absolute URL ({why})"),
            Self::Scheme(scheme) => write!(f, "url scheme must be http or https, not {scheme}"),
            Self::UserInfo => f.write_str("url must not contain user information"),
            Self::Fragment => f.write_str("url must not contain a fragment"),
            Self::NoHost => f.write_str("url has no host"),
            Self::PlaintextRemote(host) => write!(
                f,
                "url must use https for the non-loopback host {host} (http is allowed only for \
                 localhost and loopback addresses)"
            ),
        }
    }
}

impl std::error::Error for UrlProblem {}

/// The remote URL rules (§7.2.1): absolute `http`/`https`, no user information, no fragment,
/// and plaintext only for `localhost` or a loopback IP literal. The URL text itself never
/// appears in a message (it may carry a password in its user information).
pub fn check_remote_url(raw: &str) -> Result<(), UrlProblem> {
    let url = url::Url::parse(raw).map_err(|e| UrlProblem::NotAbsolute(e.to_string()))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(UrlProblem::Scheme(quote(scheme)));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlProblem::UserInfo);
    }
    if url.fragment().is_some() {
        return Err(UrlProblem::Fragment);
    }
    let Some(host) = url.host() else {
        return Err(UrlProblem::NoHost);
    };
    if scheme == "http" && !is_loopback_host(&host) {
        return Err(UrlProblem::PlaintextRemote(quote(&host.to_string())));
    }
    Ok(())
}

/// Exactly `localhost`, or an IP literal in a loopback range (127.0.0.0/8, ::1). Names that
/// merely resolve to loopback, `*.localhost` and IPv4-mapped IPv6 forms are not loopback here.
pub fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(name) => *name == "localhost",
        url::Host::Ipv4(ip) => IpAddr::V4(*ip).is_loopback(),
        url::Host::Ipv6(ip) => IpAddr::V6(*ip).is_loopback(),
    }
}

/// Header rules (§7.2.1): valid field names and values, and no name twice in different case.
pub fn check_headers(headers: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in headers {
        if !is_header_name(name) {
            problems.push(format!(
                "header name {} is not a valid HTTP field name",
                quote(name)
            ));
        }
        if !is_header_value(value) {
            problems.push(format!(
                "header {} has a value that is not a valid HTTP field value",
                quote(name)
            ));
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            problems.push(format!(
                "header {} appears more than once (names ignore case)",
                quote(name)
            ));
        } else {
            seen.push(lower);
        }
    }
    problems
}

/// RFC 9110 `token`.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// RFC 9110 `field-value`: visible characters, spaces and tabs inside, no CR, LF or NUL.
fn is_header_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    let edge_ok = |b: Option<&u8>| !matches!(b, Some(b' ' | b'\t'));
    edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|&b| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_rules() {
        for ok in [
            "https://deploy.example.com/mcp",
            "http://localhost:3000/mcp",
            "http://127.0.0.1/",
            "http://127.9.9.9/",
            "http://[::1]:8080/mcp",
            "http://LOCALHOST/",
            "http://127.1/",
        ] {
            assert!(check_remote_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.com/mcp",
            "https://u:p@h/",
            "https://u@h/",
            "https://h/#f",
            "ftp://h/",
            "/relative",
            "http://0.0.0.0/",
            "http://foo.localhost/",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost./",
            "mailto:a@b",
            "",
            "http://10.0.0.1/",
        ] {
            assert!(check_remote_url(bad).is_err(), "{bad}");
        }
        let e = check_remote_url("https://user:hunter2@h/").unwrap_err();
        assert_eq!(e, UrlProblem::UserInfo);
        assert!(!e.to_string().contains("hunter2"));
    }

    #[test]
    fn header_rules() {
        let h = |n: &str, v: &str| (n.to_string(), v.to_string());
        assert!(check_headers(&[h("X-Tenant", "public tenant")]).is_empty());
        assert_eq!(check_headers(&[h("X-A", "1"), h("x-a", "2")]).len(), 1);
        assert_eq!(check_headers(&[h("X A", "1")]).len(), 1);
        assert_eq!(check_headers(&[h("X-A", "a\r\nInjected: 1")]).len(), 1);
        assert_eq!(check_headers(&[h("", "1")]).len(), 1);
        assert_eq!(check_headers(&[h("X", " padded")]).len(), 1);
    }
}
