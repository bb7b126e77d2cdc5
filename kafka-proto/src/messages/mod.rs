//! One module per Kafka message. Each request and response type implements
//! [`crate::Message`] with its API key and version range; field names are the
//! snake_case of the Kafka schema names, and nested types are prefixed with their
//! message's name so that everything can be re-exported here.
//!
//! The consumer protocol's subscription and assignment
//! ([`ConsumerProtocolSubscription`], [`ConsumerProtocolAssignment`]) are
//! data embedded in JoinGroup and SyncGroup, not messages: they have no API
//! key and are encoded with an INT16 version prefix (`encode_prefixed` /
//! `decode_prefixed`).
//!
//! Each message is described once, as a table (see the crate's `describe`
//! module): adding a message means writing its table and a proptest strategy.
//!
//! Every message is listed once in [`for_each_message!`](crate::for_each_message);
//! the round trip of every version of each
//! ([`crate::testing::round_trip_all_versions`]) runs from that list, and each
//! module's own tests decode at least one byte fixture written by hand.
//!
//! A request's body is encoded, and its response's body decoded, at the
//! version negotiated with ApiVersions; a field the version cannot carry is
//! an [`EncodeError`](crate::EncodeError), never silently dropped (unless the
//! schema marks it ignorable):
//!
//! ```
//! use kafka_proto::{Message, messages::{MetadataRequest, MetadataResponse}};
//! let version = 12; // negotiated
//! let body = MetadataRequest::all_topics().encode_to_vec(version)?;
//! // ... behind a request header, on the wire; the response's body comes back:
//! # let response_body = MetadataResponse::default().encode_to_vec(version)?;
//! let response = MetadataResponse::decode(&response_body, version)?;
//! for topic in &response.topics {
//!     println!("{:?}: {} partitions", topic.name, topic.partitions.len());
//! }
//! # let _ = body;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Invokes `$callback! { (ApiKey, Request, Response), ... }` with every message
/// kafka-proto implements: the one list of them, from which the round-trip
/// tests, the fuzz targets and their seed corpus are generated. Adding a
/// message is one line here.
///
/// ```
/// macro_rules! count_messages {
///     ($(($key:ident, $request:ident, $response:ident)),* $(,)?) => {
///         [$(kafka_proto::ApiKey::$key),*].len()
///     };
/// }
/// let apis = kafka_proto::for_each_message!(count_messages);
/// assert!(apis >= 39);
/// ```
#[macro_export]
macro_rules! for_each_message {
    ($callback:ident) => {
        $callback! {
            (ApiVersions, ApiVersionsRequest, ApiVersionsResponse),
            (Metadata, MetadataRequest, MetadataResponse),
            (FindCoordinator, FindCoordinatorRequest, FindCoordinatorResponse),
            (InitProducerId, InitProducerIdRequest, InitProducerIdResponse),
            (AddPartitionsToTxn, AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
            (AddOffsetsToTxn, AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
            (EndTxn, EndTxnRequest, EndTxnResponse),
            (Produce, ProduceRequest, ProduceResponse),
            (Fetch, FetchRequest, FetchResponse),
            (ListOffsets, ListOffsetsRequest, ListOffsetsResponse),
            (OffsetForLeaderEpoch, OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
            (TxnOffsetCommit, TxnOffsetCommitRequest, TxnOffsetCommitResponse),
            (OffsetFetch, OffsetFetchRequest, OffsetFetchResponse),
            (DescribeConfigs, DescribeConfigsRequest, DescribeConfigsResponse),
            (CreateTopics, CreateTopicsRequest, CreateTopicsResponse),
            (ListTransactions, ListTransactionsRequest, ListTransactionsResponse),
            (DescribeTransactions, DescribeTransactionsRequest, DescribeTransactionsResponse),
            (DescribeProducers, DescribeProducersRequest, DescribeProducersResponse),
            (SaslHandshake, SaslHandshakeRequest, SaslHandshakeResponse),
            (SaslAuthenticate, SaslAuthenticateRequest, SaslAuthenticateResponse),
            (DeleteTopics, DeleteTopicsRequest, DeleteTopicsResponse),
            (CreatePartitions, CreatePartitionsRequest, CreatePartitionsResponse),
            (JoinGroup, JoinGroupRequest, JoinGroupResponse),
            (SyncGroup, SyncGroupRequest, SyncGroupResponse),
            (Heartbeat, HeartbeatRequest, HeartbeatResponse),
            (LeaveGroup, LeaveGroupRequest, LeaveGroupResponse),
            (OffsetCommit, OffsetCommitRequest, OffsetCommitResponse),
            (ConsumerGroupHeartbeat, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
            (ConsumerGroupDescribe, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
            (DescribeGroups, DescribeGroupsRequest, DescribeGroupsResponse),
            (ListGroups, ListGroupsRequest, ListGroupsResponse),
            (DeleteGroups, DeleteGroupsRequest, DeleteGroupsResponse),
            (OffsetDelete, OffsetDeleteRequest, OffsetDeleteResponse),
            (DeleteRecords, DeleteRecordsRequest, DeleteRecordsResponse),
            (IncrementalAlterConfigs, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
            (DescribeCluster, DescribeClusterRequest, DescribeClusterResponse),
            (CreateAcls, CreateAclsRequest, CreateAclsResponse),
            (DescribeAcls, DescribeAclsRequest, DescribeAclsResponse),
            (DeleteAcls, DeleteAclsRequest, DeleteAclsResponse),
        }
    };
}

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod consumer_protocol_assignment;
pub mod consumer_protocol_subscription;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_producers;
pub mod describe_transactions;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod list_transactions;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod sync_group;
pub mod txn_offset_commit;

pub use add_offsets_to_txn::*;
pub use add_partitions_to_txn::*;
pub use api_versions::*;
pub use consumer_group_describe::*;
pub use consumer_group_heartbeat::*;
pub use consumer_protocol_assignment::*;
pub use consumer_protocol_subscription::*;
pub use create_acls::*;
pub use create_partitions::*;
pub use create_topics::*;
pub use delete_acls::*;
pub use delete_groups::*;
pub use delete_records::*;
pub use delete_topics::*;
pub use describe_acls::*;
pub use describe_cluster::*;
pub use describe_configs::*;
pub use describe_groups::*;
pub use describe_producers::*;
pub use describe_transactions::*;
pub use end_txn::*;
pub use fetch::*;
pub use find_coordinator::*;
pub use heartbeat::*;
pub use incremental_alter_configs::*;
pub use init_producer_id::*;
pub use join_group::*;
pub use leave_group::*;
pub use list_groups::*;
pub use list_offsets::*;
pub use list_transactions::*;
pub use metadata::*;
pub use offset_commit::*;
pub use offset_delete::*;
pub use offset_fetch::*;
pub use offset_for_leader_epoch::*;
pub use produce::*;
pub use sasl_authenticate::*;
pub use sasl_handshake::*;
pub use sync_group::*;
pub use txn_offset_commit::*;

#[cfg(test)]
mod round_trip;
