//! The Streamable HTTP transport: HTTPS except loopback (checked again here, whatever the
//! source), no redirects (configured headers never reach another origin), literal headers plus
//! headers from the environment (which win on a name collision; values are never logged).

use std::collections::HashMap;
use std::ffi::OsString;

use reqwest::header::{HeaderName, HeaderValue};
use rho_component::endpoint::check_remote_url;
use rho_component::{HttpServerSpec, McpServerSpec};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::McpError;

pub(crate) fn transport(
    spec: &McpServerSpec,
    http: &HttpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
) -> Result<StreamableHttpClientTransport<reqwest::Client>, McpError> {
    let fail = |message: String| McpError::Connect {
        server: spec.id.clone(),
        message,
    };
    check_remote_url(&http.url).map_err(fail)?;
    let mut headers: HashMap<HeaderName, HeaderValue> = HashMap::new();
    let mut put = |name: &str, value: &str| -> Result<(), McpError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail(format!("header name {name:?} is not valid")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| fail(format!("header {name} has an invalid value")))?;
        value.set_sensitive(true);
        headers.insert(name, value);
        Ok(())
    };
    for (name, value) in &http.headers {
        put(name, value)?;
    }
    for (name, variable) in &http.headers_from_env {
        let value = ambient(variable).ok_or_else(|| McpError::MissingEnv {
            server: spec.id.clone(),
            variable: variable.clone(),
        })?;
        let value = value
            .into_string()
            .map_err(|_| fail(format!("{variable} is not valid UTF-8")))?;
        put(name, &value)?;
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(spec.startup_timeout)
        .build()
        .map_err(|e| fail(format!("cannot build the HTTP client: {e}")))?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(http.url.clone()).custom_headers(headers);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
