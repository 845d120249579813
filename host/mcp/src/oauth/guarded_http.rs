//! The HTTP client of every OAuth leg (discovery, registration, token requests): HTTPS except
//! to loopback, checked on each request whatever document named the URL, so metadata cannot
//! move a leg onto plaintext; redirects never followed here (rmcp follows same-origin
//! discovery redirects itself, through this client, so each hop is checked again); each
//! request bounded in time and its body in size.

use std::time::Duration;

use futures_core::Stream;
use rho_component::endpoint::check_remote_url;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
};

/// The longest one OAuth request may take (discovery and login have their own, longer,
/// bounds around several requests).
pub(crate) const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(30);

/// The most an OAuth response body may hold: metadata documents and token responses are a few
/// kilobytes.
pub(crate) const RESPONSE_MAX_BYTES: usize = 1024 * 1024;

/// Why a request was not sent, or its answer not read.
#[derive(Debug, thiserror::Error)]
enum GuardError {
    #[error("refused {url}: {reason} (every OAuth endpoint must use HTTPS, except on loopback)")]
    Plaintext { url: String, reason: String },
    #[error("the response from {url} is larger than {RESPONSE_MAX_BYTES} bytes")]
    TooLarge { url: String },
}

/// [`OAuthHttpClient`] with rho's rules.
pub(crate) struct GuardedHttp {
    client: reqwest::Client,
}

impl GuardedHttp {
    pub(crate) fn new() -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIME_LIMIT)
            .build()
            .map_err(|e| format!("cannot build the OAuth HTTP client: {e}"))?;
        Ok(Self { client })
    }
}

impl OAuthHttpClient for GuardedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request, timeout, ..
            } = request;
            let url = request.uri().to_string();
            check_endpoint(&url).map_err(|reason| {
                boxed(GuardError::Plaintext {
                    url: url.clone(),
                    reason: reason.to_string(),
                })
            })?;
            let mut request = reqwest::Request::try_from(request).map_err(boxed)?;
            *request.timeout_mut() = Some(
                timeout
                    .unwrap_or(REQUEST_TIME_LIMIT)
                    .min(REQUEST_TIME_LIMIT),
            );
            let response = self.client.execute(request).await.map_err(boxed)?;
            let mut builder = http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let body = read_bounded(response, &url).await?;
            builder.body(body).map_err(boxed)
        })
    }
}

/// `url` may carry an OAuth leg: `https`, or `http` to a loopback host.
pub(crate) fn check_endpoint(url: &str) -> Result<(), rho_component::endpoint::UrlProblem> {
    check_remote_url(url)
}

async fn read_bounded(
    response: reqwest::Response,
    url: &str,
) -> Result<Vec<u8>, OAuthHttpClientError> {
    let mut body = Vec::new();
    let mut chunks = std::pin::pin!(response.bytes_stream());
    while let Some(chunk) = std::future::poll_fn(|cx| chunks.as_mut().poll_next(cx)).await {
        let chunk = chunk.map_err(boxed)?;
        if chunk.len() > RESPONSE_MAX_BYTES - body.len() {
            return Err(boxed(GuardError::TooLarge {
                url: url.to_owned(),
            }));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn boxed(error: impl std::error::Error + Send + Sync + 'static) -> OAuthHttpClientError {
    Box::new(error)
}
