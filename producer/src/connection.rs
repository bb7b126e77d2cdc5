//! One broker connection: framing, correlation ids, pipelined requests,
//! timeouts, ApiVersions negotiation and SASL authentication.
//!
//! A writer task owns the write half of the socket and writes whole frames in
//! the order [`Connection::send`] queued them; a reader task splits the read
//! half into frames and routes each response to its caller through a map of
//! oneshot senders keyed by correlation id. Any number of requests may be in
//! flight at once.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_producer::ConnError> {
//! use kafka_producer::{Connection, ConnectionConfig};
//! use kafka_proto::messages::MetadataRequest;
//! let conn = Connection::connect("127.0.0.1:9092", &ConnectionConfig::default()).await?;
//! let version = conn.versions().version_for::<MetadataRequest>()?;
//! let metadata = conn.send(&MetadataRequest::default(), version).await?;
//! println!("{} brokers", metadata.brokers.len());
//! conn.close();
//! # Ok(()) }
//! ```

use crate::error::ConnError;
use crate::sasl::{plain_message, SaslConfig, SaslMechanism, ScramClient, ScramHash};
use crate::versions::{
    decode_api_versions_body, on_api_versions_response, ApiVersionsOutcome, BrokerVersions,
    API_VERSIONS_MAX,
};
use bytes::{Bytes, BytesMut};
use kafka_proto::frame::{
    decode_response_frame, encode_request_frame, peek_correlation_id, FrameDecoder,
    DEFAULT_MAX_FRAME_SIZE,
};
use kafka_proto::messages::{
    ApiVersionsRequest, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
};
use kafka_proto::{ApiKey, ErrorCode, Request};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

/// Settings of a [`Connection`].
///
/// ```
/// use kafka_producer::{ConnectionConfig, SaslConfig};
/// use std::time::Duration;
/// let cfg = ConnectionConfig {
///     request_timeout: Duration::from_secs(5),
///     sasl: Some(SaslConfig::scram_sha256("alice", "secret")),
///     ..Default::default()
/// };
/// assert_eq!(cfg.client_id.as_deref(), Some("kafka-eos"));
/// ```
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// The `client.id` sent in every request header.
    pub client_id: Option<String>,
    /// ApiVersions v3+ `client_software_name` (`[a-zA-Z0-9.-]`).
    pub client_software_name: String,
    /// ApiVersions v3+ `client_software_version`.
    pub client_software_version: String,
    /// The largest response frame accepted (default 100 MiB).
    pub max_frame_size: usize,
    /// Bound on one request's round trip (`request.timeout.ms`, default 30 s).
    pub request_timeout: Duration,
    /// Bound on TCP connect + ApiVersions + SASL
    /// (`socket.connection.setup.timeout.ms`, default 10 s).
    pub connect_timeout: Duration,
    /// SASL mechanism and credentials; `None` for PLAINTEXT.
    pub sasl: Option<SaslConfig>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            client_id: Some("kafka-eos".into()),
            client_software_name: "kafka-eos".into(),
            client_software_version: env!("CARGO_PKG_VERSION").into(),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            sasl: None,
        }
    }
}

type Reply = Result<Bytes, ConnError>;

#[derive(Debug)]
struct Pending {
    tx: oneshot::Sender<Reply>,
    api: ApiKey,
    version: i16,
}

#[derive(Debug, Default)]
struct State {
    pending: HashMap<i32, Pending>,
    closed: Option<String>,
    tasks: Vec<AbortHandle>,
}

#[derive(Debug)]
struct Shared {
    addr: String,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the connection once: every pending request fails with
    /// `Disconnected`, both IO tasks stop.
    fn fail_all(&self, reason: &str) {
        let (pending, tasks) = {
            let mut st = self.lock();
            if st.closed.is_some() {
                return;
            }
            st.closed = Some(reason.to_string());
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.tasks),
            )
        };
        if !pending.is_empty() {
            tracing::debug!(addr = %self.addr, reason, n = pending.len(), "failing in-flight requests");
        }
        for (_, p) in pending {
            let _ = p.tx.send(Err(ConnError::Disconnected {
                addr: self.addr.clone(),
                api: Some((p.api, p.version)),
                reason: reason.to_string(),
            }));
        }
        for t in tasks {
            t.abort();
        }
    }

    fn disconnected(&self, api: Option<(ApiKey, i16)>) -> ConnError {
        let reason = self
            .lock()
            .closed
            .clone()
            .unwrap_or_else(|| "closed".into());
        ConnError::Disconnected {
            addr: self.addr.clone(),
            api,
            reason,
        }
    }
}

#[derive(Debug)]
struct WriteItem {
    frame: BytesMut,
    written: Option<oneshot::Sender<()>>,
}

