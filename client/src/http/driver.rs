//! The thin tokio driver: connections (plain or TLS), a small pool of idle
//! keep-alive connections per (scheme, host, port), timeouts.

use super::codec::{Method, ParseError, Response, ResponseParser, encode_request};
use super::url::HttpUrl;
use crate::connection::TlsConfig;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// What an [`HttpClient`] does: timeouts, the response limit, the pool,
/// TLS.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// How long connecting (TCP, then the TLS handshake) may take.
    pub connect_timeout: Duration,
    /// How long one request may take once connected: sending it and
    /// reading the whole response.
    pub request_timeout: Duration,
    /// The largest response body accepted; a larger one is
    /// [`HttpError::Response`] with [`ParseError::TooLarge`], refused
    /// before it is read when its length is announced.
    pub max_response_bytes: usize,
    /// Idle keep-alive connections kept per (scheme, host, port); 0 closes
    /// every connection after its response.
    pub max_idle_per_host: usize,
    /// An idle connection older than this is closed instead of reused.
    pub idle_timeout: Duration,
    /// Trust (and client certificate) for `https://`; `None` trusts the
    /// system's roots. Needs the `tls` cargo feature.
    pub tls: Option<TlsConfig>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 16 << 20,
            max_idle_per_host: 4,
            idle_timeout: Duration::from_secs(30),
            tls: None,
        }
    }
}

/// Why a request got no usable response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The server could not be reached (refused, unreachable, timed out
    /// while connecting): retry, or try another server.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// `host:port`.
        addr: String,
        /// What failed.
        reason: String,
    },
    /// The connection failed or timed out during the exchange: the request
    /// may or may not have been processed; retry if it is idempotent.
    #[error("HTTP exchange with {addr} failed: {reason}")]
    Exchange {
        /// `host:port`.
        addr: String,
        /// What failed.
        reason: String,
    },
    /// The server answered with something unacceptable (not HTTP, or too
    /// large): a server or proxy problem; retrying rarely helps.
    #[error("bad response from {addr}: {error}")]
    Response {
        /// `host:port`.
        addr: String,
        /// What is wrong with it.
        error: ParseError,
    },
    /// The client's settings cannot work (an unusable trust store, a TLS
    /// certificate the server does not accept or that does not verify,
    /// `https` without the `tls` feature): fix the settings.
    #[error("{0}")]
    Config(String),
}

impl HttpError {
    /// Whether trying again (later, or on another server) can help:
    /// connection and exchange failures.
    pub fn is_retriable(&self) -> bool {
        matches!(self, HttpError::Connect { .. } | HttpError::Exchange { .. })
    }
}

/// A connection of either kind.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// The pool's key: scheme, host, port.
type PoolKey = (bool, String, u16);

/// An idle connection and when it became idle.
struct Idle {
    /// The connection.
    io: Box<dyn Io>,
    /// When its last response ended.
    since: Instant,
}

