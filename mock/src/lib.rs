//! # kafka-mock
//!
//! An in-process Kafka cluster for tests: N brokers, each a TCP listener on
//! 127.0.0.1 speaking the Kafka wire protocol (any client can connect,
//! Java's included), with the broker's semantics for what an exactly-once
//! application relies on, and faults on demand.
//!
//! What it serves (the APIs it advertises in ApiVersions, at Kafka 4.4's
//! or 3.9's versions):
//! - Metadata, CreateTopics (and automatic creation, on by default), one
//!   copy of each partition: the high watermark is the log end;
//! - Produce: record batches kept as written, CRC-checked; the idempotent
//!   producer's state per partition (the last five batches: a retried
//!   batch is answered with its first offset, a gap with
//!   OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch with INVALID_PRODUCER_EPOCH);
//! - Fetch with long polling, the last stable offset and the aborted
//!   transactions for read_committed, and KIP-227 incremental fetch
//!   sessions (per broker, lost when it stops, the least recently used
//!   evicted past 1000); ListOffsets (latest, earliest, by timestamp,
//!   largest timestamp; a record found above the last stable offset is
//!   not answered under read_committed); OffsetForLeaderEpoch over each
//!   partition's leader epoch cache (an epoch starts where its leader
//!   started writing), and Fetch answering the diverging epoch when the
//!   client's last fetched epoch ends before its offset (KIP-320);
//! - the transaction coordinator for transaction versions 1 and 2:
//!   InitProducerId (with KIP-360 epoch bumps and fencing),
//!   AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn writing
//!   commit and abort markers (after a configurable delay, answering
//!   CONCURRENT_TRANSACTIONS meanwhile), transaction timeouts;
//! - FindCoordinator; classic consumer groups (JoinGroup with KIP-394
//!   member ids, SyncGroup, Heartbeat, LeaveGroup, session and rebalance
//!   timeouts, generations, KIP-345 static members replaced without a
//!   rebalance and FENCED_INSTANCE_ID); KIP-848 consumer groups as Kafka 4.4
//!   (ConsumerGroupHeartbeat v0-1 with the `uniform` and `range` server
//!   assignors, topic names or a regex (whole names, RE2 syntax, a topic
//!   created later picked up at the next heartbeat), a partition handed over only once its owner revoked it,
//!   member epochs and FENCED_MEMBER_EPOCH, static members that leave
//!   with epoch -2 and are replaced, session and rebalance timeouts;
//!   ConsumerGroupDescribe); OffsetCommit and OffsetFetch (with KIP-447's
//!   generation and member epoch checks on TxnOffsetCommit, STALE_MEMBER_EPOCH,
//!   and UNSTABLE_OFFSET_COMMIT);
//! - admin: CreateTopics, DeleteTopics (by name, or id from v6; the
//!   topic's logs, producer state, topic id and the groups' offsets for it
//!   go with it, and an open transaction's markers skip its partitions),
//!   CreatePartitions (new partitions led as CreateTopics places them, or
//!   as assigned; INVALID_PARTITIONS for no increase), DescribeConfigs
//!   (Kafka's common topic configs with their defaults, the overrides set
//!   at creation or by IncrementalAlterConfigs, and the brokers' dynamic
//!   overrides), IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT of
//!   topic and broker configs, INVALID_CONFIG for an unknown topic config
//!   or a value of the wrong type), DeleteRecords (the log start moves:
//!   Fetch below it is OFFSET_OUT_OF_RANGE, ListOffsets earliest answers
//!   it; POLICY_VIOLATION on a compacted topic), DescribeCluster,
//!   ListTransactions (v0-1), DescribeTransactions, DescribeProducers;
//!   CreateAcls, DescribeAcls and DeleteAcls (SECURITY_DISABLED, as a
//!   broker without an authorizer, unless [`MockConfig::acl_authorizer`]:
//!   then bindings are stored and selected by Kafka's filter rules);
//!   ListGroups (at each group's coordinator, with state and type filters;
//!   a group with offsets only is an Empty classic group), DescribeGroups
//!   (the protocol and members' metadata once Stable; Dead, or
//!   GROUP_ID_NOT_FOUND from v6, for no classic group) and DeleteGroups
//!   (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, else the group and its offsets);
//!   OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC for a topic the group's
//!   members subscribe to, by name or regex).
//!
//! Faults:
//! - queued [`Fault`]s for the next N requests of an API at a broker: an
//!   error code, a delay, a lost answer, a closed connection, or a request
//!   held until the test releases it through a [`HoldHandle`], or an
//!   answer the test wrote ([`Response`]);
//! - an [`Interceptor`] that sees every decoded [`Request`] and chooses its
//!   fault (kfake's control functions);
//! - brokers stopped and restarted (their partitions and coordinators fail
//!   over), brokers made unreachable, partition leaders and coordinators
//!   moved;
//! - a seeded [`Nemesis`] that draws all of these at random moments from
//!   one seed.
//!
//! Known differences from Kafka:
//! - no replication (one copy, nothing lost when a broker stops);
//! - KIP-848 groups only on the Kafka 4.4 release (3.9 does not enable
//!   them by default), and the server assignors' exact choice of
//!   partitions differs from Kafka's (both are balanced and sticky); the
//!   first member of a new group gets member epoch 1 (Kafka 4.4: 2); a
//!   regex is resolved at each heartbeat (Kafka resolves it in the
//!   background, so a new topic reaches the member later there);
//! - an authorizer-enabled mock stores ACLs but enforces none, and takes
//!   any broker config name in IncrementalAlterConfigs as dynamic;
//! - a classic group in use is not converted to a KIP-848 one or the other
//!   way (GROUP_ID_NOT_FOUND and INCONSISTENT_GROUP_PROTOCOL instead);
//! - a classic member's session is not checked while the group completes
//!   a rebalance;
//! - no retention or compaction (only DeleteRecords deletes); no SASL or
//!   TLS;
//! - ApiVersions v5's cluster and node id checks (KIP-1242) are not made;
//! - DeleteTopics answers in the request's order (Kafka shuffles) and the
//!   topic is gone from every broker at once;
//! - CreatePartitions does not check a manual assignment's replica count
//!   (one copy is kept);
//! - DescribeGroups shows no assignments while a classic group completes a
//!   rebalance (Kafka 4.4 shows the last generation's);
//! - empty groups and committed offsets never expire (Kafka removes an
//!   empty group without offsets at its next offsets retention check).
//!
//! A test with the mock:
//! 1. [`MockCluster::start`] the brokers and create the topics;
//! 2. point the client under test at [`MockCluster::bootstrap`];
//! 3. steer the cluster: queue faults ([`MockCluster::inject`]), intercept
//!    requests ([`MockCluster::set_interceptor`]), stop brokers, move
//!    leaders and coordinators, or let a [`Nemesis`] do it at random;
//! 4. check what the cluster holds ([`MockCluster::batches`],
//!    [`MockCluster::offsets`], [`MockCluster::transaction_state`]), and
//!    print [`MockCluster::describe`] when a check fails.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use kafka_mock::{Fault, FaultAction, MockCluster, MockConfig};
//! use kafka_proto::{ApiKey, ErrorCode};
//! let cluster = MockCluster::start(MockConfig { brokers: 3, ..MockConfig::default() })
//!     .await
//!     .unwrap();
//! cluster.create_topic("orders", 6).unwrap();
//! let bootstrap = cluster.bootstrap(); // "127.0.0.1:port,127.0.0.1:port,127.0.0.1:port"
//! // The next two writes at broker 1 are refused as by a follower.
//! cluster.inject(
//!     Fault::new(FaultAction::Error(ErrorCode::NotLeaderOrFollower))
//!         .api(ApiKey::Produce)
//!         .broker(1)
//!         .times(2),
//! );
//! // ... the code under test runs against `bootstrap` here ...
//! let (high_watermark, last_stable) = cluster.offsets("orders", 0).unwrap();
//! assert!(last_stable <= high_watermark, "{}", cluster.describe());
//! # drop(bootstrap);
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod faults;
mod handlers;
mod nemesis;
mod server;
mod state;

