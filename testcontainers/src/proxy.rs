//! A fault-injecting TCP proxy for Kafka connections.

use crate::Result;
use crate::error::HarnessError;
use bytes::{Bytes, BytesMut};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A direction of traffic through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Requests: client → broker.
    ClientToServer,
    /// Responses: broker → client.
    ServerToClient,
}

impl Direction {
    fn idx(self) -> usize {
        match self {
            Direction::ClientToServer => 0,
            Direction::ServerToClient => 1,
        }
    }
}

#[derive(Debug, Default)]
struct Faults {
    latency: [Duration; 2],
    paused: [bool; 2],
    black_hole: bool,
    corrupt_remaining: [u64; 2],
    /// The next request with this API key is held this long.
    hold_request: Option<(i16, Duration)>,
}

#[derive(Debug)]
struct Shared {
    listen: SocketAddr,
    upstream: SocketAddr,
    faults: Mutex<Faults>,
    /// Bumped on every fault change (wakes paused writers).
    changed: watch::Sender<u64>,
    /// Bumped to reset every current connection.
    reset: watch::Sender<u64>,
    shutdown: AtomicBool,
    /// Absolute index (1-based) of the broker→client frame to swallow; 0 = none.
    drop_target: AtomicU64,
    frames_seen: AtomicU64,
    frames_dropped: AtomicU64,
    /// Requests held by [`ProxyHandle::hold_next_request`], and those of
    /// them delivered since.
    requests_held: AtomicU64,
    held_requests_delivered: AtomicU64,
    active: AtomicUsize,
    accepted: AtomicU64,
}

impl Shared {
    fn faults(&self) -> std::sync::MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    fn corrupt(&self, dir: Direction, data: Bytes) -> Bytes {
        let mut f = self.faults();
        let left = &mut f.corrupt_remaining[dir.idx()];
        if *left == 0 || data.is_empty() {
            return data;
        }
        let n = (*left).min(data.len() as u64) as usize;
        *left -= n as u64;
        let mut out = BytesMut::from(&data[..]);
        for b in &mut out[..n] {
            *b ^= 0xFF;
        }
        out.freeze()
    }
}

/// Run-time control of a [`Proxy`]. Cheap to clone.
///
/// ```
/// use kafka_testcontainers::{Direction, Proxy};
/// use std::time::Duration;
/// let proxy = Proxy::start("127.0.0.1:9092".parse()?)?;
/// let handle = proxy.handle().clone(); // e.g. for a fault-injecting task
/// handle.set_latency(Direction::ServerToClient, Duration::from_millis(200));
/// assert_eq!(handle.listen_addr(), proxy.listen_addr());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ProxyHandle {
    shared: Arc<Shared>,
}

impl ProxyHandle {
    /// The address clients connect to.
    pub fn listen_addr(&self) -> SocketAddr {
        self.shared.listen
    }

    /// The address connections are forwarded to.
    pub fn upstream_addr(&self) -> SocketAddr {
        self.shared.upstream
    }

    /// Delays every chunk in `dir` by at least `latency` (zero disables).
    pub fn set_latency(&self, dir: Direction, latency: Duration) {
        self.shared.faults().latency[dir.idx()] = latency;
        self.shared.notify();
    }

    /// Closes every current connection with a TCP RST on both sides. New
    /// connections are accepted as usual.
    pub fn reset_connections(&self) {
        self.shared.reset.send_modify(|g| *g += 1);
    }

    /// Turns the black hole on or off.
    pub fn set_black_hole(&self, on: bool) {
        self.shared.faults().black_hole = on;
        self.shared.notify();
    }

    /// Holds all bytes in `dir` until [`resume`](Self::resume).
    pub fn pause(&self, dir: Direction) {
        self.shared.faults().paused[dir.idx()] = true;
        self.shared.notify();
    }

    /// Releases bytes held by [`pause`](Self::pause).
    pub fn resume(&self, dir: Direction) {
        self.shared.faults().paused[dir.idx()] = false;
        self.shared.notify();
    }

    /// Swallows the `n`th (1-based) complete broker→client frame that starts
    /// after this call, on any connection. Replaces an earlier pending drop.
    pub fn drop_nth_response(&self, n: u64) {
        assert!(n >= 1, "drop_nth_response counts from 1");
        // Frame indices are assigned under the frames_seen counter; aiming at
        // seen + n makes the count start now.
        let target = self.shared.frames_seen.load(Ordering::SeqCst) + n;
        self.shared.drop_target.store(target, Ordering::SeqCst);
    }

