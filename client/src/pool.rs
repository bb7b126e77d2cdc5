//! Lazily (re)connecting links to brokers, keyed by node id, with
//! exponential reconnect backoff and jitter.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_client::ClusterError> {
//! use kafka_client::{ConnectionConfig, ConnectionPool, ExponentialBackoff};
//! let pool = ConnectionPool::new(ConnectionConfig::default(), ExponentialBackoff::reconnect_default());
//! pool.set_address(1, "127.0.0.1:9092");
//! let conn = pool.connection(1).await?; // connects (or reuses) node 1
//! # Ok(()) }
//! ```

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
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::ConnError> {
/// use kafka_client::{BrokerConnection, ConnectionConfig, ExponentialBackoff};
/// use std::sync::Arc;
/// let link = BrokerConnection::new(1, "127.0.0.1:9092", Arc::new(ConnectionConfig::default()), ExponentialBackoff::reconnect_default());
/// let conn = link.get().await?; // dials once; later calls reuse it
/// assert!(Arc::ptr_eq(&conn, &link.get().await?));
/// # Ok(()) }
/// ```
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
    ///
    /// ```
    /// use kafka_client::{BrokerConnection, ConnectionConfig, ExponentialBackoff};
    /// use std::sync::Arc;
    /// let b = BrokerConnection::new(1, "127.0.0.1:9092", Arc::new(ConnectionConfig::default()), ExponentialBackoff::default());
    /// assert_eq!(b.addr(), "127.0.0.1:9092");
    /// assert!(b.current().is_none());
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
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ConnectionConfig, ExponentialBackoff};
    /// # let link = BrokerConnection::new(3, "broker-3:9092", Default::default(), ExponentialBackoff::default());
    /// assert_eq!(link.node_id(), 3);
    /// ```
    pub fn node_id(&self) -> i32 {
        self.node_id
    }

    /// The address dialled.
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ConnectionConfig, ExponentialBackoff};
    /// let link = BrokerConnection::new(1, "broker-1:9092", Default::default(), ExponentialBackoff::default());
    /// assert_eq!(link.addr(), "broker-1:9092");
    /// ```
    pub fn addr(&self) -> String {
        self.addr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Changes the address (the broker moved); an open connection to the
    /// old address is closed.
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ExponentialBackoff};
    /// let link = BrokerConnection::new(1, "broker-1:9092", Default::default(), ExponentialBackoff::default());
    /// link.set_addr("10.0.0.7:9092"); // e.g. from a Metadata response
    /// assert_eq!(link.addr(), "10.0.0.7:9092");
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ExponentialBackoff};
    /// let link = BrokerConnection::new(1, "broker-1:9092", Default::default(), ExponentialBackoff::default());
    /// assert!(link.current().is_none()); // nothing dialled yet
    /// ```
    pub fn current(&self) -> Option<Arc<Connection>> {
        let st = self.state.try_lock().ok()?;
        st.conn.as_ref().filter(|c| usable(c)).cloned()
    }

    /// Closes the current connection and every lane's, if any; the next
    /// [`Self::get`] (or [`Self::get_lane`]) reconnects.
    ///
    /// ```no_run
    /// # async fn demo(link: &kafka_client::BrokerConnection) -> Result<(), kafka_client::ConnError> {
    /// let old = link.get().await?;
    /// link.disconnect();
    /// assert!(old.is_closed());
    /// # Ok(()) }
    /// ```
    pub fn disconnect(&self) {
        close_link(&self.state);
        let lanes: Vec<_> = self.lanes.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for lane in &lanes {
            close_link(lane);
        }
    }

    /// Consecutive failed connection attempts.
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ExponentialBackoff};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let link = BrokerConnection::new(1, "broker-1:9092", Default::default(), ExponentialBackoff::default());
    /// assert_eq!(link.failures().await, 0);
    /// # });
    /// ```
    pub async fn failures(&self) -> u32 {
        self.state.lock().await.failures
    }

    /// The live connection, or a new one once the backoff after earlier
    /// failures has passed. A failed attempt extends the backoff
    /// (`reconnect.backoff.ms` 50 doubling up to `reconnect.backoff.max.ms` 1000, ±20%).
    ///
    /// ```no_run
    /// # async fn demo(link: &kafka_client::BrokerConnection) {
    /// match link.get().await {
    ///     Ok(conn) => println!("connected to {}", conn.addr()),
    ///     Err(e) => eprintln!("{e}; retry in {:?}", link.backoff_remaining().await),
    /// }
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # async fn demo(link: &kafka_client::BrokerConnection) -> Result<(), kafka_client::ConnError> {
    /// let shared = link.get().await?;
    /// let second = link.get_lane(1).await?;
    /// assert!(std::sync::Arc::ptr_eq(&shared, &link.get_lane(0).await?));
    /// assert!(!std::sync::Arc::ptr_eq(&shared, &second));
    /// # Ok(()) }
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::{BrokerConnection, ExponentialBackoff};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let link = BrokerConnection::new(1, "broker-1:9092", Default::default(), ExponentialBackoff::default());
    /// assert!(link.backoff_remaining().await.is_zero()); // no failure yet
    /// # });
    /// ```
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
/// ```
/// use kafka_client::{ConnectionPool, ExponentialBackoff};
/// let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
/// pool.set_address(1, "broker-1:9092");
/// pool.set_address(2, "broker-2:9092");
/// assert_eq!(pool.node_ids(), [1, 2]);
/// ```
#[derive(Debug)]
pub struct ConnectionPool {
    config: Arc<ConnectionConfig>,
    backoff: ExponentialBackoff,
    brokers: Mutex<HashMap<i32, Arc<BrokerConnection>>>,
}