/// The framing and routing layer, before negotiation.
#[derive(Debug)]
struct Io {
    shared: Arc<Shared>,
    writer: mpsc::UnboundedSender<WriteItem>,
    next_correlation_id: AtomicI32,
    client_id: Option<String>,
}

impl Io {
    fn start(
        stream: TcpStream,
        addr: String,
        max_frame_size: usize,
        client_id: Option<String>,
    ) -> Self {
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        let shared = Arc::new(Shared {
            addr,
            state: Mutex::new(State::default()),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let r = tokio::spawn(read_loop(rd, shared.clone(), max_frame_size));
        let w = tokio::spawn(write_loop(wr, rx, shared.clone()));
        {
            let mut st = shared.lock();
            if st.closed.is_some() {
                r.abort();
                w.abort();
            } else {
                st.tasks.push(r.abort_handle());
                st.tasks.push(w.abort_handle());
            }
        }
        Self {
            shared,
            writer: tx,
            next_correlation_id: AtomicI32::new(0),
            client_id,
        }
    }

    fn next_correlation_id(&self) -> i32 {
        self.next_correlation_id.fetch_add(1, Ordering::Relaxed) & i32::MAX
    }

    /// Sends one request frame and waits for the response frame body.
    async fn round_trip<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<Bytes, ConnError> {
        let correlation_id = self.next_correlation_id();
        let frame = encode_request_frame(req, version, correlation_id, self.client_id.as_deref())?;
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.shared.lock();
            if st.closed.is_some() {
                drop(st);
                return Err(self.shared.disconnected(None));
            }
            st.pending.insert(
                correlation_id,
                Pending {
                    tx,
                    api: R::API_KEY,
                    version,
                },
            );
        }
        if self
            .writer
            .send(WriteItem {
                frame,
                written: None,
            })
            .is_err()
        {
            self.shared.lock().pending.remove(&correlation_id);
            return Err(self.shared.disconnected(None));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(self.shared.disconnected(Some((R::API_KEY, version)))),
            Err(_) => {
                self.shared.lock().pending.remove(&correlation_id);
                tracing::warn!(addr = %self.shared.addr, api = ?R::API_KEY, version, correlation_id, ?timeout,
                    "request timed out; closing the connection");
                self.shared.fail_all(&format!(
                    "{:?} v{version} (correlation id {correlation_id}) timed out",
                    R::API_KEY
                ));
                Err(ConnError::Timeout {
                    api: R::API_KEY,
                    version,
                    correlation_id,
                    after: timeout,
                })
            }
        }
    }

    async fn send<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ConnError> {
        let body = self.round_trip(req, version, timeout).await?;
        decode_response_frame::<R::Response>(&body, version)
            .map(|(_, m)| m)
            .map_err(|source| ConnError::Decode {
                api: R::API_KEY,
                version,
                source,
            })
    }
}

async fn read_loop(mut rd: OwnedReadHalf, shared: Arc<Shared>, max_frame_size: usize) {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let reason = 'outer: loop {
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    if let Err(reason) = dispatch(&shared, frame) {
                        break 'outer reason;
                    }
                }
                Ok(None) => break,
                Err(e) => break 'outer format!("invalid response frame: {e}"),
            }
        }
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(64 * 1024);
        }
        match rd.read_buf(&mut buf).await {
            Ok(0) => break "connection closed by the peer".to_string(),
            Ok(_) => {}
            Err(e) => break format!("read error: {e}"),
        }
    };
    shared.fail_all(&reason);
}

fn dispatch(shared: &Shared, frame: Bytes) -> Result<(), String> {
    let id = peek_correlation_id(&frame).map_err(|e| format!("invalid response header: {e}"))?;
    let pending = shared.lock().pending.remove(&id);
    match pending {
        Some(p) => {
            // The caller may have gone away (cancelled); that is fine.
            let _ = p.tx.send(Ok(frame));
            Ok(())
        }
        None => Err(format!("response with unexpected correlation id {id}")),
    }
}

async fn write_loop(
    mut wr: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<WriteItem>,
    shared: Arc<Shared>,
) {
    const COALESCE: usize = 1 << 20;
    let mut acks = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut out = first.frame;
        acks.extend(first.written);
        // Coalesce frames already queued into one write.
        while out.len() < COALESCE {
            match rx.try_recv() {
                Ok(item) => {
                    out.extend_from_slice(&item.frame);
                    acks.extend(item.written);
                }
                Err(_) => break,
            }
        }
        if let Err(e) = wr.write_all(&out).await {
            acks.clear();
            shared.fail_all(&format!("write error: {e}"));
            return;
        }
        for a in acks.drain(..) {
            let _ = a.send(());
        }
    }
    let _ = wr.shutdown().await;
}

