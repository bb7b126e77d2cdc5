//! Faults: what the mock does to a request instead of (or besides)
//! serving it, chosen per request by queued [`Fault`]s or by an
//! [`Interceptor`] that sees every decoded [`Request`] first; a
//! [`HoldHandle`] keeps requests waiting until the test releases them;
//! a [`Response`] answers a request with what the test wrote.

use bytes::BytesMut;
use kafka_proto::frame::{decode_request_frame, encode_response_frame};
use kafka_proto::{ApiKey, EncodeError, ErrorCode, Message};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, oneshot};

/// What happens to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// Answer with this error code in every error field; the request
    /// changes nothing. (Not for Produce with acks=0, which has no answer.)
    Error(ErrorCode),
    /// Hold the request this long, then serve it. Later requests on the
    /// same connection wait behind it, as on a broker.
    Delay(Duration),
    /// Serve the request and lose its answer: the connection then stays
    /// silent until the client closes it (the client's request times out
    /// with the outcome unknown, though the request was applied).
    DropResponse,
    /// Serve the request, then close the connection before answering.
    DisconnectAfter,
    /// Close the connection without serving the request.
    DisconnectBefore,
    /// Keep the request unserved until the test releases it through the
    /// handle (kfake's `SleepControl`), then serve it (or apply the fault
    /// it was released with, [`HoldHandle::release_oldest_with`]). Later requests on
    /// the same connection wait behind it, as on a broker, but they are
    /// read (and listed in [`MockCluster::requests`](crate::MockCluster::requests))
    /// as they arrive; a held request whose connection closes is dropped
    /// unserved.
    Hold(HoldHandle),
    /// Answer with the response the test wrote, encoded at the request's
    /// version (kfake's `ControlKey` returning a response); the request
    /// changes nothing. For answers the broker's rules would not give
    /// (see [`Response`]).
    Respond(Response),
}

/// A response a test wrote, for [`FaultAction::Respond`]: the mock answers
/// the request with it instead of serving it, encoded at the request's
/// version and correlation id. A response for another API than the
/// request's, or that cannot be encoded at the request's version, closes
/// the connection (a malformed answer, as the client would see it).
///
/// Clones share the message; two responses are equal when one is a clone
/// of the other.
#[derive(Clone)]
pub struct Response {
    api: ApiKey,
    /// The message, written at (version, correlation id).
    encode: Arc<dyn Fn(i16, i32) -> Result<BytesMut, EncodeError> + Send + Sync>,
    /// The message as `Debug` prints it.
    shown: Arc<str>,
}

impl Response {
    /// The response `message`, for requests of its API.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_mock::{FaultAction, MockCluster, MockConfig, Response};
    /// use kafka_proto::ApiKey;
    /// use kafka_proto::messages::{
    ///     DescribeTransactionsResponse, DescribeTransactionsResponseTransactionState,
    /// };
    /// use std::sync::Arc;
    /// let cluster = MockCluster::start(MockConfig::default()).await?;
    /// // Whoever asks about "payments" hears that its transaction is still
    /// // open at epoch 5, whatever the coordinator holds.
    /// let ongoing = Response::new(DescribeTransactionsResponse {
    ///     transaction_states: vec![DescribeTransactionsResponseTransactionState {
    ///         transactional_id: "payments".into(),
    ///         transaction_state: "Ongoing".into(),
    ///         producer_id: 1000,
    ///         producer_epoch: 5,
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// });
    /// assert_eq!(ongoing.api(), ApiKey::DescribeTransactions);
    /// cluster.set_interceptor(Arc::new(move |r| {
    ///     (r.api == ApiKey::DescribeTransactions).then(|| FaultAction::Respond(ongoing.clone()))
    /// }));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new<M: Message + Send + Sync + 'static>(message: M) -> Self {
        let shown = Arc::from(format!("{message:?}"));
        Self {
            api: M::API_KEY,
            encode: Arc::new(move |version, correlation_id| {
                encode_response_frame(&message, version, correlation_id)
            }),
            shown,
        }
    }

    /// The API it answers.
    pub fn api(&self) -> ApiKey {
        self.api
    }

    /// The frame answering `request`; `None` when the request is of
    /// another API or the message cannot be written at its version.
    pub(crate) fn frame_for(&self, request: &RequestInfo) -> Option<BytesMut> {
        if request.api != self.api {
            return None;
        }
        (self.encode)(request.version, request.correlation_id).ok()
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PartialEq for Response {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.encode, &other.encode)
    }
}

impl Eq for Response {}

/// A queued fault: the next `times` requests that match `api` and `broker`
/// (either `None` matches all) get `action`.
///
/// ```
/// use kafka_mock::{Fault, FaultAction};
/// use kafka_proto::{ApiKey, ErrorCode};
/// let f = Fault::new(FaultAction::Error(ErrorCode::ConcurrentTransactions))
///     .api(ApiKey::EndTxn)
///     .times(2);
/// assert_eq!((f.api, f.times), (Some(ApiKey::EndTxn), 2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Only requests of this API (`None`: any).
    pub api: Option<ApiKey>,
    /// Only requests arriving at this broker (`None`: any).
    pub broker: Option<i32>,
    /// What happens.
    pub action: FaultAction,
    /// For how many matching requests.
    pub times: u32,
}

