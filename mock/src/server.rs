//! The tokio driver: one TCP listener per broker on 127.0.0.1, a task per
//! connection reading frames and answering them in order, and a ticker
//! that writes due transaction markers and aborts timed-out transactions.
//! Every request is served under the one lock of the cluster state.

use crate::faults::{Fault, FaultAction, Interceptor, Request, RequestInfo};
use crate::handlers::{self, Outcome};
use crate::state::{ClusterState, Ctx};
use bytes::{Bytes, BytesMut};
use kafka_proto::frame::{FrameDecoder, RequestHeaderStart, peek_request_header};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// The largest request frame the brokers accept (`socket.request.max.bytes`).
const MAX_REQUEST: usize = 100 * 1024 * 1024;

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One broker's listener and its connections' kill switch.
#[derive(Debug)]
pub(crate) struct BrokerIo {
    pub addr: SocketAddr,
    pub listener: Option<JoinHandle<()>>,
    /// Bumped to close every open connection of the broker.
    pub generation: watch::Sender<u64>,
    /// Refuse connections (a network partition, or a stopped broker).
    pub reachable: bool,
}

/// What the driver shares between its tasks.
pub(crate) struct Shared {
    pub state: Mutex<ClusterState>,
    /// Woken after every request that may have changed a log.
    pub changed: Notify,
    pub faults: Mutex<VecDeque<Fault>>,
    pub interceptor: Mutex<Option<Interceptor>>,
    pub io: Mutex<HashMap<i32, BrokerIo>>,
    pub log: Mutex<Vec<RequestInfo>>,
    /// The number the next accepted connection gets.
    pub next_connection: AtomicU64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl Shared {
    fn choose_fault(&self, r: &Request<'_>) -> Option<FaultAction> {
        let interceptor = self.interceptor.lock().unwrap().clone();
        if let Some(f) = interceptor
            && let Some(action) = f(r)
        {
            return Some(action);
        }
        let mut faults = self.faults.lock().unwrap();
        let i = faults.iter().position(|f| f.matches(r.info()))?;
        let action = faults[i].action.clone();
        faults[i].times -= 1;
        if faults[i].times == 0 {
            faults.remove(i);
        }
        Some(action)
    }
}

/// Binds `addr` (port 0: any) with SO_REUSEADDR, so that a restarted
/// broker gets its port back.
pub(crate) fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// Accepts connections for broker `id` until the task is aborted.
pub(crate) fn spawn_listener(
    shared: Arc<Shared>,
    id: i32,
    listener: TcpListener,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Ok((sock, peer)) = listener.accept().await else {
                return;
            };
            let _ = sock.set_nodelay(true);
            let kill = {
                let io = shared.io.lock().unwrap();
                match io.get(&id) {
                    Some(b) if b.reachable => b.generation.subscribe(),
                    _ => continue,
                }
            };
            let host: Arc<str> = Arc::from(format!("/{}", peer.ip()));
            let connection = shared.next_connection.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(serve(shared.clone(), (id, connection), sock, host, kill));
        }
    })
}

/// Writes due markers and aborts timed-out transactions until the
/// cluster is dropped.
pub(crate) fn spawn_ticker(shared: std::sync::Weak<Shared>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let changed = {
                let mut st = shared.state.lock().unwrap();
                let before = st.appends;
                st.tick(now_ms());
                st.appends != before
            };
            if changed {
                shared.changed.notify_waiters();
            }
        }
    })
}

/// Splits the complete frames out of `buf` into `arrived`, listing each
/// in the request log as it arrives; `false` when a frame is malformed
/// (too large, or shorter than a request header): the connection closes.
fn take_frames(
    shared: &Shared,
    (broker, connection): (i32, u64),
    dec: &mut FrameDecoder,
    buf: &mut BytesMut,
    arrived: &mut VecDeque<(RequestInfo, Bytes)>,
) -> bool {
    loop {
        let frame = match dec.decode(buf) {
            Ok(Some(frame)) => frame,
            Ok(None) => return true,
            Err(_) => return false,
        };
        let Ok(RequestHeaderStart {
            api_key: api,
            api_version: version,
            correlation_id,
        }) = peek_request_header(&frame)
        else {
            return false;
        };
        let info = RequestInfo {
            broker,
            connection,
            api,
            version,
            correlation_id,
        };
        shared.log.lock().unwrap().push(info);
        arrived.push_back((info, frame));
    }
}