/// An HTTP/1.1 client: one request at a time per connection, idle
/// connections kept alive for the next request to the same server. Cheap
/// to clone: clones share the pool.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::http::HttpError> {
/// use kafka_client::http::{HttpClient, HttpConfig, HttpUrl, Method};
/// let client = HttpClient::new(HttpConfig::default());
/// let url = HttpUrl::parse("http://127.0.0.1:8081/subjects").unwrap();
/// let response = client.request(Method::Get, &url, &[("Accept", "application/json")], b"").await?;
/// println!("{} {}", response.status, String::from_utf8_lossy(&response.body));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpClient {
    /// The settings.
    config: Arc<HttpConfig>,
    /// Idle connections per server, most recent last.
    pool: Arc<Mutex<HashMap<PoolKey, Vec<Idle>>>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with these settings and an empty pool.
    ///
    /// ```
    /// use kafka_client::http::{HttpClient, HttpConfig};
    /// let client = HttpClient::new(HttpConfig { max_idle_per_host: 0, ..HttpConfig::default() });
    /// assert_eq!(client.config().max_idle_per_host, 0);
    /// ```
    pub fn new(config: HttpConfig) -> Self {
        Self {
            config: Arc::new(config),
            pool: Arc::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Sends one request and reads the whole response. On an idle pooled
    /// connection the server closed meanwhile, the request is sent once
    /// more on a new connection (only when no byte of an answer came).
    pub async fn request(
        &self,
        method: Method,
        url: &HttpUrl,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, HttpError> {
        let key = (url.https, url.host.clone(), url.port);
        let keep_alive = self.config.max_idle_per_host > 0;
        let request = encode_request(method, url, headers, body, keep_alive);
        if let Some(io) = self.idle(&key) {
            match self.exchange(io, url, &request).await {
                Ok(r) => return Ok(r),
                Err(Attempt::Stale) => {}
                Err(Attempt::Failed(e)) => return Err(e),
            }
        }
        let io = self.connect(url).await?;
        match self.exchange(io, url, &request).await {
            Ok(r) => Ok(r),
            Err(Attempt::Stale) => Err(HttpError::Exchange {
                addr: addr(url),
                reason: "the server closed the connection without answering".into(),
            }),
            Err(Attempt::Failed(e)) => Err(e),
        }
    }

    /// An idle connection to `key` young enough to reuse.
    fn idle(&self, key: &PoolKey) -> Option<Box<dyn Io>> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        let idle = pool.get_mut(key)?;
        while let Some(c) = idle.pop() {
            if c.since.elapsed() < self.config.idle_timeout {
                return Some(c.io);
            }
        }
        None
    }

    /// Keeps `io` for the next request to `key` if there is room.
    fn release(&self, key: PoolKey, io: Box<dyn Io>) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        let idle = pool.entry(key).or_default();
        idle.retain(|c| c.since.elapsed() < self.config.idle_timeout);
        if idle.len() < self.config.max_idle_per_host {
            idle.push(Idle {
                io,
                since: Instant::now(),
            });
        }
    }

    async fn connect(&self, url: &HttpUrl) -> Result<Box<dyn Io>, HttpError> {
        let timeout = self.config.connect_timeout;
        let connect_error = |reason: String| HttpError::Connect {
            addr: addr(url),
            reason,
        };
        let tcp = tokio::time::timeout(timeout, TcpStream::connect((url.host.as_str(), url.port)))
            .await
            .map_err(|_| connect_error(format!("timed out after {timeout:?}")))?
            .map_err(|e| connect_error(e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        if url.https {
            tls_connect(url, tcp, self.config.tls.as_ref(), timeout).await
        } else {
            Ok(Box::new(tcp))
        }
    }

    /// Sends `request` on `io` and reads the response; pools `io` after it
    /// when the connection can carry another request.
    async fn exchange(
        &self,
        mut io: Box<dyn Io>,
        url: &HttpUrl,
        request: &[u8],
    ) -> Result<Response, Attempt> {
        let mut parser = ResponseParser::new(self.config.max_response_bytes);
        let mut received = 0usize;
        let exchange = async {
            io.write_all(request).await?;
            io.flush().await?;
            let mut chunk = vec![0u8; 16 * 1024];
            loop {
                let n = io.read(&mut chunk).await?;
                received += n;
                if n == 0 {
                    return Ok(parser.eof());
                }
                if let Some(r) = parser.feed(&chunk[..n]).transpose() {
                    return Ok(r);
                }
            }
        };
        let outcome: Result<Result<Response, ParseError>, std::io::Error> =
            match tokio::time::timeout(self.config.request_timeout, exchange).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(Attempt::Failed(HttpError::Exchange {
                        addr: addr(url),
                        reason: format!("no response within {:?}", self.config.request_timeout),
                    }));
                }
            };
        match outcome {
            Ok(Ok(response)) => {
                if parser.reusable() {
                    self.release((url.https, url.host.clone(), url.port), io);
                }
                Ok(response)
            }
            Ok(Err(ParseError::Truncated)) | Err(_) if received == 0 => Err(Attempt::Stale),
            Ok(Err(error)) => Err(Attempt::Failed(HttpError::Response {
                addr: addr(url),
                error,
            })),
            Err(e) => Err(Attempt::Failed(HttpError::Exchange {
                addr: addr(url),
                reason: e.to_string(),
            })),
        }
    }
}

