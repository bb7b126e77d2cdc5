//! One broker connection: framing, correlation ids, pipelined requests,
//! timeouts, ApiVersions negotiation, TLS (cargo feature `tls`), SASL
//! authentication and KIP-368 re-authentication (the `reauth` module).

use crate::error::ConnError;
use crate::sasl::SaslConfig;
use crate::versions::{
    API_VERSIONS_MAX, ApiVersionsOutcome, BrokerVersions, decode_api_versions_body,
    on_api_versions_response,
};
use bytes::{Bytes, BytesMut};
use kafka_proto::frame::{
    DEFAULT_MAX_FRAME_SIZE, FrameDecoder, READ_CHUNK, decode_response_frame_bytes,
    encode_request_frame, peek_correlation_id,
};
use kafka_proto::messages::ApiVersionsRequest;
use kafka_proto::{ApiKey, Request};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use writer::{FrameWriter, SubmitError, SubmitFrame, WriteItem};

mod key_stores;
mod tls;

pub use key_stores::KeyStoreError;
pub(crate) use key_stores::{StoreType, looks_like};
#[cfg(feature = "tls")]
pub(crate) use key_stores::{pem_key, pkcs12_identity, pkcs12_trust};
pub(crate) use tls::TLS_FEATURE_MISSING;
use tls::start_tls;
#[cfg(feature = "tls")]
pub(crate) use tls::tls_impl;
pub use tls::{TlsConfig, TrustStore};

mod reauth;
#[cfg(any(test, feature = "internals"))]
pub(crate) use reauth::REAUTHENTICATIONS;
mod writer;

/// The first of the correlation ids kept for SASL requests (Java's
/// `SaslClientAuthenticator.MIN_RESERVED_CORRELATION_ID`): a late response
/// to an ordinary request can never be taken for a SASL one.
pub(crate) const MIN_RESERVED_CORRELATION_ID: i32 = i32::MAX - 7;

/// Settings of a [`Connection`].
///
/// ```
/// use kafka_client::{ConnectionConfig, SaslConfig};
/// use std::time::Duration;
/// let cfg = ConnectionConfig {
///     request_timeout: Duration::from_secs(5),
///     sasl: Some(SaslConfig::scram_sha256("alice", "secret")),
///     ..Default::default()
/// };
/// ```
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// The `client.id` sent in every request header.
    pub client_id: Option<String>,
    /// ApiVersions v3+ `client_software_name` (`[a-zA-Z0-9.-]`).
    pub client_software_name: String,
    /// ApiVersions v3+ `client_software_version`.
    pub client_software_version: String,
    /// The largest response frame accepted (`receive.message.max.bytes`,
    /// default 100 MiB); memory grows only with the bytes that arrive.
    pub max_frame_size: usize,
    /// Bound on one request's round trip (`request.timeout.ms`, default 30 s).
    pub request_timeout: Duration,
    /// Bound on TCP connect + ApiVersions + SASL of a first attempt
    /// (`socket.connection.setup.timeout.ms`, default 10 s). As in the Java
    /// client, a [`BrokerConnection`](crate::BrokerConnection) doubles it
    /// after each consecutive failed attempt, up to
    /// [`connect_timeout_max`](Self::connect_timeout_max).
    pub connect_timeout: Duration,
    /// The most the setup timeout grows to
    /// (`socket.connection.setup.timeout.max.ms`, default 30 s).
    pub connect_timeout_max: Duration,
    /// SASL mechanism and credentials; `None` for PLAINTEXT.
    pub sasl: Option<SaslConfig>,
    /// TLS settings; `None` for plain TCP. Needs the `tls` cargo feature.
    pub tls: Option<TlsConfig>,
}

impl ConnectionConfig {
    /// The setup timeout of an attempt after `failures` consecutive failed
    /// ones: [`connect_timeout`](Self::connect_timeout) doubled per failure,
    /// at most [`connect_timeout_max`](Self::connect_timeout_max) (Java's
    /// `ClusterConnectionStates`, without its ±20 % jitter).
    pub fn setup_timeout(&self, failures: u32) -> Duration {
        let grown = self
            .connect_timeout
            .saturating_mul(2u32.saturating_pow(failures.min(31)));
        grown.min(self.connect_timeout_max.max(self.connect_timeout))
    }
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
            connect_timeout_max: Duration::from_secs(30),
            sasl: None,
            tls: None,
        }
    }
}