    /// XORs the next `bytes` bytes forwarded in `dir` with `0xFF`.
    pub fn corrupt_next(&self, dir: Direction, bytes: u64) {
        self.shared.faults().corrupt_remaining[dir.idx()] = bytes;
    }

    /// Holds the next client→broker request of API `api_key` (on whichever
    /// connection it comes) for `hold`, then delivers it: the bytes behind
    /// it on that connection wait with it, other connections flow. With a
    /// hold longer than the client's request timeout, the client gives up,
    /// reconnects and goes on while the request is still on its way.
    pub fn hold_next_request(&self, api_key: i16, hold: Duration) {
        self.shared.faults().hold_request = Some((api_key, hold));
    }

    /// Requests held by [`Self::hold_next_request`] so far.
    pub fn requests_held(&self) -> u64 {
        self.shared.requests_held.load(Ordering::SeqCst)
    }

    /// Held requests released to the broker so far (counted as they are
    /// written to its connection).
    pub fn held_requests_delivered(&self) -> u64 {
        self.shared.held_requests_delivered.load(Ordering::SeqCst)
    }

    /// Removes every fault (latency, pause, black hole, pending drop and
    /// corruption). Does not reset connections.
    pub fn clear_faults(&self) {
        *self.shared.faults() = Faults::default();
        self.shared.drop_target.store(0, Ordering::SeqCst);
        self.shared.notify();
    }

    /// Connections currently open through the proxy.
    pub fn active_connections(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// Connections accepted since the proxy started.
    pub fn accepted_connections(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Broker→client frames seen since the proxy started (dropped included).
    pub fn responses_seen(&self) -> u64 {
        self.shared.frames_seen.load(Ordering::SeqCst)
    }

    /// Broker→client frames swallowed by [`drop_nth_response`](Self::drop_nth_response).
    pub fn responses_dropped(&self) -> u64 {
        self.shared.frames_dropped.load(Ordering::SeqCst)
    }
}

/// A running proxy; stops (resetting its connections) on drop.
///
/// A [`Proxy`] listens on a loopback port and forwards every accepted
/// connection to one upstream address (a broker). Faults are switched at run
/// time through a cloneable [`ProxyHandle`]:
///
/// | Fault | Method | Effect |
/// |---|---|---|
/// | latency | [`ProxyHandle::set_latency`] | each chunk read in that direction is delivered no earlier than `latency` after it was read (throughput is unchanged) |
/// | reset | [`ProxyHandle::reset_connections`] | every current connection is closed on both sides with a TCP RST (`SO_LINGER` 0) |
/// | black hole | [`ProxyHandle::set_black_hole`] | new connections are accepted but never connected upstream; on existing ones all bytes in both directions are discarded |
/// | pause | [`ProxyHandle::pause`] / [`ProxyHandle::resume`] | bytes in that direction are held (buffered) until resumed |
/// | drop response | [`ProxyHandle::drop_nth_response`] | the Nth complete broker→client frame (counted by its 4-byte length prefix, across all connections, from the call on) is swallowed; later frames pass |
/// | corrupt | [`ProxyHandle::corrupt_next`] | the next K bytes forwarded in that direction are XORed with `0xFF` |
/// | hold a request | [`ProxyHandle::hold_next_request`] | the next client→broker request of one API (found by its frame's API key, on any connection) is delivered only after a delay; bytes behind it on **that** connection wait with it, other and new connections flow — a request that reaches the broker after its client gave up and moved on |
///
/// The proxy runs on the harness's background runtime, so it keeps working
/// across the per-test runtimes of `#[tokio::test]`.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::{Direction, KafkaCluster};
/// use std::time::Duration;
/// // Every client connection to a node crosses that node's proxy.
/// let cluster = KafkaCluster::builder().with_proxies(true).start().await?;
/// let proxy = cluster.proxy(0);
/// proxy.set_latency(Direction::ServerToClient, Duration::from_millis(200));
/// // ... a client's requests now take 200 ms longer ...
/// proxy.drop_nth_response(1); // the next response is lost: the client times out
/// // ...
/// proxy.clear_faults();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Proxy {
    handle: ProxyHandle,
    accept_task: JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy on a free loopback port in front of `upstream`; clients
    /// connect to [`listen_addr`](ProxyHandle::listen_addr) instead.
    ///
    /// ```
    /// use kafka_testcontainers::{Direction, Proxy};
    /// use std::io::{Read, Write};
    /// use std::net::{TcpListener, TcpStream};
    /// let upstream = TcpListener::bind("127.0.0.1:0")?; // stands for a broker
    /// let proxy = Proxy::start(upstream.local_addr()?)?;
    /// let mut client = TcpStream::connect(proxy.listen_addr())?;
    /// let (mut server, _) = upstream.accept()?;
    /// proxy.corrupt_next(Direction::ClientToServer, 1); // flip the next byte's bits
    /// client.write_all(b"\x00ok")?;
    /// let mut received = [0; 3];
    /// server.read_exact(&mut received)?;
    /// assert_eq!(&received, b"\xffok");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(upstream: SocketAddr) -> Result<Proxy> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| HarnessError::io("binding proxy port", e))?;
        Self::from_listener(listener, upstream)
    }