pub use config::{KafkaRelease, MockConfig, TransactionVersion};
pub use faults::{Fault, FaultAction, HoldHandle, Interceptor, Request, RequestInfo, Response};
pub use nemesis::{
    CLIENT_APIS, Nemesis, NemesisConfig, NemesisFault, NemesisReport, NemesisTargets,
};
pub use state::CoordinatorKind;
pub use state::txn::TxnState;

use kafka_proto::record::RecordBatch;
use server::{BrokerIo, Shared};
use state::ClusterState;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, watch};

/// Why a control call failed.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// A listener could not be bound.
    #[error("binding a broker's listener: {0}")]
    Bind(#[from] std::io::Error),
    /// No broker has that id.
    #[error("no broker {0} in the cluster")]
    UnknownBroker(i32),
    /// No such topic or partition.
    #[error("no partition {1} of topic {0}")]
    UnknownPartition(String, i32),
    /// The broker refused, with this Kafka error.
    #[error("refused: {0:?}")]
    Refused(kafka_proto::ErrorCode),
}

/// A running mock cluster. Dropping it stops every broker.
#[derive(Debug)]
pub struct MockCluster {
    shared: Arc<Shared>,
    ticker: tokio::task::JoinHandle<()>,
}

impl Drop for MockCluster {
    fn drop(&mut self) {
        self.ticker.abort();
        let mut io = self.shared.io.lock().unwrap();
        for b in io.values_mut() {
            if let Some(l) = b.listener.take() {
                l.abort();
            }
            b.generation.send_modify(|g| *g += 1);
        }
    }
}