type Reply = Result<Bytes, ConnError>;

#[derive(Debug)]
struct Pending {
    tx: oneshot::Sender<Reply>,
    api: ApiKey,
    version: i16,
    /// When the request's timeout runs out. A caller that stopped waiting
    /// (its future dropped) leaves the entry here: a later request that
    /// finds it overdue knows the connection stopped answering.
    deadline: tokio::time::Instant,
    /// When the request was written, on a connection with a SASL session
    /// (its round trip sizes the hold margin); `None` without a session,
    /// and once held (its round trip then includes the hold, not only the
    /// broker's time).
    written: Option<Instant>,
}

#[derive(Debug, Default)]
struct State {
    /// Requests awaiting their response, by correlation id.
    pending: HashMap<i32, Pending>,
    /// Why the connection closed, once it has.
    closed: Option<String>,
    /// The IO tasks (reader, writer, re-authenticator), stopped on close.
    tasks: Vec<AbortHandle>,
    /// While re-authenticating: the ordinary requests submitted meanwhile,
    /// in order, written once the SASL exchange is done.
    held: Option<Vec<WriteItem>>,
    /// The SASL session (KIP-368), if the broker set a lifetime. Past its
    /// write deadline an ordinary request is held until the
    /// re-authentication is done, even if the re-authenticator has not
    /// woken yet (a busy runtime), because the broker closes the
    /// connection on a request that arrives after the session ended.
    session: Option<reauth::Session>,
    /// The slowest round trip of a request written at once (not held) in
    /// this session, and half the slowest of the one before: how late the
    /// broker may read a request written now, which widens the hold
    /// margin.
    slowest_round_trip: Duration,
}

#[derive(Debug)]
struct Shared {
    /// The peer address as dialled.
    addr: String,
    /// Routing and lifecycle state.
    state: Mutex<State>,
    /// The socket's write half.
    writer: Arc<dyn SubmitFrame>,
    /// The `client.id` of every request header.
    client_id: Option<String>,
    /// The next SASL correlation id (an offset into the reserved range).
    next_sasl_id: AtomicI32,
    /// Successful re-authentications.
    reauthentications: AtomicU64,
    /// Wakes the re-authenticator when a request is held past the
    /// session's write deadline before its planned time.
    reauth_due: tokio::sync::Notify,
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
        self.writer.close();
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

    /// Writes `item` (or queues it, in order, for the writer task); a
    /// write error closes the connection. While the connection
    /// re-authenticates, ordinary requests (`sasl` false) are held and
    /// written after the SASL exchange, in order; so are those submitted
    /// past the session's write deadline. The decision and the write
    /// happen under the state lock, so no request can slip between SASL
    /// frames.
    ///
    /// A held request's round trip (`correlation_id`) does not count
    /// towards the connection's slowest one.
    fn submit(
        &self,
        item: WriteItem,
        api: Option<(ApiKey, i16)>,
        correlation_id: Option<i32>,
        sasl: bool,
    ) -> Result<(), ConnError> {
        let result = if sasl {
            self.writer.submit(item)
        } else {
            let mut st = self.lock();
            let st = &mut *st;
            let past_deadline = st.held.is_none()
                && st.session.is_some_and(|session| {
                    Instant::now() >= session.write_deadline(st.slowest_round_trip)
                });
            let unheld = match &mut st.held {
                Some(held) => {
                    held.push(item);
                    None
                }
                None if past_deadline => {
                    st.held = Some(vec![item]);
                    self.reauth_due.notify_one();
                    None
                }
                None => Some(item),
            };
            match unheld {
                Some(item) => self.writer.submit(item),
                None => {
                    if let Some(pending) = correlation_id.and_then(|id| st.pending.get_mut(&id)) {
                        pending.written = None;
                    }
                    Ok(())
                }
            }
        };
        match result {
            Ok(()) => Ok(()),
            Err(SubmitError::Closed) => Err(self.disconnected(api)),
            Err(SubmitError::Io(e)) => {
                self.fail_all(&format!("write error: {e}"));
                Err(self.disconnected(api))
            }
        }
    }

