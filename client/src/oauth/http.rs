//! A small HTTP/1.1 client for the token endpoint: one POST per
//! connection (`Connection: close`), over plain TCP or TLS (cargo feature
//! `tls`, the brokers' trust settings). The request and the response
//! parsing are sans-IO; [`post`] is the thin tokio driver.

use crate::connection::TlsConfig;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest response read (token responses are a few KiB).
const MAX_RESPONSE: usize = 1 << 20;

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpUrl {
    /// `https`?
    pub(crate) https: bool,
    /// Host name or IP (IPv6 without brackets).
    pub(crate) host: String,
    /// Port (80 / 443 by default).
    pub(crate) port: u16,
    /// Path and query, at least `/`.
    pub(crate) path: String,
}

impl HttpUrl {
    /// Parses `http(s)://host[:port][/path]`.
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(format!("{url:?} is not an http:// or https:// URL"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.contains('@') {
            return Err("credentials in the URL are not supported".into());
        }
        let default_port = if https { 443 } else { 80 };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("unclosed [ in the URL")?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse().map_err(|_| format!("bad port {p:?}"))?,
                None if after.is_empty() => default_port,
                None => return Err("junk after ] in the URL".into()),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_string(),
                    p.parse().map_err(|_| format!("bad port {p:?}"))?,
                ),
                None => (authority.to_string(), default_port),
            }
        };
        if host.is_empty() {
            return Err("no host in the URL".into());
        }
        Ok(Self {
            https,
            host,
            port,
            path,
        })
    }

    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.https { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// The bytes of a POST of `body` with `headers` (Host, Content-Length
/// and `Connection: close` added).
pub(crate) fn encode_post(url: &HttpUrl, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\n",
        url.path,
        url.host_header()
    );
    for (k, v) in headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A response: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpResponse {
    /// The status code.
    pub(crate) status: u16,
    /// The body (de-chunked).
    pub(crate) body: Vec<u8>,
}

/// Parses a response from the bytes read so far: `Ok(None)` while it is
/// incomplete; `eof` says the peer closed (a body without length ends there).
pub(crate) fn parse_response(buf: &[u8], eof: bool) -> Result<Option<HttpResponse>, String> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if eof {
            Err("the connection closed before the response headers ended".into())
        } else {
            Ok(None)
        };
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "response headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(format!("bad status line {status_line:?}"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status: u16 = code
        .parse()
        .map_err(|_| format!("bad status line {status_line:?}"))?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("content-length") {
            length = Some(
                v.parse::<usize>()
                    .map_err(|_| format!("bad Content-Length {v:?}"))?,
            );
        } else if k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let body = &buf[end + 4..];
    if chunked {
        return match dechunk(body)? {
            Some(body) => Ok(Some(HttpResponse { status, body })),
            None if eof => Err("the connection closed inside a chunked body".into()),
            None => Ok(None),
        };
    }
    match length {
        Some(n) if body.len() >= n => Ok(Some(HttpResponse {
            status,
            body: body[..n].to_vec(),
        })),
        Some(_) if eof => Err("the connection closed before the body ended".into()),
        Some(_) => Ok(None),
        None if eof => Ok(Some(HttpResponse {
            status,
            body: body.to_vec(),
        })),
        None => Ok(None),
    }
}

/// A chunked body, or `None` while incomplete.
fn dechunk(mut buf: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size_text = std::str::from_utf8(&buf[..eol]).map_err(|_| "bad chunk size")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        buf = &buf[eol + 2..];
        if size == 0 {
            return Ok(Some(out));
        }
        if buf.len() < size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&buf[..size]);
        buf = &buf[size + 2..];
    }
}

/// Why a POST failed.
#[derive(Debug)]
pub(crate) enum HttpError {
    /// Connecting, writing or reading failed or timed out: retriable.
    Transport(String),
    /// The settings cannot work (unreadable trust, TLS without the feature).
    Config(String),
}