/// A negotiated (and, with SASL, authenticated) connection to one broker.
///
/// Cheap to share behind an `Arc`; every method takes `&self`. Dropping the
/// last handle closes the socket.
#[derive(Debug)]
pub struct Connection {
    io: Io,
    versions: BrokerVersions,
    request_timeout: Duration,
    session_expiry: Option<Instant>,
}

impl Connection {
    /// Connects to `addr` ("host:port"), negotiates API versions and, if
    /// configured, authenticates, all within `config.connect_timeout`.
    pub async fn connect(addr: &str, config: &ConnectionConfig) -> Result<Self, ConnError> {
        match tokio::time::timeout(config.connect_timeout, Self::connect_inner(addr, config)).await
        {
            Ok(r) => r,
            Err(_) => Err(ConnError::ConnectTimeout {
                addr: addr.to_string(),
                after: config.connect_timeout,
            }),
        }
    }

    async fn connect_inner(addr: &str, config: &ConnectionConfig) -> Result<Self, ConnError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|source| ConnError::Connect {
                addr: addr.to_string(),
                source,
            })?;
        let io = Io::start(
            stream,
            addr.to_string(),
            config.max_frame_size,
            config.client_id.clone(),
        );
        let versions = negotiate(&io, config).await?;
        tracing::debug!(
            addr,
            api_versions = versions.api_versions_version(),
            "negotiated"
        );
        let mut conn = Self {
            io,
            versions,
            request_timeout: config.request_timeout,
            session_expiry: None,
        };
        if let Some(sasl) = &config.sasl {
            let lifetime = conn.authenticate(sasl).await?;
            if lifetime > 0 {
                conn.session_expiry = Some(Instant::now() + Duration::from_millis(lifetime as u64));
            }
        }
        Ok(conn)
    }

    /// The peer address as given to [`Self::connect`].
    pub fn addr(&self) -> &str {
        &self.io.shared.addr
    }

    /// The broker's API ranges and features from ApiVersions.
    pub fn versions(&self) -> &BrokerVersions {
        &self.versions
    }

    /// Shorthand for `versions().negotiated_version(api)`: the highest version
    /// of `api` both sides support.
    pub fn negotiated_version(&self, api: ApiKey) -> Option<i16> {
        self.versions.negotiated_version(api)
    }

    /// When the SASL session ends (KIP-368 `session_lifetime_ms`); the broker
    /// closes the connection afterwards unless it re-authenticates.
    pub fn session_expiry(&self) -> Option<Instant> {
        self.session_expiry
    }

    /// True once the connection is closed (by either side or an error).
    pub fn is_closed(&self) -> bool {
        self.io.shared.lock().closed.is_some()
    }

    /// Requests currently awaiting a response.
    pub fn in_flight(&self) -> usize {
        self.io.shared.lock().pending.len()
    }

    /// Sends `req` at `version` and waits for its response, up to the
    /// configured request timeout. Other requests may be in flight.
    pub async fn send<R: Request>(&self, req: &R, version: i16) -> Result<R::Response, ConnError> {
        self.io.send(req, version, self.request_timeout).await
    }

    /// [`Self::send`] with an explicit timeout. On timeout the connection is
    /// closed (as the Java client does) and the outcome is unknown.
    pub async fn send_with_timeout<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ConnError> {
        self.io.send(req, version, timeout).await
    }

    /// Sends `req` at the highest version both sides support.
    pub async fn send_negotiated<R: Request>(&self, req: &R) -> Result<R::Response, ConnError> {
        let version = self.versions.version_for::<R>()?;
        self.send(req, version).await
    }

    /// Writes a request the broker will not answer (Produce with `acks=0`)
    /// and returns once it is written to the socket.
    pub async fn send_no_response<R: Request>(
        &self,
        req: &R,
        version: i16,
    ) -> Result<(), ConnError> {
        let correlation_id = self.io.next_correlation_id();
        let frame =
            encode_request_frame(req, version, correlation_id, self.io.client_id.as_deref())?;
        if self.is_closed() {
            return Err(self.io.shared.disconnected(None));
        }
        let (tx, rx) = oneshot::channel();
        let api = Some((R::API_KEY, version));
        self.io
            .writer
            .send(WriteItem {
                frame,
                written: Some(tx),
            })
            .map_err(|_| self.io.shared.disconnected(api))?;
        match tokio::time::timeout(self.request_timeout, rx).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.io.shared.disconnected(api)),
            Err(_) => Err(ConnError::Timeout {
                api: R::API_KEY,
                version,
                correlation_id,
                after: self.request_timeout,
            }),
        }
    }

    /// Closes the connection: every pending request fails with
    /// [`ConnError::Disconnected`] and later sends fail at once.
    pub fn close(&self) {
        self.io.shared.fail_all("closed by the client");
    }

    /// SaslHandshake v1 then SaslAuthenticate; returns the session lifetime (ms, 0 = none).
    async fn authenticate(&self, sasl: &SaslConfig) -> Result<i64, ConnError> {
        let hv = self.versions.version_for::<SaslHandshakeRequest>()?;
        if hv < 1 {
            return Err(ConnError::UnsupportedVersion {
                api: ApiKey::SaslHandshake,
                client: kafka_proto::VersionRange::new(1, 1),
                broker: self.versions.broker_range(ApiKey::SaslHandshake),
            });
        }
        let mechanism = sasl.mechanism.name();
        let resp = self
            .send(
                &SaslHandshakeRequest {
                    mechanism: mechanism.to_string(),
                },
                hv,
            )
            .await?;
        match ErrorCode::from(resp.error_code) {
            ErrorCode::None => {}
            ErrorCode::UnsupportedSaslMechanism => {
                return Err(ConnError::UnsupportedSaslMechanism {
                    mechanism: mechanism.to_string(),
                    enabled: resp.mechanisms,
                })
            }
            error => {
                return Err(ConnError::Broker {
                    api: ApiKey::SaslHandshake,
                    version: hv,
                    error,
                    message: None,
                })
            }
        }
        let av = self.versions.version_for::<SaslAuthenticateRequest>()?;
        let last = match sasl.mechanism {
            SaslMechanism::Plain => {
                self.sasl_step(av, plain_message(&sasl.username, &sasl.password))
                    .await?
            }
            SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
                let hash = if sasl.mechanism == SaslMechanism::ScramSha256 {
                    ScramHash::Sha256
                } else {
                    ScramHash::Sha512
                };
                let mut scram = ScramClient::new(hash, &sasl.username, &sasl.password);
                let first = self.sasl_step(av, scram.client_first()).await?;
                let fin = scram.handle_server_first(&first.auth_bytes).map_err(|e| {
                    ConnError::AuthenticationFailed {
                        message: e.to_string(),
                    }
                })?;
                let last = self.sasl_step(av, fin).await?;
                scram.handle_server_final(&last.auth_bytes).map_err(|e| {
                    ConnError::AuthenticationFailed {
                        message: e.to_string(),
                    }
                })?;
                last
            }
        };
        tracing::debug!(addr = self.addr(), mechanism, "SASL authenticated");
        Ok(last.session_lifetime_ms)
    }

    async fn sasl_step(
        &self,
        version: i16,
        auth_bytes: Vec<u8>,
    ) -> Result<SaslAuthenticateResponse, ConnError> {
        let resp = self
            .send(
                &SaslAuthenticateRequest {
                    auth_bytes: Bytes::from(auth_bytes),
                    ..Default::default()
                },
                version,
            )
            .await?;
        match ErrorCode::from(resp.error_code) {
            ErrorCode::None => Ok(resp),
            ErrorCode::SaslAuthenticationFailed => Err(ConnError::AuthenticationFailed {
                message: resp
                    .error_message
                    .unwrap_or_else(|| "SASL_AUTHENTICATION_FAILED".into()),
            }),
            error => Err(ConnError::Broker {
                api: ApiKey::SaslAuthenticate,
                version,
                error,
                message: resp.error_message,
            }),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.io.shared.fail_all("connection dropped");
    }
}

