//! Lazily (re)connecting links to brokers, keyed by node id, with
//! exponential reconnect backoff and jitter.

use crate::backoff::ExponentialBackoff;
use crate::connection::{Connection, ConnectionConfig};
use crate::error::{ClusterError, ConnError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct LinkState {
    conn: Option<Arc<Connection>>,
    failures: u32,
    next_attempt: Option<Instant>,
}

/// The link to one broker: at most one live [`Connection`], re-established
/// on demand after a disconnect, with backoff between failed attempts.
#[derive(Debug)]
pub struct BrokerConnection {
    node_id: i32,
    addr: Mutex<String>,
    config: Arc<ConnectionConfig>,
    backoff: ExponentialBackoff,
    state: tokio::sync::Mutex<LinkState>,
    /// The dedicated connections of lanes 1.. (see [`Self::get_lane`]),
    /// made on first use.
    lanes: Mutex<Vec<Arc<tokio::sync::Mutex<LinkState>>>>,
}

impl BrokerConnection {
    /// A link to `node_id` at `addr` ("host:port"); nothing is dialled yet.
    /// [`Self::get`] dials on first use and returns the same connection until
    /// it closes.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::ConnError> {
    /// use kafka_client::{BrokerConnection, ConnectionConfig, ExponentialBackoff};
    /// use std::sync::Arc;
    /// let config = Arc::new(ConnectionConfig::default());
    /// let link = BrokerConnection::new(1, "127.0.0.1:9092", config, ExponentialBackoff::default());
    /// let conn = link.get().await?; // dials
    /// assert!(Arc::ptr_eq(&conn, &link.get().await?)); // reuses
    /// # Ok(()) }
    /// ```
    pub fn new(
        node_id: i32,
        addr: &str,
        config: Arc<ConnectionConfig>,
        backoff: ExponentialBackoff,
    ) -> Self {
        Self {
            node_id,
            addr: Mutex::new(addr.to_string()),
            config,
            backoff,
            state: tokio::sync::Mutex::new(LinkState::default()),
            lanes: Mutex::new(Vec::new()),
        }
    }

    /// The broker's node id.
    pub fn node_id(&self) -> i32 {
        self.node_id
    }

    /// The address dialled.
    pub fn addr(&self) -> String {
        self.addr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Changes the address (the broker moved); an open connection to the
    /// old address is closed.
    pub fn set_addr(&self, addr: &str) {
        let changed = {
            let mut a = self.addr.lock().unwrap_or_else(|p| p.into_inner());
            if *a == addr {
                false
            } else {
                *a = addr.to_string();
                true
            }
        };
        if changed {
            self.disconnect();
        }
    }

    /// The live connection, if there is one (never dials).
    pub fn current(&self) -> Option<Arc<Connection>> {
        let st = self.state.try_lock().ok()?;
        st.conn.as_ref().filter(|c| usable(c)).cloned()
    }

    /// Closes the current connection and every lane's, if any; the next
    /// [`Self::get`] (or [`Self::get_lane`]) reconnects.
    pub fn disconnect(&self) {
        close_link(&self.state);
        let lanes: Vec<_> = self.lanes.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for lane in &lanes {
            close_link(lane);
        }
    }

    /// Consecutive failed connection attempts.
    pub async fn failures(&self) -> u32 {
        self.state.lock().await.failures
    }

    /// The live connection, or a new one once the backoff after earlier
    /// failures has passed. A failed attempt extends the backoff
    /// (`reconnect.backoff.ms` 50 doubling up to `reconnect.backoff.max.ms` 1000, ±20%).
    pub async fn get(&self) -> Result<Arc<Connection>, ConnError> {
        self.dial(&mut *self.state.lock().await).await
    }

    /// The live connection of `lane`, or a new one, as [`Self::get`] does
    /// for lane 0 (which is [`Self::get`]'s connection). Lanes 1.. are
    /// connections of their own to the same broker, each with its own
    /// backoff, closed with the others by [`Self::disconnect`]. A producer
    /// spreads its partitions over lanes: Kafka reads a connection's next
    /// request only once it has answered the one before, so requests on
    /// separate connections are served side by side.
    pub async fn get_lane(&self, lane: usize) -> Result<Arc<Connection>, ConnError> {
        if lane == 0 {
            return self.get().await;
        }
        let link = {
            let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
            while lanes.len() < lane {
                lanes.push(Arc::default());
            }
            lanes[lane - 1].clone()
        };
        self.dial(&mut *link.lock().await).await
    }

    /// The live connection of `st`, or a new one after its backoff.
    async fn dial(&self, st: &mut LinkState) -> Result<Arc<Connection>, ConnError> {
        if let Some(c) = &st.conn {
            if usable(c) {
                return Ok(c.clone());
            }
            // A connection that died: back off before dialling again (Java
            // counts a disconnect as a failed attempt).
            st.conn = None;
            let delay = self.backoff.backoff(st.failures);
            st.failures = st.failures.saturating_add(1);
            st.next_attempt = Some(Instant::now() + delay);
        }
        if let Some(at) = st.next_attempt {
            tokio::time::sleep_until(at.into()).await;
        }
        let addr = self.addr();
        let timeout = self.config.setup_timeout(st.failures);
        match Connection::connect_within(&addr, &self.config, timeout).await {
            Ok(c) => {
                let c = Arc::new(c);
                st.conn = Some(c.clone());
                st.failures = 0;
                st.next_attempt = None;
                Ok(c)
            }
            Err(e) => {
                let delay = self.backoff.backoff(st.failures);
                st.failures = st.failures.saturating_add(1);
                st.next_attempt = Some(Instant::now() + delay);
                tracing::debug!(node = self.node_id, %addr, error = %e, ?delay, "connect failed; backing off");
                Err(e)
            }
        }
    }

    /// Time until the next connection attempt is allowed (zero if now).
    pub async fn backoff_remaining(&self) -> Duration {
        let st = self.state.lock().await;
        st.next_attempt
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    }
}

/// Closes a link's connection, if any. A link held by a dialler is left to
/// it: the connection it makes is to the address stored before this call.
fn close_link(link: &tokio::sync::Mutex<LinkState>) {
    if let Ok(mut st) = link.try_lock()
        && let Some(c) = st.conn.take()
    {
        c.close();
    }
}

fn usable(c: &Connection) -> bool {
    !c.is_closed() && c.session_expiry().is_none_or(|t| t > Instant::now())
}

/// Broker links by node id.
///
/// The pool learns addresses from metadata and dials on first use:
/// 1. [`ConnectionPool::set_address`] for each broker of a Metadata response
///    (an address that changed closes the old connection), then
///    [`ConnectionPool::retain`] the brokers still listed;
/// 2. [`ConnectionPool::connection`] returns the live connection to a node,
///    dialling it first if there is none; after a failure it waits out the
///    reconnect backoff instead of dialling again.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::ClusterError> {
/// use kafka_client::{ConnectionConfig, ConnectionPool, ExponentialBackoff};
/// let pool = ConnectionPool::new(ConnectionConfig::default(), ExponentialBackoff::reconnect_default());
/// pool.set_address(1, "127.0.0.1:9092");
/// let conn = pool.connection(1).await?; // connects (or reuses) node 1
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ConnectionPool {
    config: Arc<ConnectionConfig>,
    backoff: ExponentialBackoff,
    brokers: Mutex<HashMap<i32, Arc<BrokerConnection>>>,
}

impl ConnectionPool {
    /// An empty pool; every connection it makes uses `config`, and
    /// `backoff` between failed attempts to the same broker.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::ClusterError> {
    /// use kafka_client::{ConnectionConfig, ConnectionPool, ExponentialBackoff};
    /// let config = ConnectionConfig { client_id: Some("orders-app".into()), ..Default::default() };
    /// let pool = ConnectionPool::new(config, ExponentialBackoff::reconnect_default());
    /// pool.set_address(1, "127.0.0.1:9092"); // from a Metadata response
    /// let conn = pool.connection(1).await?; // dials node 1 (or reuses its connection)
    /// # Ok(()) }
    /// ```
    pub fn new(config: ConnectionConfig, backoff: ExponentialBackoff) -> Self {
        Self {
            config: Arc::new(config),
            backoff,
            brokers: Mutex::new(HashMap::new()),
        }
    }

    /// The connection settings.
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Arc<BrokerConnection>>> {
        self.brokers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds broker `node_id` at `addr`, or updates its address.
    pub fn set_address(&self, node_id: i32, addr: &str) -> Arc<BrokerConnection> {
        let mut map = self.lock();
        if let Some(b) = map.get(&node_id) {
            b.set_addr(addr);
            return b.clone();
        }
        let b = Arc::new(BrokerConnection::new(
            node_id,
            addr,
            self.config.clone(),
            self.backoff,
        ));
        map.insert(node_id, b.clone());
        b
    }

    /// Drops (and closes) brokers whose id is not in `node_ids`.
    pub fn retain(&self, node_ids: &[i32]) {
        let removed: Vec<_> = {
            let mut map = self.lock();
            let gone: Vec<i32> = map
                .keys()
                .filter(|id| !node_ids.contains(id))
                .copied()
                .collect();
            gone.iter().filter_map(|id| map.remove(id)).collect()
        };
        for b in removed {
            b.disconnect();
        }
    }

    /// The link to `node_id`, if known.
    pub fn broker(&self, node_id: i32) -> Option<Arc<BrokerConnection>> {
        self.lock().get(&node_id).cloned()
    }

    /// Known node ids.
    pub fn node_ids(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.lock().keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// A live (or new) connection to `node_id`.
    pub async fn connection(&self, node_id: i32) -> Result<Arc<Connection>, ClusterError> {
        let b = self
            .broker(node_id)
            .ok_or(ClusterError::UnknownBroker(node_id))?;
        Ok(b.get().await?)
    }

    /// A live (or new) connection of `lane` to broker `node_id` (see
    /// [`BrokerConnection::get_lane`]; lane 0 is [`Self::connection`]'s).
    pub async fn connection_lane(
        &self,
        node_id: i32,
        lane: usize,
    ) -> Result<Arc<Connection>, ClusterError> {
        let b = self
            .broker(node_id)
            .ok_or(ClusterError::UnknownBroker(node_id))?;
        Ok(b.get_lane(lane).await?)
    }

    /// Any live connection, without dialling.
    pub fn any_live(&self) -> Option<(i32, Arc<Connection>)> {
        let brokers: Vec<_> = self.lock().values().cloned().collect();
        brokers
            .into_iter()
            .find_map(|b| b.current().map(|c| (b.node_id(), c)))
    }

    /// Closes every connection.
    pub fn close_all(&self) {
        let brokers: Vec<_> = self.lock().values().cloned().collect();
        for b in brokers {
            b.disconnect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(node_id: i32, addr: &str) -> BrokerConnection {
        BrokerConnection::new(
            node_id,
            addr,
            Default::default(),
            ExponentialBackoff::default(),
        )
    }

    fn pool() -> ConnectionPool {
        ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default())
    }

    #[test]
    fn new_link_has_its_node_and_address_and_dials_nothing() {
        let l = link(3, "broker-3:9092");
        assert_eq!((l.node_id(), l.addr().as_str()), (3, "broker-3:9092"));
        assert!(l.current().is_none());
    }

    #[test]
    fn set_addr_replaces_the_address() {
        let l = link(1, "broker-1:9092");
        l.set_addr("10.0.0.7:9092");
        assert_eq!(l.addr(), "10.0.0.7:9092");
    }

    #[tokio::test]
    async fn fresh_link_has_no_failures_and_no_backoff() {
        let l = link(1, "broker-1:9092");
        assert_eq!(l.failures().await, 0);
        assert!(l.backoff_remaining().await.is_zero());
    }

    #[test]
    fn pool_keeps_its_connection_config() {
        let config = ConnectionConfig {
            client_id: Some("orders-app".into()),
            ..Default::default()
        };
        let p = ConnectionPool::new(config, ExponentialBackoff::reconnect_default());
        assert_eq!(p.config().client_id.as_deref(), Some("orders-app"));
    }

    #[test]
    fn node_ids_are_sorted() {
        let p = pool();
        assert!(p.node_ids().is_empty());
        p.set_address(2, "broker-2:9092");
        p.set_address(1, "broker-1:9092");
        assert_eq!(p.node_ids(), [1, 2]);
    }

    #[test]
    fn set_address_again_updates_the_same_link() {
        let p = pool();
        let l = p.set_address(1, "broker-1:9092");
        p.set_address(1, "10.0.0.7:9092");
        assert_eq!(l.addr(), "10.0.0.7:9092");
        assert!(Arc::ptr_eq(&l, &p.broker(1).unwrap()));
    }

    #[test]
    fn retain_drops_the_brokers_not_listed() {
        let p = pool();
        p.set_address(1, "broker-1:9092");
        p.set_address(2, "broker-2:9092");
        p.retain(&[2]);
        assert_eq!(p.node_ids(), [2]);
        assert!(p.broker(1).is_none());
    }

    #[test]
    fn known_but_never_dialled_broker_is_not_live() {
        let p = pool();
        p.set_address(1, "broker-1:9092");
        assert!(p.any_live().is_none());
    }

    #[tokio::test]
    async fn unknown_node_fails_without_dialling() {
        let p = pool();
        assert!(matches!(
            p.connection(7).await,
            Err(ClusterError::UnknownBroker(7))
        ));
        assert!(matches!(
            p.connection_lane(7, 1).await,
            Err(ClusterError::UnknownBroker(7))
        ));
    }
}