    /// Starts holding ordinary requests (a re-authentication begins).
    fn hold(&self) {
        let mut st = self.lock();
        if st.held.is_none() {
            st.held = Some(Vec::new());
        }
    }

    /// Writes the held requests in order and stops holding.
    fn release(&self) {
        let failed = {
            let mut st = self.lock();
            let held = st.held.take().unwrap_or_default();
            let mut failed = None;
            for item in held {
                if let Err(e) = self.writer.submit(item) {
                    failed = Some(e);
                    break;
                }
            }
            failed
        };
        match failed {
            None | Some(SubmitError::Closed) => {}
            Some(SubmitError::Io(e)) => self.fail_all(&format!("write error: {e}")),
        }
    }

    /// The next correlation id of the reserved SASL range.
    fn next_sasl_correlation_id(&self) -> i32 {
        MIN_RESERVED_CORRELATION_ID + (self.next_sasl_id.fetch_add(1, Ordering::Relaxed) & 7)
    }

    /// Sends one request frame with `correlation_id` and waits for the
    /// response frame body.
    async fn round_trip<R: Request>(
        &self,
        req: &R,
        version: i16,
        correlation_id: i32,
        timeout: Duration,
        sasl: bool,
    ) -> Result<Bytes, ConnError> {
        let frame = encode_request_frame(req, version, correlation_id, self.client_id.as_deref())?;
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.lock();
            if st.closed.is_some() {
                drop(st);
                return Err(self.disconnected(None));
            }
            let now = tokio::time::Instant::now();
            if let Some(overdue) = st.pending.values().find(|p| p.deadline <= now) {
                // An earlier request (whose caller gave up waiting) is past
                // its timeout unanswered: the broker stopped answering on
                // this connection. Close it, as Java's NetworkClient does
                // with any in-flight request past request.timeout.ms,
                // rather than queue this request behind it.
                let reason = format!(
                    "an earlier {:?} v{} request is unanswered past its timeout",
                    overdue.api, overdue.version
                );
                drop(st);
                tracing::warn!(addr = %self.addr, %reason, "closing the connection");
                self.fail_all(&reason);
                return Err(self.disconnected(Some((R::API_KEY, version))));
            }
            let written = st.session.is_some().then(Instant::now);
            st.pending.insert(
                correlation_id,
                Pending {
                    tx,
                    api: R::API_KEY,
                    version,
                    deadline: now + timeout,
                    written,
                },
            );
        }
        if let Err(e) = self.submit(
            WriteItem {
                frame,
                written: None,
            },
            None,
            Some(correlation_id),
            sasl,
        ) {
            self.lock().pending.remove(&correlation_id);
            return Err(e);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(self.disconnected(Some((R::API_KEY, version)))),
            Err(_) => {
                self.lock().pending.remove(&correlation_id);
                tracing::warn!(addr = %self.addr, api = ?R::API_KEY, version, correlation_id, ?timeout,
                    "request timed out; closing the connection");
                self.fail_all(&format!(
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

    /// [`Self::round_trip`] and the response decoded.
    async fn send<R: Request>(
        &self,
        req: &R,
        version: i16,
        correlation_id: i32,
        timeout: Duration,
        sasl: bool,
    ) -> Result<R::Response, ConnError> {
        let body = self
            .round_trip(req, version, correlation_id, timeout, sasl)
            .await?;
        decode_response_frame_bytes::<R::Response>(&body, version)
            .map(|(_, m)| m)
            .map_err(|source| ConnError::Decode {
                api: R::API_KEY,
                version,
                source,
            })
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

/// The framing and routing layer, before negotiation.
#[derive(Debug)]
struct Io {
    /// What the IO tasks share.
    shared: Arc<Shared>,
    /// The next ordinary correlation id.
    next_correlation_id: AtomicI32,
}

impl Io {
    /// Spawns the IO tasks on a split stream: plain TCP's owned halves or a
    /// TLS stream's `tokio::io::split` halves (monomorphized, so the plain
    /// path pays nothing for TLS).
    fn start<R, W>(
        rd: R,
        wr: W,
        addr: String,
        max_frame_size: usize,
        client_id: Option<String>,
    ) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let writer = FrameWriter::new(wr);
        let shared = Arc::new(Shared {
            addr,
            state: Mutex::new(State::default()),
            writer: writer.clone(),
            client_id,
            next_sasl_id: AtomicI32::new(0),
            reauthentications: AtomicU64::new(0),
            reauth_due: tokio::sync::Notify::new(),
        });
        let r = tokio::spawn(read_loop(rd, shared.clone(), max_frame_size));
        let w = tokio::spawn(write_loop(writer, shared.clone()));
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
            next_correlation_id: AtomicI32::new(0),
        }
    }

    /// The next ordinary correlation id: `0..MIN_RESERVED_CORRELATION_ID`,
    /// wrapping.
    fn next_correlation_id(&self) -> i32 {
        let n = self.next_correlation_id.fetch_add(1, Ordering::Relaxed) as u32;
        (n % MIN_RESERVED_CORRELATION_ID as u32) as i32
    }

    /// Writes `item` as an ordinary request (held while re-authenticating).
    fn submit(&self, item: WriteItem, api: Option<(ApiKey, i16)>) -> Result<(), ConnError> {
        self.shared.submit(item, api, None, false)
    }

    /// Sends one ordinary request frame and waits for the response frame body.
    async fn round_trip<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<Bytes, ConnError> {
        let id = self.next_correlation_id();
        self.shared
            .round_trip(req, version, id, timeout, false)
            .await
    }

    async fn send<R: Request>(
        &self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ConnError> {
        let id = self.next_correlation_id();
        self.shared.send(req, version, id, timeout, false).await
    }
}

async fn read_loop<R: AsyncRead + Unpin>(mut rd: R, shared: Arc<Shared>, max_frame_size: usize) {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
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
            buf.reserve(READ_CHUNK);
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
    let pending = {
        let mut st = shared.lock();
        let pending = st.pending.remove(&id);
        if let Some(written) = pending.as_ref().and_then(|p| p.written) {
            st.slowest_round_trip = st.slowest_round_trip.max(written.elapsed());
        }
        pending
    };
    match pending {
        Some(p) => {
            // The caller may have gone away (cancelled); that is fine.
            let _ = p.tx.send(Ok(frame));
            Ok(())
        }
        None => Err(format!("response with unexpected correlation id {id}")),
    }
}

/// The writer task: what the socket did not take at once, written as it
/// becomes writable; a write error closes the connection.
async fn write_loop<W: AsyncWrite + Unpin + Send + 'static>(
    writer: Arc<FrameWriter<W>>,
    shared: Arc<Shared>,
) {
    if let Err(e) = writer.run().await {
        shared.fail_all(&format!("write error: {e}"));
    }
}

/// Dropping the framing layer (a connection that failed its negotiation, or
/// the last handle of one) closes it: the IO tasks stop, the socket closes.
impl Drop for Io {
    fn drop(&mut self) {
        self.shared.fail_all("connection dropped");
    }
}

/// A negotiated (and, with SASL, authenticated) connection to one broker.
///
/// Cheap to share behind an `Arc`; every method takes `&self`. Dropping the
/// last handle closes the socket.
///
/// A request's way through a connection:
/// 1. [`Connection::send`] gives it the next correlation id and registers a
///    oneshot sender under that id;
/// 2. the frame is written by the submitting task while the socket takes it,
///    else by the connection's writer task (the `writer` module): either way
///    frames reach the socket whole and in the order they were submitted;
/// 3. a reader task splits the read half into frames and routes each
///    response to its caller by correlation id.
///
/// Any number of requests may be in flight at once.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::ConnError> {
/// use kafka_client::{Connection, ConnectionConfig};
/// use kafka_proto::messages::MetadataRequest;
/// let conn = Connection::connect("127.0.0.1:9092", &ConnectionConfig::default()).await?;
/// // The highest version both sides speak (`send` takes one chosen by the caller).
/// let metadata = conn.send_negotiated(&MetadataRequest::default()).await?;
/// println!("{} brokers", metadata.brokers.len());
/// conn.close();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Connection {
    /// The framing and routing layer.
    io: Io,
    /// The broker's API versions.
    versions: BrokerVersions,
    /// `request.timeout.ms`.
    request_timeout: Duration,
}

impl Connection {
    /// Connects to `addr` ("host:port"), negotiates API versions and, if
    /// configured, authenticates, all within `config.connect_timeout`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::ConnError> {
    /// use kafka_client::{Connection, ConnectionConfig, SaslConfig};
    /// let config = ConnectionConfig {
    ///     sasl: Some(SaslConfig::plain("alice", "alice-secret")),
    ///     ..Default::default()
    /// };
    /// let conn = Connection::connect("broker-1:9092", &config).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(addr: &str, config: &ConnectionConfig) -> Result<Self, ConnError> {
        Self::connect_within(addr, config, config.connect_timeout).await
    }

    /// [`connect`](Self::connect) with the setup bounded by `timeout`
    /// instead of [`ConnectionConfig::connect_timeout`] (a reconnecting
    /// [`BrokerConnection`](crate::BrokerConnection) passes
    /// [`ConnectionConfig::setup_timeout`]).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::ConnError> {
    /// use kafka_client::{Connection, ConnectionConfig};
    /// let config = ConnectionConfig::default();
    /// let conn = Connection::connect_within("broker-1:9092", &config, config.setup_timeout(2)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_within(
        addr: &str,
        config: &ConnectionConfig,
        timeout: Duration,
    ) -> Result<Self, ConnError> {
        match tokio::time::timeout(timeout, Self::connect_inner(addr, config)).await {
            Ok(r) => r,
            Err(_) => Err(ConnError::ConnectTimeout {
                addr: addr.to_string(),
                after: timeout,
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
        let _ = stream.set_nodelay(true);
        let io = match &config.tls {
            None => {
                let (rd, wr) = stream.into_split();
                Io::start(
                    rd,
                    wr,
                    addr.to_string(),
                    config.max_frame_size,
                    config.client_id.clone(),
                )
            }
            Some(tls) => start_tls(addr, stream, tls, config).await?,
        };
        let versions = negotiate(&io, config).await?;
        tracing::debug!(
            addr,
            api_versions = versions.api_versions_version(),
            "negotiated"
        );
        if let Some(sasl) = &config.sasl {
            reauth::login(&io.shared, &versions, sasl, config.request_timeout).await?;
        }
        Ok(Self {
            io,
            versions,
            request_timeout: config.request_timeout,
        })
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

    /// When the SASL session ends (KIP-368 `session_lifetime_ms`); the
    /// connection re-authenticates before then (and the broker closes it
    /// at that time if it did not).
    pub fn session_expiry(&self) -> Option<Instant> {
        self.io.shared.lock().session.map(|s| s.expiry())
    }

    /// Sets the slowest recent round trip the hold margin follows (the
    /// tests' stand-in for a slow broker seen earlier).
    #[cfg(test)]
    pub(crate) fn set_slowest_round_trip(&self, slowest: Duration) {
        self.io.shared.lock().slowest_round_trip = slowest;
    }

    /// How many times this connection has re-authenticated (KIP-368).
    pub fn reauthentications(&self) -> u64 {
        self.io.shared.reauthentications.load(Ordering::Relaxed)
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
        let frame = encode_request_frame(
            req,
            version,
            correlation_id,
            self.io.shared.client_id.as_deref(),
        )?;
        if self.is_closed() {
            return Err(self.io.shared.disconnected(None));
        }
        let (tx, rx) = oneshot::channel();
        let api = Some((R::API_KEY, version));
        self.io.submit(
            WriteItem {
                frame,
                written: Some(tx),
            },
            api,
        )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_client_id_is_kafka_eos() {
        assert_eq!(
            ConnectionConfig::default().client_id.as_deref(),
            Some("kafka-eos")
        );
    }

    #[test]
    fn setup_timeout_doubles_per_failure_up_to_the_max() {
        let c = ConnectionConfig::default();
        assert_eq!(c.setup_timeout(0), Duration::from_secs(10));
        assert_eq!(c.setup_timeout(1), Duration::from_secs(20));
        assert_eq!(c.setup_timeout(5), Duration::from_secs(30));
    }
}