impl Fault {
    /// A fault for the next matching request of any API at any broker.
    ///
    /// ```
    /// use kafka_mock::{Fault, FaultAction};
    /// let f = Fault::new(FaultAction::DisconnectBefore);
    /// assert_eq!((f.api, f.broker, f.times), (None, None, 1));
    /// ```
    pub fn new(action: FaultAction) -> Self {
        Self {
            api: None,
            broker: None,
            action,
            times: 1,
        }
    }

    /// Only requests of `api`.
    pub fn api(mut self, api: ApiKey) -> Self {
        self.api = Some(api);
        self
    }

    /// Only requests arriving at broker `id`.
    pub fn broker(mut self, id: i32) -> Self {
        self.broker = Some(id);
        self
    }

    /// For the next `n` matching requests.
    pub fn times(mut self, n: u32) -> Self {
        self.times = n;
        self
    }

    pub(crate) fn matches(&self, r: &RequestInfo) -> bool {
        self.times > 0
            && self.api.is_none_or(|a| a == r.api)
            && self.broker.is_none_or(|b| b == r.broker)
    }
}

/// A request as the mock received it (before serving it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestInfo {
    /// The broker it arrived at.
    pub broker: i32,
    /// The connection it arrived on: the cluster numbers connections from
    /// 0 as its brokers accept them, so requests with the same number
    /// shared one connection.
    pub connection: u64,
    /// Its API.
    pub api: ApiKey,
    /// Its version.
    pub version: i16,
    /// Its correlation id.
    pub correlation_id: i32,
}

/// A request as the mock received it, for an [`Interceptor`]: where it
/// arrived and its header ([`info`](Self::info), also reachable as
/// fields through `Deref`, so `r.api` reads the API), and its body,
/// decoded on demand ([`decode`](Self::decode)).
///
/// ```
/// use kafka_mock::{FaultAction, Interceptor};
/// use kafka_proto::ErrorCode;
/// use kafka_proto::messages::ProduceRequest;
/// use std::sync::Arc;
/// // Refuse every Produce request that writes to partition 3 of "orders".
/// let f: Interceptor = Arc::new(|r| {
///     let produce = r.decode::<ProduceRequest>()?;
///     let to_orders_3 = produce.topic_data.iter().any(|t| {
///         t.name == "orders" && t.partition_data.iter().any(|p| p.index == 3)
///     });
///     to_orders_3.then_some(FaultAction::Error(ErrorCode::NotEnoughReplicas))
/// });
/// # let _ = f;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    info: RequestInfo,
    /// The frame without its length: header, then body.
    frame: &'a [u8],
}

impl<'a> Request<'a> {
    pub(crate) fn new(info: RequestInfo, frame: &'a [u8]) -> Self {
        Self { info, frame }
    }

    /// Where the request arrived, its API, version and correlation id.
    pub fn info(&self) -> &RequestInfo {
        &self.info
    }

    /// The request's body as message `M`; `None` when the request is for
    /// another API (or does not parse, in which case the mock closes the
    /// connection when it serves it, as Kafka does).
    pub fn decode<M: Message>(&self) -> Option<M> {
        decode_request_frame::<M>(self.frame)
            .ok()
            .map(|(_, message)| message)
    }
}

impl std::ops::Deref for Request<'_> {
    type Target = RequestInfo;

    fn deref(&self) -> &RequestInfo {
        &self.info
    }
}