async fn serve(
    shared: Arc<Shared>,
    (broker, connection): (i32, u64),
    mut sock: TcpStream,
    client_host: Arc<str>,
    mut kill: watch::Receiver<u64>,
) {
    let mut dec = FrameDecoder::new(MAX_REQUEST);
    let mut buf = BytesMut::with_capacity(4096);
    // Requests read but not served yet, in arrival order.
    let mut arrived = VecDeque::new();
    loop {
        let (info, frame) = loop {
            if !take_frames(
                &shared,
                (broker, connection),
                &mut dec,
                &mut buf,
                &mut arrived,
            ) {
                return;
            }
            if let Some(next) = arrived.pop_front() {
                break next;
            }
            tokio::select! {
                r = sock.read_buf(&mut buf) => match r {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                },
                _ = kill.changed() => return,
            }
        };
        let RequestInfo { api, version, .. } = info;
        let mut action = shared.choose_fault(&Request::new(info, &frame));
        while let Some(FaultAction::Hold(gate)) = &action {
            // Read on while held: the client may pipeline more requests
            // (listed as they arrive) or close.
            let mut released = gate.hold(info);
            action = loop {
                tokio::select! {
                    // What the test released it with (a dropped handle
                    // releases it to be served).
                    then = &mut released => break then.unwrap_or(None),
                    r = sock.read_buf(&mut buf) => match r {
                        Ok(0) | Err(_) => return,
                        Ok(_) => if !take_frames(&shared, (broker, connection), &mut dec, &mut buf, &mut arrived) {
                            return;
                        },
                    },
                    _ = kill.changed() => return,
                }
            };
        }
        let mut inject = None;
        match &action {
            Some(FaultAction::DisconnectBefore) => return,
            Some(FaultAction::Delay(d)) => {
                tokio::select! {
                    _ = tokio::time::sleep(*d) => {}
                    _ = kill.changed() => return,
                }
            }
            Some(FaultAction::Error(code)) => inject = Some(*code),
            Some(FaultAction::Respond(response)) => {
                let Some(bytes) = response.frame_for(&info) else {
                    tracing::warn!(
                        broker,
                        ?api,
                        version,
                        ?response,
                        "kafka-mock cannot answer with this response; closes the connection"
                    );
                    return;
                };
                tokio::select! {
                    r = sock.write_all(&bytes) => if r.is_err() { return },
                    _ = kill.changed() => return,
                }
                continue;
            }
            _ => {}
        }
        let mut final_attempt = false;
        // The first park's deadline holds: a request run again after a
        // change does not wait longer than it asked to.
        let mut deadline: Option<i64> = None;
        let outcome = loop {
            let notified = shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (outcome, changed) = {
                let mut st = shared.state.lock().unwrap();
                let before = st.appends;
                let ctx = Ctx {
                    broker,
                    now_ms: now_ms(),
                    client_host: client_host.clone(),
                    client_id: Arc::from(""),
                };
                let o = handlers::handle(&mut st, &ctx, &frame, inject, final_attempt);
                (o, st.appends != before)
            };
            if changed {
                shared.changed.notify_waiters();
            }
            match outcome {
                Outcome::Park { until_ms } => {
                    let until_ms = *deadline.get_or_insert(until_ms);
                    let wait =
                        Duration::from_millis(u64::try_from(until_ms - now_ms()).unwrap_or(0));
                    tokio::select! {
                        _ = &mut notified => {}
                        _ = tokio::time::sleep(wait) => final_attempt = true,
                        _ = kill.changed() => return,
                    }
                }
                other => break other,
            }
        };
        match (outcome, action) {
            (Outcome::Close(reason), _) => {
                tracing::debug!(broker, ?api, version, %reason, "kafka-mock closes the connection");
                return;
            }
            (_, Some(FaultAction::DisconnectAfter)) => return,
            (_, Some(FaultAction::DropResponse)) => {
                // Silent from now on: the client gives up on its own.
                let mut sink = [0u8; 4096];
                loop {
                    tokio::select! {
                        r = sock.read(&mut sink) => if matches!(r, Ok(0) | Err(_)) { return },
                        _ = kill.changed() => return,
                    }
                }
            }
            (Outcome::Respond(bytes), _) => {
                tokio::select! {
                    r = sock.write_all(&bytes) => if r.is_err() { return },
                    _ = kill.changed() => return,
                }
            }
            (Outcome::Silent | Outcome::Park { .. }, _) => {}
        }
    }
}