/// POSTs `body` to `url` and reads the whole response.
pub(crate) async fn post(
    url: &HttpUrl,
    headers: &[(&str, &str)],
    body: &[u8],
    connect_timeout: Duration,
    read_timeout: Duration,
    tls: Option<&TlsConfig>,
) -> Result<HttpResponse, HttpError> {
    let addr = (url.host.as_str(), url.port);
    let tcp = tokio::time::timeout(connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| {
            HttpError::Transport(format!(
                "connecting to {}:{} timed out after {connect_timeout:?}",
                url.host, url.port
            ))
        })?
        .map_err(|e| {
            HttpError::Transport(format!("cannot connect to {}:{}: {e}", url.host, url.port))
        })?;
    let request = encode_post(url, headers, body);
    if url.https {
        let stream = tls_connect(url, tcp, tls, connect_timeout).await?;
        exchange(stream, &request, read_timeout).await
    } else {
        exchange(tcp, &request, read_timeout).await
    }
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    request: &[u8],
    read_timeout: Duration,
) -> Result<HttpResponse, HttpError> {
    let io = |e: std::io::Error| HttpError::Transport(format!("token endpoint IO: {e}"));
    stream.write_all(request).await.map_err(io)?;
    stream.flush().await.map_err(io)?;
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(read_timeout, stream.read(&mut chunk))
            .await
            .map_err(|_| {
                HttpError::Transport(format!(
                    "no answer from the token endpoint within {read_timeout:?}"
                ))
            })?
            .map_err(io)?;
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_RESPONSE {
            return Err(HttpError::Transport(format!(
                "the token endpoint's response exceeds {MAX_RESPONSE} bytes"
            )));
        }
        match parse_response(&buf, n == 0) {
            Ok(Some(r)) => return Ok(r),
            Ok(None) => {}
            Err(e) => return Err(HttpError::Transport(format!("bad HTTP response: {e}"))),
        }
    }
}

#[cfg(feature = "tls")]
async fn tls_connect(
    url: &HttpUrl,
    tcp: TcpStream,
    tls: Option<&TlsConfig>,
    timeout: Duration,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, HttpError> {
    // No trust settings: the system's trusted roots, as Java's login
    // callback uses the JVM's default trust store.
    let system;
    let tls = match tls {
        Some(tls) => tls,
        None => {
            system = TlsConfig::system();
            &system
        }
    };
    let config = crate::connection::tls_impl::client_config(tls).map_err(HttpError::Config)?;
    let name = rustls_pki_types::ServerName::try_from(url.host.clone())
        .map_err(|e| HttpError::Config(format!("invalid TLS server name {:?}: {e}", url.host)))?;
    tokio::time::timeout(
        timeout,
        tokio_rustls::TlsConnector::from(config).connect(name, tcp),
    )
    .await
    .map_err(|_| HttpError::Transport(format!("TLS handshake with {} timed out", url.host)))?
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            HttpError::Config(format!("TLS handshake with {} refused: {e}", url.host))
        } else {
            HttpError::Transport(format!("TLS handshake with {} failed: {e}", url.host))
        }
    })
}

#[cfg(not(feature = "tls"))]
async fn tls_connect(
    _url: &HttpUrl,
    _tcp: TcpStream,
    _tls: Option<&TlsConfig>,
    _timeout: Duration,
) -> Result<TcpStream, HttpError> {
    Err(HttpError::Config(
        crate::connection::TLS_FEATURE_MISSING.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_default_and_explicit_ports() {
        let u = HttpUrl::parse("https://idp.example/oauth2/token?x=1").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.port, u.path.as_str()),
            (true, "idp.example", 443, "/oauth2/token?x=1")
        );
        let u = HttpUrl::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!((u.port, u.path.as_str()), (8080, "/"));
        let u = HttpUrl::parse("http://[::1]:9/t").unwrap();
        assert_eq!(
            (u.host.as_str(), u.host_header()),
            ("::1", "[::1]:9".to_string())
        );
        for bad in [
            "ftp://x",
            "http://",
            "http://h:port",
            "http://u:p@h/",
            "http://[::1",
        ] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn post_has_host_length_and_close() {
        let u = HttpUrl::parse("http://idp:8080/token").unwrap();
        let req = encode_post(&u, &[("Accept", "application/json")], b"a=b");
        assert_eq!(
            req,
            b"POST /token HTTP/1.1\r\nHost: idp:8080\r\nAccept: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\na=b"
        );
    }

    #[test]
    fn responses_by_length_chunks_and_eof() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_response(&r[..r.len() - 1], false).unwrap(), None);
        assert_eq!(parse_response(r, false).unwrap().unwrap().body, b"{}");
        let c = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n1;x\r\n}\r\n0\r\n\r\n";
        assert_eq!(parse_response(c, false).unwrap().unwrap().body, b"{\"}");
        let e = b"HTTP/1.0 503 Busy\r\n\r\nlater";
        assert_eq!(parse_response(e, false).unwrap(), None);
        let r = parse_response(e, true).unwrap().unwrap();
        assert_eq!((r.status, r.body.as_slice()), (503, &b"later"[..]));
        assert!(parse_response(b"garbage\r\n\r\n", true).is_err());
        assert!(parse_response(b"HTTP/1.1 200", true).is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", true).is_err());
    }
}