/// A function that sees every request first and may choose a fault for it
/// (kfake's control functions, librdkafka's mock error stacks). It runs on
/// the connection's task, before the request is served: it should decide
/// quickly and must not block (to make a request wait, return
/// [`FaultAction::Hold`]).
pub type Interceptor = Arc<dyn Fn(&Request<'_>) -> Option<FaultAction> + Send + Sync>;

/// Holds requests until the test releases them, one by one or all at once
/// (kfake's `SleepControl`). Clones share the same queue of held requests.
///
/// A test steers a request with it in four steps:
/// 1. give a clone to [`FaultAction::Hold`] (from an [`Interceptor`] or a
///    queued [`Fault`]);
/// 2. wait until the requests the test is about are held
///    ([`wait_held`](Self::wait_held), [`wait_for`](Self::wait_for));
/// 3. change the cluster or look at the client meanwhile;
/// 4. release them: served as usual ([`release_oldest`](Self::release_oldest),
///    [`release_all`](Self::release_all)) or answered as a fault says
///    ([`release_oldest_with`](Self::release_oldest_with)).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig};
/// use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
/// use kafka_proto::ApiKey;
/// use std::sync::Arc;
/// let cluster = MockCluster::start(MockConfig { brokers: 2, ..MockConfig::default() }).await?;
/// cluster.create_topic("orders", 1)?;
/// let gate = HoldHandle::new();
/// let hold = gate.clone();
/// cluster.set_interceptor(Arc::new(move |r| {
///     (r.api == ApiKey::Produce).then(|| FaultAction::Hold(hold.clone()))
/// }));
/// let producer = Producer::connect(ProducerConfig::builder(&cluster.bootstrap()).build()?).await?;
/// let sent = producer.send(ProducerRecord::new("orders").value("v"));
///
/// // The write is at broker 1, unanswered: move the partition meanwhile.
/// let held = gate.wait_held(1).await;
/// assert_eq!(held[0].broker, 1);
/// cluster.move_leader("orders", 0, 2)?;
/// cluster.clear_faults(); // hold nothing more
/// gate.release_oldest();
///
/// // Broker 1 answers NOT_LEADER_OR_FOLLOWER; the producer retries at 2.
/// assert_eq!(sent.await?.offset, Some(0));
/// assert!(cluster.requests().iter().any(|r| r.api == ApiKey::Produce && r.broker == 2));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct HoldHandle {
    inner: Arc<HoldInner>,
}

#[derive(Default)]
struct HoldInner {
    /// The requests held now, oldest first, each with the switch that lets
    /// its connection serve it.
    held: Mutex<VecDeque<(RequestInfo, oneshot::Sender<Option<FaultAction>>)>>,
    /// Woken whenever a request is held.
    arrived: Notify,
}

impl HoldHandle {
    /// A handle that holds nothing yet.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kafka_mock::{Fault, FaultAction, HoldHandle, MockCluster, MockConfig};
    /// use kafka_proto::{ApiKey, ErrorCode};
    /// let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    /// let gate = HoldHandle::new();
    /// // The next EndTxn waits for the test; the test then answers it as if
    /// // the coordinator were still writing the previous markers.
    /// cluster.inject(Fault::new(FaultAction::Hold(gate.clone())).api(ApiKey::EndTxn));
    /// let answer_when_held = async {
    ///     gate.wait_held(1).await;
    ///     gate.release_oldest_with(FaultAction::Error(ErrorCode::ConcurrentTransactions));
    /// };
    /// # drop(answer_when_held);
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The requests held now, oldest first (a request whose connection
    /// closed is no longer held).
    pub fn held(&self) -> Vec<RequestInfo> {
        let mut held = self.inner.held.lock().unwrap();
        held.retain(|(_, release)| !release.is_closed());
        held.iter().map(|(info, _)| *info).collect()
    }

    /// Waits until at least `n` requests are held at once and returns
    /// them, oldest first.
    pub async fn wait_held(&self, n: usize) -> Vec<RequestInfo> {
        self.wait_for(|held| held.len() >= n).await
    }

    /// Waits until `done` holds for the requests held now (oldest first)
    /// and returns them; `done` is asked again each time a request is held.
    pub async fn wait_for(&self, mut done: impl FnMut(&[RequestInfo]) -> bool) -> Vec<RequestInfo> {
        loop {
            let arrived = self.inner.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            let held = self.held();
            if done(&held) {
                return held;
            }
            arrived.await;
        }
    }

    /// Lets the oldest held request be served; `None` when none is held.
    /// (Dropping every clone of the handle releases what it holds.)
    pub fn release_oldest(&self) -> Option<RequestInfo> {
        self.release(None)
    }

    /// Releases the oldest held request with a fault instead: the broker
    /// answers it only now, and as `action` says (an error code, a lost
    /// answer, a closed connection, or another hold).
    pub fn release_oldest_with(&self, action: FaultAction) -> Option<RequestInfo> {
        self.release(Some(action))
    }

    fn release(&self, action: Option<FaultAction>) -> Option<RequestInfo> {
        let mut held = self.inner.held.lock().unwrap();
        while let Some((info, release)) = held.pop_front() {
            if release.send(action.clone()).is_ok() {
                return Some(info);
            }
        }
        None
    }

    /// Lets every held request be served; returns how many there were.
    pub fn release_all(&self) -> usize {
        let mut released = 0;
        while self.release_oldest().is_some() {
            released += 1;
        }
        released
    }

    /// Holds `info`'s request: the receiver resolves when the test
    /// releases it.
    pub(crate) fn hold(&self, info: RequestInfo) -> oneshot::Receiver<Option<FaultAction>> {
        let (release, released) = oneshot::channel();
        self.inner.held.lock().unwrap().push_back((info, release));
        self.inner.arrived.notify_waiters();
        released
    }
}

impl std::fmt::Debug for HoldHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HoldHandle")
            .field("held", &self.held())
            .finish()
    }
}

/// Two handles are equal when they share one queue (one is a clone of the
/// other).
impl PartialEq for HoldHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for HoldHandle {}