/// ApiVersions at [`API_VERSIONS_MAX`], falling back as the broker asks.
async fn negotiate(io: &Io, config: &ConnectionConfig) -> Result<BrokerVersions, ConnError> {
    let mut version = API_VERSIONS_MAX;
    loop {
        let req = if version >= 3 {
            ApiVersionsRequest {
                client_software_name: config.client_software_name.clone(),
                client_software_version: config.client_software_version.clone(),
                ..Default::default()
            }
        } else {
            ApiVersionsRequest::default()
        };
        let body = io.round_trip(&req, version, config.request_timeout).await?;
        // The ApiVersions response header is always v0: the correlation id only.
        let resp = decode_api_versions_body(body.get(4..).unwrap_or_default(), version).map_err(
            |source| ConnError::Decode {
                api: ApiKey::ApiVersions,
                version,
                source,
            },
        )?;
        match on_api_versions_response(version, &resp) {
            ApiVersionsOutcome::Done(v) => return Ok(*v),
            ApiVersionsOutcome::Retry(next) => {
                tracing::debug!(addr = %io.shared.addr, version, next, "ApiVersions unsupported; retrying lower");
                version = next;
            }
            ApiVersionsOutcome::Failed(error) => {
                io.shared.fail_all("ApiVersions failed");
                return Err(ConnError::ApiVersions { version, error });
            }
        }
    }
}