impl ConnectionPool {
    /// An empty pool.
    ///
    /// ```
    /// use kafka_client::{ConnectionConfig, ConnectionPool, ExponentialBackoff};
    /// let pool = ConnectionPool::new(ConnectionConfig::default(), ExponentialBackoff::reconnect_default());
    /// assert!(pool.node_ids().is_empty());
    /// ```
    pub fn new(config: ConnectionConfig, backoff: ExponentialBackoff) -> Self {
        Self {
            config: Arc::new(config),
            backoff,
            brokers: Mutex::new(HashMap::new()),
        }
    }

    /// The connection settings.
    ///
    /// ```
    /// use kafka_client::{ConnectionConfig, ConnectionPool, ExponentialBackoff};
    /// let config = ConnectionConfig { client_id: Some("orders-app".into()), ..Default::default() };
    /// let pool = ConnectionPool::new(config, ExponentialBackoff::reconnect_default());
    /// assert_eq!(pool.config().client_id.as_deref(), Some("orders-app"));
    /// ```
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Arc<BrokerConnection>>> {
        self.brokers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds broker `node_id` at `addr`, or updates its address.
    ///
    /// ```
    /// # use kafka_client::{ConnectionPool, ExponentialBackoff};
    /// # let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// let link = pool.set_address(1, "broker-1:9092");
    /// pool.set_address(1, "10.0.0.7:9092"); // same link, new address
    /// assert_eq!(link.addr(), "10.0.0.7:9092");
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::{ConnectionPool, ExponentialBackoff};
    /// # let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// pool.set_address(1, "broker-1:9092");
    /// pool.set_address(2, "broker-2:9092");
    /// pool.retain(&[2]); // broker 1 left the cluster
    /// assert_eq!(pool.node_ids(), [2]);
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::{ConnectionPool, ExponentialBackoff};
    /// # let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// pool.set_address(1, "broker-1:9092");
    /// assert_eq!(pool.broker(1).unwrap().addr(), "broker-1:9092");
    /// assert!(pool.broker(2).is_none());
    /// ```
    pub fn broker(&self, node_id: i32) -> Option<Arc<BrokerConnection>> {
        self.lock().get(&node_id).cloned()
    }

    /// Known node ids.
    ///
    /// ```
    /// # use kafka_client::{ConnectionPool, ExponentialBackoff};
    /// # let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// pool.set_address(2, "broker-2:9092");
    /// pool.set_address(1, "broker-1:9092");
    /// assert_eq!(pool.node_ids(), [1, 2]); // sorted
    /// ```
    pub fn node_ids(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.lock().keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// A live (or new) connection to `node_id`.
    ///
    /// ```
    /// use kafka_client::{ClusterError, ConnectionPool, ExponentialBackoff};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// // A node id the pool has no address for fails without dialling.
    /// assert!(matches!(pool.connection(7).await, Err(ClusterError::UnknownBroker(7))));
    /// # });
    /// ```
    pub async fn connection(&self, node_id: i32) -> Result<Arc<Connection>, ClusterError> {
        let b = self
            .broker(node_id)
            .ok_or(ClusterError::UnknownBroker(node_id))?;
        Ok(b.get().await?)
    }

    /// A live (or new) connection of `lane` to broker `node_id` (see
    /// [`BrokerConnection::get_lane`]; lane 0 is [`Self::connection`]'s).
    ///
    /// ```
    /// use kafka_client::{ClusterError, ConnectionPool, ExponentialBackoff};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// assert!(matches!(pool.connection_lane(7, 1).await, Err(ClusterError::UnknownBroker(7))));
    /// # });
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::{ConnectionPool, ExponentialBackoff};
    /// # let pool = ConnectionPool::new(Default::default(), ExponentialBackoff::reconnect_default());
    /// pool.set_address(1, "broker-1:9092");
    /// assert!(pool.any_live().is_none()); // known, but never dialled
    /// ```
    pub fn any_live(&self) -> Option<(i32, Arc<Connection>)> {
        let brokers: Vec<_> = self.lock().values().cloned().collect();
        brokers
            .into_iter()
            .find_map(|b| b.current().map(|c| (b.node_id(), c)))
    }

    /// Closes every connection.
    ///
    /// ```no_run
    /// # async fn demo(pool: &kafka_client::ConnectionPool) -> Result<(), kafka_client::ClusterError> {
    /// let conn = pool.connection(1).await?;
    /// pool.close_all();
    /// assert!(conn.is_closed());
    /// # Ok(()) }
    /// ```
    pub fn close_all(&self) {
        let brokers: Vec<_> = self.lock().values().cloned().collect();
        for b in brokers {
            b.disconnect();
        }
    }
}