    /// Starts a proxy on an already bound listener (used to reserve the port
    /// before brokers that advertise it are configured).
    pub fn from_listener(listener: std::net::TcpListener, upstream: SocketAddr) -> Result<Proxy> {
        let listen = listener
            .local_addr()
            .map_err(|e| HarnessError::io("reading proxy address", e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| HarnessError::io("making proxy listener non-blocking", e))?;
        let rt = crate::runtime::background();
        let listener = {
            let _guard = rt.enter();
            TcpListener::from_std(listener)
                .map_err(|e| HarnessError::io("registering proxy listener", e))?
        };
        let shared = Arc::new(Shared {
            listen,
            upstream,
            faults: Mutex::new(Faults::default()),
            changed: watch::channel(0).0,
            reset: watch::channel(0).0,
            shutdown: AtomicBool::new(false),
            drop_target: AtomicU64::new(0),
            frames_seen: AtomicU64::new(0),
            frames_dropped: AtomicU64::new(0),
            requests_held: AtomicU64::new(0),
            held_requests_delivered: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            accepted: AtomicU64::new(0),
        });
        let accept_shared = shared.clone();
        let accept_task = rt.spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    continue;
                };
                if accept_shared.shutdown.load(Ordering::SeqCst) {
                    return;
                }
                accept_shared.accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(handle_connection(accept_shared.clone(), sock));
            }
        });
        Ok(Proxy {
            handle: ProxyHandle { shared },
            accept_task,
        })
    }

    /// The run-time control handle.
    pub fn handle(&self) -> &ProxyHandle {
        &self.handle
    }

    /// The address clients connect to.
    pub fn listen_addr(&self) -> SocketAddr {
        self.handle.listen_addr()
    }
}

impl std::ops::Deref for Proxy {
    type Target = ProxyHandle;
    fn deref(&self) -> &ProxyHandle {
        &self.handle
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.handle.shared.shutdown.store(true, Ordering::SeqCst);
        self.accept_task.abort();
        self.handle.reset_connections();
    }
}

struct ActiveGuard(Arc<Shared>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Chunk {
    at: Instant,
    data: Bytes,
    /// Delivered no earlier than this after `at` (a held request).
    hold: Duration,
}

/// Waits for a reset (or the proxy going away). Cancel-safe.
async fn reset_signal(rx: &mut watch::Receiver<u64>) {
    let _ = rx.changed().await;
}

async fn handle_connection(shared: Arc<Shared>, client: TcpStream) {
    shared.active.fetch_add(1, Ordering::SeqCst);
    let _guard = ActiveGuard(shared.clone());
    let mut reset = shared.reset.subscribe();
    reset.mark_unchanged();
    if shared.shutdown.load(Ordering::SeqCst) {
        return;
    }
    let _ = client.set_nodelay(true);

    if shared.faults().black_hole {
        black_hole(client, reset).await;
        return;
    }

    let upstream = tokio::select! {
        biased;
        _ = reset_signal(&mut reset) => {
            let _ = client.set_zero_linger();
            return;
        }
        r = TcpStream::connect(shared.upstream) => r,
    };
    let Ok(upstream) = upstream else {
        // Broker down: the client sees the connection close.
        return;
    };
    let _ = upstream.set_nodelay(true);

    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    let (tx_up, rx_up) = mpsc::channel(64);
    let (tx_down, rx_down) = mpsc::channel(64);
    let ((cr, r1), (uw, r2), (ur, r3), (cw, r4)) = tokio::join!(
        reader(
            cr,
            tx_up,
            None,
            Some(RequestScanner::default()),
            shared.clone(),
            reset.clone()
        ),
        writer(
            rx_up,
            uw,
            Direction::ClientToServer,
            shared.clone(),
            reset.clone()
        ),
        reader(
            ur,
            tx_down,
            Some(Framer::default()),
            None,
            shared.clone(),
            reset.clone()
        ),
        writer(
            rx_down,
            cw,
            Direction::ServerToClient,
            shared.clone(),
            reset.clone()
        ),
    );
    if r1 || r2 || r3 || r4 {
        let _ = cw.as_ref().set_zero_linger();
        let _ = uw.as_ref().set_zero_linger();
    }
    drop((cr, cw, ur, uw));
}

async fn black_hole(mut client: TcpStream, mut reset: watch::Receiver<u64>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            biased;
            _ = reset_signal(&mut reset) => {
                let _ = client.set_zero_linger();
                return;
            }
            r = client.read(&mut buf) => match r {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
        }
    }
}

