//! Which server a stored credential belongs to: the canonical form of a server's address (the
//! resource its token is issued for, RFC 8707 and the MCP authorization rules), and whether a
//! stored credential fits the server as configured now. Pure functions: no IO, no network, so
//! the check runs before any request could carry a token (`docs/credentials.md`, "Bound to the
//! server").

use std::fmt::Write as _;

/// The canonical form of a server's URL: the resource a credential is bound to.
///
/// Scheme and host in lower case, the scheme's default port dropped, no user information and
/// no fragment; `.` and `..` path segments resolved; the root path written without its slash
/// (`https://h/` is `https://h`: the same request target); any other path kept exactly, a
/// trailing slash included (`/mcp/` and `/mcp` are different request targets, so different
/// resources); the query kept (a different query may select a different resource), an empty
/// one dropped.
///
/// # Errors
///
/// A text that is not an absolute URL with a host. The message never quotes the URL (it may
/// carry a password in its user information).
pub(crate) fn canonical_resource(url: &str) -> Result<String, String> {
    let url = url::Url::parse(url).map_err(|e| format!("the url is not an absolute URL ({e})"))?;
    let host = url
        .host_str()
        .ok_or_else(|| "the url has no host".to_owned())?;
    // The parser already writes the scheme, and the host of `http`/`https`, in lower case and
    // leaves out the scheme's default port.
    let mut canonical = format!("{}://{}", url.scheme(), host.to_ascii_lowercase());
    if let Some(port) = url.port() {
        let _ = write!(canonical, ":{port}");
    }
    if url.path() != "/" {
        canonical.push_str(url.path());
    }
    if let Some(query) = url.query().filter(|q| !q.is_empty()) {
        canonical.push('?');
        canonical.push_str(query);
    }
    Ok(canonical)
}

/// Whether a stored credential may be sent to the configured server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// It was issued for the server at its configured address.
    Bound,
    /// It was issued for another address (the server's URL was edited, or a plugin update
    /// moved it): never sent; a new login replaces it.
    AddressChanged,
    /// It names no address (saved by an older rho, credential format 1): never sent; a new
    /// login replaces it.
    Unbound,
}

impl Binding {
    /// How `stored` (the credential's resource) relates to `configured` (the server's
    /// canonical address, from [`canonical_resource`]).
    pub(crate) fn of(stored: Option<&str>, configured: &str) -> Self {
        match stored {
            None => Self::Unbound,
            Some(stored) if canonical_resource(stored).is_ok_and(|s| s == configured) => {
                Self::Bound
            }
            Some(_) => Self::AddressChanged,
        }
    }

    /// Why a credential that is not [`Binding::Bound`] needs a new login (the same words in
    /// `rho mcp list` and in a connection's error).
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Bound => "the stored login fits the server",
            Self::AddressChanged => "the server's address changed",
            Self::Unbound => {
                "the stored login was saved by an older rho and does not name the server's address"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(url: &str) -> String {
        canonical_resource(url).unwrap()
    }

    #[test]
    fn scheme_host_and_default_port_are_normalized() {
        assert_eq!(
            canonical("HTTPS://MCP.Example.COM:443/mcp"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(canonical("http://127.0.0.1:80/mcp"), "http://127.0.0.1/mcp");
        assert_eq!(
            canonical("https://mcp.example.com:8443/mcp"),
            "https://mcp.example.com:8443/mcp"
        );
        assert_eq!(canonical("http://[::1]:3000/mcp"), "http://[::1]:3000/mcp");
        assert_eq!(
            canonical("HTTP://LOCALHOST:4000/mcp"),
            "http://localhost:4000/mcp"
        );
    }

    #[test]
    fn the_path_is_kept_except_the_root_slash() {
        assert_eq!(canonical("https://h"), "https://h");
        assert_eq!(canonical("https://h/"), "https://h");
        assert_eq!(canonical("https://h/mcp/"), "https://h/mcp/");
        assert_ne!(canonical("https://h/mcp/"), canonical("https://h/mcp"));
        assert_eq!(canonical("https://h/a/../mcp"), "https://h/mcp");
        assert_eq!(canonical("https://h/MCP"), "https://h/MCP");
    }

    #[test]
    fn fragment_user_information_and_an_empty_query_are_dropped() {
        assert_eq!(canonical("https://h/mcp#part"), "https://h/mcp");
        assert_eq!(canonical("https://u:secret@h/mcp"), "https://h/mcp");
        assert_eq!(canonical("https://h/mcp?"), "https://h/mcp");
        assert_eq!(
            canonical("https://h/mcp?tenant=a"),
            "https://h/mcp?tenant=a"
        );
        assert_eq!(canonical("https://h/?tenant=a"), "https://h?tenant=a");
    }

    #[test]
    fn a_text_that_is_not_an_absolute_url_is_refused_without_quoting_it() {
        for bad in ["mcp.example.com/secret", "", "/mcp", "data:secret"] {
            let error = canonical_resource(bad).unwrap_err();
            assert!(!error.contains("secret"), "{error}");
        }
    }

    #[test]
    fn a_credential_fits_only_the_address_it_was_issued_for() {
        let configured = canonical("http://127.0.0.1:4000/mcp");
        for same in [
            "http://127.0.0.1:4000/mcp",
            "HTTP://127.0.0.1:4000/mcp",
            "http://127.0.0.1:4000/./mcp#x",
        ] {
            assert_eq!(
                Binding::of(Some(same), &configured),
                Binding::Bound,
                "{same}"
            );
        }
        for other in [
            "http://127.0.0.1:4001/mcp",
            "http://127.0.0.2:4000/mcp",
            "https://127.0.0.1:4000/mcp",
            "http://127.0.0.1:4000/mcp/",
            "http://127.0.0.1:4000/",
            "http://127.0.0.1:4000/mcp?x=1",
            "not a url",
            "",
        ] {
            assert_eq!(
                Binding::of(Some(other), &configured),
                Binding::AddressChanged,
                "{other}"
            );
        }
        assert_eq!(Binding::of(None, &configured), Binding::Unbound);
    }
}
