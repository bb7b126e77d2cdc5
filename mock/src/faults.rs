//! Faults: what the mock does to a request instead of (or besides)
//! serving it, chosen per request by queued [`Fault`]s or by an
//! interceptor function that sees every request first.

use kafka_proto::{ApiKey, ErrorCode};
use std::sync::Arc;
use std::time::Duration;

/// What happens to one request.
///
/// ```
/// use kafka_mock::FaultAction;
/// use kafka_proto::ErrorCode;
/// let refuse = FaultAction::Error(ErrorCode::NotLeaderOrFollower);
/// assert_ne!(refuse, FaultAction::DropResponse);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

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
    ///
    /// ```
    /// use kafka_mock::{Fault, FaultAction};
    /// use kafka_proto::ApiKey;
    /// assert_eq!(Fault::new(FaultAction::DropResponse).api(ApiKey::Produce).api, Some(ApiKey::Produce));
    /// ```
    pub fn api(mut self, api: ApiKey) -> Self {
        self.api = Some(api);
        self
    }

    /// Only requests arriving at broker `id`.
    ///
    /// ```
    /// use kafka_mock::{Fault, FaultAction};
    /// assert_eq!(Fault::new(FaultAction::DropResponse).broker(2).broker, Some(2));
    /// ```
    pub fn broker(mut self, id: i32) -> Self {
        self.broker = Some(id);
        self
    }

    /// For the next `n` matching requests.
    ///
    /// ```
    /// use kafka_mock::{Fault, FaultAction};
    /// assert_eq!(Fault::new(FaultAction::DropResponse).times(3).times, 3);
    /// ```
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
///
/// ```
/// use kafka_mock::RequestInfo;
/// use kafka_proto::ApiKey;
/// let r = RequestInfo { broker: 1, api: ApiKey::Produce, version: 11, correlation_id: 7 };
/// assert_eq!(r.api, ApiKey::Produce);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestInfo {
    /// The broker it arrived at.
    pub broker: i32,
    /// Its API.
    pub api: ApiKey,
    /// Its version.
    pub version: i16,
    /// Its correlation id.
    pub correlation_id: i32,
}

/// A function that sees every request first and may choose a fault for it
/// (kfake's control functions, librdkafka's mock error stacks).
pub type Interceptor = Arc<dyn Fn(&RequestInfo) -> Option<FaultAction> + Send + Sync>;