/// Counts Kafka frames (4-byte big-endian length + body) and swallows the
/// one whose index matches the shared drop target.
#[derive(Debug, Default)]
struct Framer {
    header: [u8; 4],
    header_len: usize,
    remaining: usize,
    dropping: bool,
}

impl Framer {
    fn process(&mut self, input: &[u8], shared: &Shared) -> Bytes {
        let mut out = BytesMut::with_capacity(input.len());
        let mut i = 0;
        while i < input.len() {
            if self.remaining > 0 {
                let take = self.remaining.min(input.len() - i);
                if !self.dropping {
                    out.extend_from_slice(&input[i..i + take]);
                }
                self.remaining -= take;
                i += take;
                continue;
            }
            let take = (4 - self.header_len).min(input.len() - i);
            self.header[self.header_len..self.header_len + take]
                .copy_from_slice(&input[i..i + take]);
            self.header_len += take;
            i += take;
            if self.header_len == 4 {
                self.header_len = 0;
                let size = i32::from_be_bytes(self.header).max(0) as usize;
                let idx = shared.frames_seen.fetch_add(1, Ordering::SeqCst) + 1;
                self.dropping = shared
                    .drop_target
                    .compare_exchange(idx, 0, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
                if self.dropping {
                    shared.frames_dropped.fetch_add(1, Ordering::SeqCst);
                } else {
                    out.extend_from_slice(&self.header);
                }
                self.remaining = size;
            }
        }
        out.freeze()
    }
}

/// Reads from `r` into the channel. Returns the half and whether a reset
/// ended it.
/// Finds where client→broker requests start and reads their API keys
/// (4-byte length, then the header's 2-byte API key), across chunks.
#[derive(Debug, Default)]
struct RequestScanner {
    header: [u8; 6],
    header_len: usize,
    remaining: usize,
}

impl RequestScanner {
    /// Pushes the API key of every request that starts in `input`.
    fn starts(&mut self, input: &[u8], keys: &mut Vec<i16>) {
        let mut i = 0;
        while i < input.len() {
            if self.remaining > 0 {
                let take = self.remaining.min(input.len() - i);
                self.remaining -= take;
                i += take;
                continue;
            }
            let take = (6 - self.header_len).min(input.len() - i);
            self.header[self.header_len..self.header_len + take]
                .copy_from_slice(&input[i..i + take]);
            self.header_len += take;
            i += take;
            if self.header_len == 6 {
                self.header_len = 0;
                let size = i32::from_be_bytes([
                    self.header[0],
                    self.header[1],
                    self.header[2],
                    self.header[3],
                ])
                .max(0) as usize;
                keys.push(i16::from_be_bytes([self.header[4], self.header[5]]));
                self.remaining = size.saturating_sub(2);
            }
        }
    }

