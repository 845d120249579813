//! The HTTP/1.1 side both scripted model servers (`fake-model`, `fake-anthropic`) share: the
//! listener announced on stdout (and in a port file), one request read with bounds and a
//! deadline, and JSON answers. Each binary includes this file as a module.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MAX_HEAD_BYTES: usize = 64 << 10;
const MAX_BODY_BYTES: usize = 32 << 20;
/// How long a client has to send its whole request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `serve` on a runtime of two workers; an error is printed after `name` and fails the
/// process.
pub fn run(
    name: &str,
    serve: impl std::future::Future<Output = Result<(), String>>,
) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{name}: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Binds 127.0.0.1:`port` (0: any free port), writes the port to `port_file` (atomically)
/// when given, and prints `listening <port>`.
pub async fn listen(port: u16, port_file: Option<&Path>) -> Result<TcpListener, String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot bind 127.0.0.1:{port}: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?
        .port();
    if let Some(path) = port_file {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, format!("{port}\n"))
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    println!("listening {port}");
    let _ = std::io::stdout().flush();
    Ok(listener)
}

/// Accepts connections forever, each answered by `handle` on a task of its own (connections
/// live until answered; the process is killed at the end of the test). `name` prefixes what
/// goes to stderr.
pub async fn accept_forever<S, F, Fut>(
    listener: TcpListener,
    state: std::sync::Arc<S>,
    name: &str,
    handle: F,
) where
    S: Send + Sync + 'static,
    F: Fn(TcpStream, std::sync::Arc<S>) -> Fut + Copy + Send + 'static,
    Fut: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
{
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("{name}: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let state = std::sync::Arc::clone(&state);
        let name = name.to_owned();
        tokio::spawn(async move {
            if let Err(e) = handle(stream, state).await {
                eprintln!("{name}: connection: {e}");
            }
        });
    }
}

/// One parsed request.
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// The target without its query.
    pub path: String,
    /// Whether it carried one of the credential headers the caller named.
    pub authorization: bool,
    /// The body (`Content-Length` bytes).
    pub body: Vec<u8>,
}

/// Reads one request within [`READ_TIMEOUT`] (see [`read_request`]): the request, or the
/// status and message to refuse it with.
pub async fn receive(
    stream: &mut TcpStream,
    credential_headers: &[&str],
) -> std::io::Result<Result<Request, (u16, String)>> {
    match tokio::time::timeout(READ_TIMEOUT, read_request(stream, credential_headers)).await {
        Ok(Ok(request)) => Ok(Ok(request)),
        Ok(Err(ReadError::Bad(status, message))) => Ok(Err((status, message))),
        Ok(Err(ReadError::Io(e))) => Err(e),
        Err(_) => Ok(Err((408, "request not received in time".to_owned()))),
    }
}

/// Why a request could not be read.
enum ReadError {
    /// Answer with this status and message.
    Bad(u16, String),
    Io(std::io::Error),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads one HTTP/1.1 request (head capped at 64 KiB, body at 32 MiB, `Content-Length` only);
/// `credential_headers` are the (lowercase) header names that count as authorization.
async fn read_request(
    stream: &mut TcpStream,
    credential_headers: &[&str],
) -> Result<Request, ReadError> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at + 4;
        }
        if let Some(at) = find(&buf, b"\n\n") {
            break at + 2;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(ReadError::Bad(431, "request head too large".into()));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(ReadError::Bad(
                400,
                "connection closed inside the head".into(),
            ));
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    };
    let (head, rest) = buf.split_at(head_end);
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let parts: Vec<&str> = request_line.split(' ').collect();
    let [method, target, version] = parts.as_slice() else {
        return Err(ReadError::Bad(400, "malformed request line".into()));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Err(ReadError::Bad(400, "malformed request line".into()));
    }
    let mut length = 0usize;
    let mut authorization = false;
    for line in lines {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Bad(
                400,
                format!("malformed header line {line:?}"),
            ));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = value
                    .parse()
                    .map_err(|_| ReadError::Bad(400, format!("bad Content-Length {value:?}")))?;
            }
            "transfer-encoding" => {
                return Err(ReadError::Bad(
                    411,
                    "chunked request bodies are not supported; send Content-Length".into(),
                ));
            }
            name if credential_headers.contains(&name) => authorization = true,
            _ => {}
        }
    }
    if length > MAX_BODY_BYTES {
        return Err(ReadError::Bad(413, "request body too large".into()));
    }
    let mut body = rest.to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(ReadError::Bad(
                400,
                "connection closed inside the body".into(),
            ));
        }
        body.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    body.truncate(length);
    let path = target.split('?').next().unwrap_or_default().to_owned();
    Ok(Request {
        method: (*method).to_owned(),
        path,
        authorization,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Writes `body` as a complete JSON response with `status`, then closes the connection.
pub async fn write_json(stream: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await?;
    stream.shutdown().await
}