/// How one attempt on one connection ended, when not with a response.
enum Attempt {
    /// The connection closed (or failed) before any byte of an answer: a
    /// pooled connection the server had closed; worth one more try.
    Stale,
    /// A real failure.
    Failed(HttpError),
}

fn addr(url: &HttpUrl) -> String {
    format!("{}:{}", url.host, url.port)
}

#[cfg(feature = "tls")]
async fn tls_connect(
    url: &HttpUrl,
    tcp: TcpStream,
    tls: Option<&TlsConfig>,
    timeout: Duration,
) -> Result<Box<dyn Io>, HttpError> {
    // No trust settings: the system's trusted roots, as Java's clients use
    // the JVM's default trust store.
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
    let stream = tokio::time::timeout(
        timeout,
        tokio_rustls::TlsConnector::from(config).connect(name, tcp),
    )
    .await
    .map_err(|_| HttpError::Connect {
        addr: addr(url),
        reason: format!("the TLS handshake timed out after {timeout:?}"),
    })?
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            HttpError::Config(format!("TLS handshake with {} refused: {e}", addr(url)))
        } else {
            HttpError::Connect {
                addr: addr(url),
                reason: format!("the TLS handshake failed: {e}"),
            }
        }
    })?;
    Ok(Box::new(stream))
}

#[cfg(not(feature = "tls"))]
async fn tls_connect(
    _url: &HttpUrl,
    _tcp: TcpStream,
    _tls: Option<&TlsConfig>,
    _timeout: Duration,
) -> Result<Box<dyn Io>, HttpError> {
    Err(HttpError::Config(
        crate::connection::TLS_FEATURE_MISSING.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server that answers each request on a connection with `answer`,
    /// counting connections; it closes a connection after `per_conn`
    /// answers.
    async fn server(
        answer: &'static [u8],
        per_conn: usize,
    ) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let conns = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = conns.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 1024];
                    for _ in 0..per_conn {
                        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                            match s.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buf.clear();
                        if s.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (port, conns)
    }

    /// Three sequential GETs, each answered "ok", from a server that closes
    /// a connection after `per_conn` answers: how many connections the
    /// client opened.
    async fn connections_for_three_requests(per_conn: usize) -> usize {
        let (port, conns) =
            server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", per_conn).await;
        let client = HttpClient::new(HttpConfig::default());
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/x")).unwrap();
        for _ in 0..3 {
            let r = client.request(Method::Get, &url, &[], b"").await.unwrap();
            assert_eq!(r.body, b"ok");
        }
        conns.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Invariant: keep-alive reuses one connection for sequential requests.
    #[tokio::test]
    async fn keep_alive_reuses_the_connection() {
        assert_eq!(connections_for_three_requests(10).await, 1);
    }

    /// Invariant: a pooled connection the server closed is replaced
    /// transparently, and the request still gets its answer.
    #[tokio::test]
    async fn a_connection_closed_while_idle_is_replaced() {
        assert_eq!(connections_for_three_requests(1).await, 3);
    }

    /// Invariant: a refused connection is a retriable Connect error.
    #[tokio::test]
    async fn a_dead_server_is_a_connect_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let client = HttpClient::new(HttpConfig::default());
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let e = client
            .request(Method::Get, &url, &[], b"")
            .await
            .unwrap_err();
        assert!(
            matches!(e, HttpError::Connect { .. }) && e.is_retriable(),
            "{e}"
        );
    }

    /// Invariant: an announced oversized body is refused, not read.
    #[tokio::test]
    async fn an_oversized_response_is_refused() {
        let (port, _) = server(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", 1).await;
        let client = HttpClient::new(HttpConfig {
            max_response_bytes: 1000,
            ..HttpConfig::default()
        });
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let e = client
            .request(Method::Get, &url, &[], b"")
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                HttpError::Response {
                    error: ParseError::TooLarge { limit: 1000 },
                    ..
                }
            ),
            "{e}"
        );
    }
}
