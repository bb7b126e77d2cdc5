//! # kafka-admin
//!
//! Administration of a Kafka cluster for kafka-eos (franz-go's `kadm`, Java's
//! `Admin`): functions on a [`Cluster`](kafka_client::Cluster), one module per
//! area. Most applications use it through the `kafka-eos` crate's `admin`
//! module.
//!
//! - Topics: create, ensure, delete and grow them ([`create_topics()`],
//!   [`ensure_topic()`], [`delete_topics()`], [`create_partitions()`];
//!   CreateTopics, DeleteTopics, CreatePartitions).
//! - Consumer groups: list, describe and delete them, read their committed
//!   offsets ([`list_groups()`], [`describe_group()`], [`delete_groups()`],
//!   [`committed_offsets()`]; ListGroups, DescribeGroups,
//!   ConsumerGroupDescribe, DeleteGroups, OffsetFetch).
//! - Transactions and producers: list and describe them, abort a lingering
//!   transaction ([`list_transactions()`], [`describe_transactions()`],
//!   [`describe_producers()`], [`abort_lingering_transaction()`];
//!   ListTransactions, DescribeTransactions, DescribeProducers,
//!   InitProducerId).
//! - Configs: read a broker's or a topic's ([`broker_config()`],
//!   [`topic_config()`], [`topic_config_overrides()`]; DescribeConfigs),
//!   change them entry by entry ([`alter_configs()`];
//!   IncrementalAlterConfigs).
//! - Group offsets: set, delete and reset them like
//!   `kafka-consumer-groups.sh` ([`alter_group_offsets()`],
//!   [`delete_group_offsets()`], [`plan_offset_reset()`],
//!   [`execute_offset_reset()`]; OffsetCommit, OffsetDelete).
//! - Partition offsets and records: look offsets up, delete records below
//!   them ([`list_offsets()`], [`delete_records()`]; ListOffsets,
//!   DeleteRecords).
//! - The cluster and its ACLs ([`describe_cluster()`], [`create_acls()`],
//!   [`describe_acls()`], [`delete_acls()`]; DescribeCluster, CreateAcls,
//!   DescribeAcls, DeleteAcls).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_admin::{self as admin, TransactionFilters};
//! use kafka_client::{Cluster, ClusterConfig};
//! let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
//! let open = admin::list_transactions(&cluster, &TransactionFilters::states(&["Ongoing"])).await?;
//! for t in &open {
//!     let aborted = admin::abort_lingering_transaction(&cluster, &t.transactional_id, std::time::Duration::from_secs(30)).await?;
//!     println!("aborted {aborted:?}");
//! }
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The public interface is the `pub use` list below; each module is one area.
mod acls;
mod cluster;
mod config_changes;
mod configs;
mod group_offsets;
mod groups;
mod partition_offsets;
mod topic_changes;
mod topics;
mod transactions;

pub use acls::{
    AclBinding, AclFilter, AclOperation, AclPermission, PatternType, ResourceType, create_acls,
    delete_acls, describe_acls,
};
pub use cluster::{ClusterBroker, ClusterDescription, describe_cluster};
pub use config_changes::{ConfigOp, ConfigResource, alter_configs};
pub use configs::{broker_config, topic_config, topic_config_overrides};
pub use group_offsets::{
    OffsetsError, PlannedOffset, ResetPlan, ResetScope, ResetSpec, alter_group_offsets,
    delete_group_offsets, execute_offset_reset, parse_datetime, parse_iso_duration,
    plan_offset_reset,
};
pub use groups::{
    GroupDescription, GroupListing, GroupMember, GroupState, committed_offsets, delete_groups,
    describe_group, list_groups,
};
pub use kafka_client::requests::describe_configs::{broker_config_on, describe_configs_on};
pub use kafka_client::requests::describe_transactions::TransactionSnapshot;
pub use kafka_client::requests::list_offsets::OffsetSpec;
pub use partition_offsets::{ListedOffset, delete_records, list_offsets};
pub use topic_changes::{TopicChangeError, TopicChangeResult, create_partitions, delete_topics};
pub use topics::{
    AdminError, CreateTopicError, CreateTopicResult, CreateTopicsOptions, EnsuredTopic, NewTopic,
    TopicDetails, TopicOutcome, create_topics, ensure_topic,
};
pub use transactions::{
    AbortedTransaction, ProducerState, TransactionDescription, TransactionFilters,
    TransactionListing, abort_lingering_transaction, describe_producers, describe_transactions,
    list_transactions,
};

/// The broker's answer `error` (with its `message`) to a request of `api`
/// at `version`, as the admin functions report it.
fn broker_error(
    api: kafka_proto::ApiKey,
    version: i16,
    error: kafka_proto::ErrorCode,
    message: Option<String>,
) -> kafka_client::RequestError {
    kafka_client::RequestError::Broker {
        api,
        version,
        error,
        message,
    }
}