impl MockCluster {
    /// Starts the brokers (node ids 1..=`config.brokers`) on free ports of
    /// 127.0.0.1. Needs a tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kafka_mock::{MockCluster, MockConfig, TransactionVersion};
    /// let tv1 = MockCluster::start(MockConfig {
    ///     transaction_version: TransactionVersion::V1,
    ///     ..MockConfig::default()
    /// })
    /// .await
    /// .unwrap();
    /// assert!(tv1.bootstrap().starts_with("127.0.0.1:"));
    /// # }
    /// ```
    pub async fn start(config: MockConfig) -> Result<Self, MockError> {
        let count = config.brokers.max(1);
        let mut listeners = Vec::with_capacity(count);
        for _ in 0..count {
            listeners.push(server::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?);
        }
        let addrs: Vec<(i32, String, i32)> = listeners
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let a = l.local_addr().expect("a bound listener has an address");
                (i as i32 + 1, a.ip().to_string(), i32::from(a.port()))
            })
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(ClusterState::new(config, &addrs)),
            changed: Notify::new(),
            faults: Mutex::new(VecDeque::new()),
            interceptor: Mutex::new(None),
            io: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
            next_connection: AtomicU64::new(0),
        });
        for (i, listener) in listeners.into_iter().enumerate() {
            let id = i as i32 + 1;
            let addr = listener.local_addr()?;
            let (generation, _) = watch::channel(0);
            shared.io.lock().unwrap().insert(
                id,
                BrokerIo {
                    addr,
                    listener: None,
                    generation,
                    reachable: true,
                },
            );
            let task = server::spawn_listener(shared.clone(), id, listener);
            shared
                .io
                .lock()
                .unwrap()
                .get_mut(&id)
                .expect("inserted")
                .listener = Some(task);
        }
        let ticker = server::spawn_ticker(Arc::downgrade(&shared));
        Ok(Self { shared, ticker })
    }

    /// The brokers' addresses, comma-separated (`bootstrap.servers`).
    pub fn bootstrap(&self) -> String {
        let io = self.shared.io.lock().unwrap();
        let ordered: BTreeMap<_, _> = io.iter().map(|(id, b)| (*id, b.addr)).collect();
        ordered
            .values()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The node ids of the brokers, stopped ones included.
    pub fn broker_ids(&self) -> Vec<i32> {
        self.shared
            .state
            .lock()
            .unwrap()
            .brokers
            .keys()
            .copied()
            .collect()
    }

    /// Creates a topic (as CreateTopics would).
    pub fn create_topic(&self, name: &str, partitions: i32) -> Result<(), MockError> {
        self.shared
            .state
            .lock()
            .unwrap()
            .create_topic(name, partitions)
            .map(|_| ())
            .map_err(MockError::Refused)
    }

    /// The leader of a partition.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        self.shared
            .state
            .lock()
            .unwrap()
            .partition(topic, partition)
            .map(|p| p.leader)
    }

    /// The high watermark and last stable offset of a partition.
    pub fn offsets(&self, topic: &str, partition: i32) -> Option<(i64, i64)> {
        self.shared
            .state
            .lock()
            .unwrap()
            .partition(topic, partition)
            .map(|p| (p.high_watermark(), p.last_stable_offset()))
    }

    /// The record batches of a partition's log as it holds them, oldest
    /// first: the producers' batches with their offsets, and the
    /// transaction markers (`is_control`); `None` for no such partition.
    pub fn batches(&self, topic: &str, partition: i32) -> Option<Vec<RecordBatch>> {
        let st = self.shared.state.lock().unwrap();
        let log = st.partition(topic, partition)?;
        Some(
            log.batches()
                .iter()
                .map(|b| RecordBatch::decode(&b.bytes).expect("the mock keeps CRC-checked batches"))
                .collect(),
        )
    }

    /// Refuses topic `name` from now on: Metadata answers it with `error`
    /// (and creates nothing), Produce to it fails with `error`; other
    /// topics in the same requests are served. For what Kafka answers a
    /// principal without the topic's ACL (TOPIC_AUTHORIZATION_FAILED), or
    /// a name it rejects (INVALID_TOPIC_EXCEPTION).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{MockCluster, MockConfig};
    /// use kafka_proto::ErrorCode;
    /// let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    /// cluster.refuse_topic("secret", ErrorCode::TopicAuthorizationFailed);
    /// # }
    /// ```
    pub fn refuse_topic(&self, name: &str, error: kafka_proto::ErrorCode) {
        let mut st = self.shared.state.lock().unwrap();
        st.refused_topics.insert(name.to_string(), error);
    }

    /// The state of a transactional id, if the coordinator knows it.
    pub fn transaction_state(&self, transactional_id: &str) -> Option<TxnState> {
        self.shared
            .state
            .lock()
            .unwrap()
            .txns
            .get(transactional_id)
            .map(|m| m.state)
    }

    /// The cluster's whole state as text — every partition's batches
    /// (offsets, producer id, epoch, sequence, data or marker), open and
    /// aborted transactions, producer states, the transaction coordinator's
    /// and the groups' state — for a failing test to print.
    pub fn describe(&self) -> String {
        self.shared.state.lock().unwrap().describe()
    }

    /// Queues a fault.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{Fault, FaultAction, MockCluster, MockConfig};
    /// use kafka_proto::{ApiKey, ErrorCode};
    /// let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    /// cluster.inject(Fault::new(FaultAction::Error(ErrorCode::NotLeaderOrFollower)).api(ApiKey::Produce));
    /// assert_eq!(cluster.pending_faults(), 1);
    /// # }
    /// ```
    pub fn inject(&self, fault: Fault) {
        self.shared.faults.lock().unwrap().push_back(fault);
    }

    /// How many queued faults have requests left to hit.
    pub fn pending_faults(&self) -> usize {
        self.shared.faults.lock().unwrap().len()
    }

    /// How many queued faults aimed at `api` have requests left to hit
    /// (faults for any API not counted).
    pub fn pending_faults_for(&self, api: kafka_proto::ApiKey) -> usize {
        self.shared
            .faults
            .lock()
            .unwrap()
            .iter()
            .filter(|f| f.api == Some(api) && f.times > 0)
            .count()
    }

    /// Drops every queued fault and the interceptor.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().unwrap().clear();
        *self.shared.interceptor.lock().unwrap() = None;
    }

    /// Sets the function that sees every request first and may choose a
    /// fault for it (ahead of the queued faults). It sees the request's
    /// header and can decode its body, so a test can script per batch,
    /// per transactional id or per member what the broker does.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{FaultAction, MockCluster, MockConfig};
    /// use kafka_proto::messages::EndTxnRequest;
    /// use kafka_proto::{ApiKey, ErrorCode};
    /// use std::sync::Arc;
    /// let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    /// // Every EndTxn at broker 1 is refused as if the coordinator moved.
    /// cluster.set_interceptor(Arc::new(|r| {
    ///     (r.api == ApiKey::EndTxn && r.broker == 1)
    ///         .then_some(FaultAction::Error(ErrorCode::NotCoordinator))
    /// }));
    /// // Every commit (not abort) of "payments" is answered late.
    /// cluster.set_interceptor(Arc::new(|r| {
    ///     let end = r.decode::<EndTxnRequest>()?;
    ///     (end.transactional_id == "payments" && end.committed)
    ///         .then_some(FaultAction::Delay(std::time::Duration::from_millis(50)))
    /// }));
    /// # }
    /// ```
    pub fn set_interceptor(&self, f: Interceptor) {
        *self.shared.interceptor.lock().unwrap() = Some(f);
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestInfo> {
        self.shared.log.lock().unwrap().clone()
    }

    fn with_io<T>(&self, id: i32, f: impl FnOnce(&mut BrokerIo) -> T) -> Result<T, MockError> {
        let mut io = self.shared.io.lock().unwrap();
        io.get_mut(&id).map(f).ok_or(MockError::UnknownBroker(id))
    }

    /// Stops broker `id`: its listener closes, its connections drop, and
    /// its partitions' leadership and its coordinators move to the next
    /// live broker (nothing written is lost).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{MockCluster, MockConfig};
    /// let cluster = MockCluster::start(MockConfig { brokers: 2, ..MockConfig::default() }).await.unwrap();
    /// cluster.create_topic("t", 1).unwrap();
    /// cluster.stop_broker(1).await.unwrap();
    /// assert_eq!(cluster.leader("t", 0), Some(2));
    /// # }
    /// ```
    pub async fn stop_broker(&self, id: i32) -> Result<(), MockError> {
        let listener = self.with_io(id, |b| {
            b.reachable = false;
            b.generation.send_modify(|g| *g += 1);
            b.listener.take()
        })?;
        if let Some(l) = listener {
            l.abort();
            // The listening socket is closed once the task is dropped.
            let _ = l.await;
        }
        self.shared.state.lock().unwrap().set_alive(id, false);
        self.shared.changed.notify_waiters();
        Ok(())
    }

    /// Restarts a stopped broker on its old port. The partition leaders
    /// that moved away when it stopped stay where they went until the test
    /// moves them back.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{MockCluster, MockConfig};
    /// let cluster = MockCluster::start(MockConfig { brokers: 2, ..MockConfig::default() }).await.unwrap();
    /// cluster.create_topic("t", 1).unwrap();
    /// cluster.stop_broker(1).await.unwrap(); // "t"-0 fails over to broker 2
    /// // ... the client under test rides out the outage here ...
    /// cluster.start_broker(1).unwrap();
    /// cluster.move_leader("t", 0, 1).unwrap();
    /// assert_eq!(cluster.leader("t", 0), Some(1));
    /// # }
    /// ```
    pub fn start_broker(&self, id: i32) -> Result<(), MockError> {
        let addr = self.with_io(id, |b| b.addr)?;
        let listener = server::bind(addr)?;
        let task = server::spawn_listener(self.shared.clone(), id, listener);
        self.with_io(id, |b| {
            if let Some(old) = b.listener.replace(task) {
                old.abort();
            }
            b.reachable = true;
        })?;
        self.shared.state.lock().unwrap().set_alive(id, true);
        Ok(())
    }

    /// Makes broker `id` unreachable (`false`: its connections drop and new
    /// ones close at once) or reachable again, without a failover: the
    /// cluster still lists it, as when a network partition separates the
    /// client from a broker.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{MockCluster, MockConfig};
    /// let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    /// cluster.set_reachable(1, false).unwrap();
    /// cluster.set_reachable(1, true).unwrap();
    /// # }
    /// ```
    pub fn set_reachable(&self, id: i32, reachable: bool) -> Result<(), MockError> {
        self.with_io(id, |b| {
            b.reachable = reachable;
            if !reachable {
                b.generation.send_modify(|g| *g += 1);
            }
        })
    }

    /// Closes every open connection of broker `id` (clients reconnect).
    pub fn cut_connections(&self, id: i32) -> Result<(), MockError> {
        self.with_io(id, |b| b.generation.send_modify(|g| *g += 1))
    }

    /// Moves the leadership of a partition to broker `to` (its leader
    /// epoch is bumped; requests at the old leader get
    /// NOT_LEADER_OR_FOLLOWER).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{MockCluster, MockConfig};
    /// let cluster = MockCluster::start(MockConfig { brokers: 2, ..MockConfig::default() }).await.unwrap();
    /// cluster.create_topic("t", 1).unwrap();
    /// cluster.move_leader("t", 0, 2).unwrap();
    /// assert_eq!(cluster.leader("t", 0), Some(2));
    /// # }
    /// ```
    pub fn move_leader(&self, topic: &str, partition: i32, to: i32) -> Result<(), MockError> {
        let mut st = self.shared.state.lock().unwrap();
        if !st.brokers.contains_key(&to) {
            return Err(MockError::UnknownBroker(to));
        }
        if !st.move_leader(topic, partition, to) {
            return Err(MockError::UnknownPartition(topic.to_string(), partition));
        }
        Ok(())
    }

    /// Moves the coordinator of a group or transactional id to broker `to`
    /// (requests at the old one get NOT_COORDINATOR).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use kafka_mock::{CoordinatorKind, MockCluster, MockConfig};
    /// let cluster = MockCluster::start(MockConfig { brokers: 3, ..MockConfig::default() }).await.unwrap();
    /// cluster.move_coordinator(CoordinatorKind::Transaction, "txn-1", 3).unwrap();
    /// assert_eq!(cluster.coordinator(CoordinatorKind::Transaction, "txn-1"), Some(3));
    /// # }
    /// ```
    pub fn move_coordinator(
        &self,
        kind: CoordinatorKind,
        key: &str,
        to: i32,
    ) -> Result<(), MockError> {
        let mut st = self.shared.state.lock().unwrap();
        if !st.brokers.contains_key(&to) {
            return Err(MockError::UnknownBroker(to));
        }
        st.move_coordinator(kind, key, to);
        Ok(())
    }

    /// The broker coordinating a group or transactional id.
    pub fn coordinator(&self, kind: CoordinatorKind, key: &str) -> Option<i32> {
        self.shared.state.lock().unwrap().coordinator(kind, key)
    }
}
