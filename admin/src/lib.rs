//! # kafka-admin
//!
//! Administration of a Kafka cluster for kafka-eos (franz-go's `kadm`, Java's
//! `Admin`): functions on a [`Cluster`]. Most applications use it through
//! the `kafka-eos` crate's `admin` module.
//!
//! Create, delete and grow topics ([`create_topics()`],
//! [`ensure_topic()`], [`delete_topics()`], [`create_partitions()`]),
//! list, describe and delete consumer groups ([`list_groups()`],
//! [`describe_group()`], [`delete_groups()`]), read a group's committed
//! offsets ([`committed_offsets()`]),
//! list and describe transactions and producers, abort a lingering
//! transaction, read broker and topic configs (CreateTopics, DeleteTopics,
//! CreatePartitions,
//! ListTransactions, DescribeTransactions, DescribeProducers,
//! InitProducerId, DescribeConfigs).
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

mod configs;
mod groups;
mod topic_changes;
mod topics;
mod transactions;

pub use configs::{broker_config, topic_config, topic_config_overrides};
pub use groups::{
    GroupDescription, GroupListing, GroupMember, GroupState, committed_offsets, delete_groups,
    describe_group, list_groups,
};
pub use kafka_client::requests::describe_configs::{broker_config_on, describe_configs_on};
pub use kafka_client::requests::describe_transactions::TransactionSnapshot;
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