    /// How long the chunk `input` must be held: the armed hold when a
    /// request of its API starts in it (the hold is then used up).
    fn hold_for(&mut self, input: &[u8], shared: &Shared) -> Duration {
        let mut keys = Vec::new();
        self.starts(input, &mut keys);
        let mut f = shared.faults();
        match f.hold_request {
            Some((api, hold)) if keys.contains(&api) => {
                f.hold_request = None;
                shared.requests_held.fetch_add(1, Ordering::SeqCst);
                hold
            }
            _ => Duration::ZERO,
        }
    }
}

async fn reader(
    mut r: OwnedReadHalf,
    tx: mpsc::Sender<Chunk>,
    mut framer: Option<Framer>,
    mut scanner: Option<RequestScanner>,
    shared: Arc<Shared>,
    mut reset: watch::Receiver<u64>,
) -> (OwnedReadHalf, bool) {
    loop {
        let mut buf = BytesMut::with_capacity(64 * 1024);
        tokio::select! {
            biased;
            _ = reset_signal(&mut reset) => return (r, true),
            n = r.read_buf(&mut buf) => match n {
                Ok(0) | Err(_) => return (r, false),
                Ok(_) => {}
            },
        }
        let at = Instant::now();
        let hold = match scanner.as_mut() {
            Some(sc) => sc.hold_for(&buf, &shared),
            None => Duration::ZERO,
        };
        let data = match framer.as_mut() {
            Some(f) => f.process(&buf, &shared),
            None => buf.freeze(),
        };
        if data.is_empty() {
            continue;
        }
        tokio::select! {
            biased;
            _ = reset_signal(&mut reset) => return (r, true),
            sent = tx.send(Chunk { at, data, hold }) => if sent.is_err() {
                return (r, false);
            },
        }
    }
}

/// Writes chunks from the channel to `w`, applying latency, pause, black
/// hole and corruption. Returns the half and whether a reset ended it.
async fn writer(
    mut rx: mpsc::Receiver<Chunk>,
    mut w: OwnedWriteHalf,
    dir: Direction,
    shared: Arc<Shared>,
    mut reset: watch::Receiver<u64>,
) -> (OwnedWriteHalf, bool) {
    let mut changed = shared.changed.subscribe();
    loop {
        let chunk = tokio::select! {
            biased;
            _ = reset_signal(&mut reset) => return (w, true),
            c = rx.recv() => match c {
                Some(c) => c,
                None => {
                    let _ = w.shutdown().await;
                    return (w, false);
                }
            },
        };
        loop {
            changed.borrow_and_update();
            let (latency, paused) = {
                let f = shared.faults();
                (f.latency[dir.idx()], f.paused[dir.idx()])
            };
            let due = chunk.at + latency + chunk.hold;
            if !paused && Instant::now() >= due {
                break;
            }
            tokio::select! {
                biased;
                _ = reset_signal(&mut reset) => return (w, true),
                _ = changed.changed() => {}
                _ = tokio::time::sleep_until(due), if !paused => {}
            }
        }
        if shared.faults().black_hole {
            continue;
        }
        let data = shared.corrupt(dir, chunk.data);
        if !chunk.hold.is_zero() {
            // Counted as it is released, before the broker can read it.
            shared
                .held_requests_delivered
                .fetch_add(1, Ordering::SeqCst);
        }
        tokio::select! {
            biased;
            _ = reset_signal(&mut reset) => return (w, true),
            r = w.write_all(&data) => if r.is_err() {
                return (w, false);
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A proxy in front of a loopback listener, one client connected through
    /// it and the upstream side of that connection.
    fn connected() -> (Proxy, std::net::TcpStream, std::net::TcpStream) {
        let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Proxy::start(upstream.local_addr().unwrap()).unwrap();
        let client = std::net::TcpStream::connect(proxy.listen_addr()).unwrap();
        let (server, _) = upstream.accept().unwrap();
        (proxy, client, server)
    }

    fn read_n(stream: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        stream.read_exact(&mut buf).unwrap();
        buf
    }

    fn unreachable_upstream() -> SocketAddr {
        "127.0.0.1:9092".parse().unwrap()
    }

    #[test]
    fn start_listens_on_loopback_apart_from_upstream() {
        let proxy = Proxy::start(unreachable_upstream()).unwrap();
        assert_eq!(proxy.listen_addr().ip().to_string(), "127.0.0.1");
        assert_ne!(proxy.listen_addr(), proxy.upstream_addr());
        assert_eq!(proxy.upstream_addr().port(), 9092);
        assert_eq!(proxy.handle().listen_addr(), proxy.listen_addr());
    }

    #[test]
    fn from_listener_listens_on_the_reserved_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = Proxy::from_listener(listener, unreachable_upstream()).unwrap();
        assert_eq!(proxy.listen_addr().port(), port);
    }

    #[test]
    fn handle_works_from_another_thread() {
        let proxy = Proxy::start(unreachable_upstream()).unwrap();
        let handle = proxy.handle().clone();
        std::thread::spawn(move || handle.reset_connections())
            .join()
            .unwrap();
    }

    #[test]
    fn bytes_flow_both_ways_and_responses_are_counted() {
        let (proxy, mut client, mut server) = connected();
        client.write_all(b"ping").unwrap();
        assert_eq!(read_n(&mut server, 4), b"ping");
        server.write_all(&[0, 0, 0, 2, 7, 7]).unwrap();
        assert_eq!(read_n(&mut client, 6), [0, 0, 0, 2, 7, 7]);
        assert_eq!(proxy.responses_seen(), 1);
    }

    #[test]
    fn an_accepted_connection_is_counted_and_active() {
        let (proxy, _client, _server) = connected();
        assert_eq!(proxy.accepted_connections(), 1);
        assert_eq!(proxy.active_connections(), 1);
    }

    #[test]
    fn latency_delays_but_delivers() {
        let (proxy, mut client, mut server) = connected();
        proxy.set_latency(Direction::ClientToServer, Duration::from_millis(50));
        let t = std::time::Instant::now();
        client.write_all(b"late").unwrap();
        assert_eq!(read_n(&mut server, 4), b"late");
        assert!(t.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn reset_closes_the_client_connection() {
        let (proxy, mut client, _server) = connected();
        proxy.reset_connections();
        let mut buf = [0; 1];
        assert!(
            !matches!(client.read(&mut buf), Ok(n) if n > 0),
            "the client sees a reset"
        );
    }

    #[test]
    fn black_hole_can_be_switched_on_and_off() {
        let proxy = Proxy::start(unreachable_upstream()).unwrap();
        proxy.set_black_hole(true);
        proxy.set_black_hole(false);
        proxy.pause(Direction::ServerToClient);
        proxy.resume(Direction::ServerToClient);
    }

    #[test]
    fn pause_holds_bytes_until_resume() {
        let (proxy, mut client, mut server) = connected();
        proxy.pause(Direction::ClientToServer);
        client.write_all(b"held").unwrap();
        proxy.resume(Direction::ClientToServer);
        assert_eq!(read_n(&mut server, 4), b"held");
    }

    #[test]
    fn drop_nth_response_swallows_that_frame_only() {
        let (proxy, mut client, mut server) = connected();
        proxy.drop_nth_response(1);
        server
            .write_all(&[0, 0, 0, 1, b'a', 0, 0, 0, 1, b'b'])
            .unwrap();
        assert_eq!(read_n(&mut client, 5), [0, 0, 0, 1, b'b']);
        assert_eq!((proxy.responses_seen(), proxy.responses_dropped()), (2, 1));
    }

    #[test]
    fn a_drop_is_counted_only_once_the_frame_is_swallowed() {
        let proxy = Proxy::start(unreachable_upstream()).unwrap();
        proxy.drop_nth_response(3);
        assert_eq!(proxy.responses_dropped(), 0);
    }

    #[test]
    fn corrupt_next_flips_the_next_bytes_only() {
        let (proxy, mut client, mut server) = connected();
        proxy.corrupt_next(Direction::ClientToServer, 2);
        client.write_all(&[0x00, 0x0f, 0x42]).unwrap();
        assert_eq!(read_n(&mut server, 3), [0xff, 0xf0, 0x42]);
    }

    #[test]
    fn held_request_arrives_after_the_hold_and_is_counted() {
        let (proxy, mut client, mut server) = connected();
        assert_eq!(
            (proxy.requests_held(), proxy.held_requests_delivered()),
            (0, 0)
        );
        proxy.hold_next_request(26, Duration::from_millis(200)); // EndTxn
        let t = std::time::Instant::now();
        client.write_all(&[0, 0, 0, 2, 0, 26]).unwrap(); // a 2-byte frame: API key 26
        read_n(&mut server, 6);
        assert!(t.elapsed() >= Duration::from_millis(200));
        assert_eq!(
            (proxy.requests_held(), proxy.held_requests_delivered()),
            (1, 1)
        );
    }

    #[test]
    fn clear_faults_lifts_pause_and_corruption() {
        let (proxy, mut client, mut server) = connected();
        proxy.pause(Direction::ClientToServer);
        proxy.corrupt_next(Direction::ClientToServer, 100);
        proxy.clear_faults();
        client.write_all(b"ok").unwrap();
        assert_eq!(read_n(&mut server, 2), b"ok");
    }
}
