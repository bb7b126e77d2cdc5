//! One module per API: each decodes nothing itself (the routing table
//! below decodes the request with kafka-proto's message tables), and has
//! `handle` (the broker's answer, changing the cluster state) and `error`
//! (the answer carrying one error code everywhere, for injected faults,
//! changing nothing).
//!
//! An API the mock does not implement is not advertised in ApiVersions;
//! a request for it, for a version outside the advertised range, or that
//! does not parse closes the connection, as Kafka does.

mod add_offsets_to_txn;
mod add_partitions_to_txn;
pub(crate) mod api_versions;
mod consumer_group_describe;
mod consumer_group_heartbeat;
mod create_acls;
mod create_partitions;
mod create_topics;
mod delete_acls;
mod delete_groups;
mod delete_records;
mod delete_topics;
mod describe_acls;
mod describe_cluster;
mod describe_configs;
mod describe_groups;
mod describe_producers;
mod describe_transactions;
mod end_txn;
mod fetch;
mod find_coordinator;
mod heartbeat;
mod incremental_alter_configs;
mod init_producer_id;
mod join_group;
mod leave_group;
mod list_groups;
mod list_offsets;
mod list_transactions;
mod metadata;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
mod offset_for_leader_epoch;
mod produce;
mod sync_group;
mod txn_offset_commit;

use crate::state::{ClusterState, CoordinatorKind, Ctx};
use bytes::BytesMut;
use kafka_proto::frame::{
    RequestHeaderStart, decode_request_frame, encode_response_frame, peek_request_header,
};
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode};
use std::sync::Arc;

/// A handler's answer.
#[derive(Debug)]
pub(crate) enum Reply<R> {
    /// Answer now.
    Now(R),
    /// No answer (Produce with acks=0).
    Silent,
    /// Nothing yet (a Fetch waiting for data): ask again when the log
    /// changes or at `until_ms`, then answer whatever there is.
    Park { until_ms: i64 },
}

/// What the driver does with a request.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Write this response frame.
    Respond(BytesMut),
    /// Write nothing.
    Silent,
    /// Run the request again when the log changes or at `until_ms`.
    Park { until_ms: i64 },
    /// Close the connection: the request was malformed or unsupported.
    Close(String),
}

macro_rules! routes {
    ($state:ident, $ctx:ident, $frame:ident, $inject:ident, $final_attempt:ident, $api:ident;
     $( $key:ident => $module:ident :: $Req:ident $(at $group:ident)? ),* $(,)?) => {
        match $api {
            $( ApiKey::$key => {
                let (header, req) = match decode_request_frame::<$Req>($frame) {
                    Ok(x) => x,
                    Err(e) => return Outcome::Close(format!("malformed {:?} request: {e}", ApiKey::$key)),
                };
                let version = header.request_api_version;
                let ctx = &Ctx {
                    client_id: header.client_id.as_deref().map(Arc::from).unwrap_or_else(|| $ctx.client_id.clone()),
                    ..$ctx.clone()
                };
                let refused = $inject $(
                    .or_else(|| $state.check_coordinator(ctx, CoordinatorKind::Group, &req.$group).err())
                )?;
                let reply = match refused {
                    Some(code) => Reply::Now($module::error($state, &req, version, code)),
                    None => $module::handle($state, ctx, &req, version, $final_attempt),
                };
                match reply {
                    Reply::Now(resp) => match encode_response_frame(&resp, version, header.correlation_id) {
                        Ok(frame) => Outcome::Respond(frame),
                        Err(e) => Outcome::Close(format!("the mock could not encode its {:?} response: {e}", ApiKey::$key)),
                    },
                    Reply::Silent => Outcome::Silent,
                    Reply::Park { until_ms } => Outcome::Park { until_ms },
                }
            } )*
            other => Outcome::Close(format!("unsupported API {other:?}")),
        }
    };
}

/// Serves one request frame (header and body, without the length) that
/// arrived at `ctx.broker`. `inject` answers with that error instead
/// (changing nothing); `final_attempt` is set when a parked request's wait
/// is over.
pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    frame: &[u8],
    inject: Option<ErrorCode>,
    final_attempt: bool,
) -> Outcome {
    let Ok(RequestHeaderStart {
        api_key: api,
        api_version: version,
        correlation_id,
    }) = peek_request_header(frame)
    else {
        return Outcome::Close("a request shorter than its header".into());
    };
    let Some(range) = api_versions::advertised_range(&state.config, api) else {
        return Outcome::Close(format!("unsupported API {api:?}"));
    };
    if !range.contains(version) {
        if api == ApiKey::ApiVersions {
            // KIP-511: an ApiVersions request of an unknown version gets a
            // v0 answer with UNSUPPORTED_VERSION and the supported range.
            return api_versions::unsupported_version(&state.config, correlation_id);
        }
        return Outcome::Close(format!("{api:?} v{version} is not supported"));
    }
    // `at field`: only the coordinator of the group that field names
    // serves the request; any other broker answers the handler's `error`
    // with NOT_COORDINATOR (COORDINATOR_NOT_AVAILABLE while none is alive).
    routes!(state, ctx, frame, inject, final_attempt, api;
        ApiVersions => api_versions::ApiVersionsRequest,
        Metadata => metadata::MetadataRequest,
        Produce => produce::ProduceRequest,
        Fetch => fetch::FetchRequest,
        ListOffsets => list_offsets::ListOffsetsRequest,
        FindCoordinator => find_coordinator::FindCoordinatorRequest,
        InitProducerId => init_producer_id::InitProducerIdRequest,
        AddPartitionsToTxn => add_partitions_to_txn::AddPartitionsToTxnRequest,
        AddOffsetsToTxn => add_offsets_to_txn::AddOffsetsToTxnRequest,
        EndTxn => end_txn::EndTxnRequest,
        TxnOffsetCommit => txn_offset_commit::TxnOffsetCommitRequest at group_id,
        OffsetCommit => offset_commit::OffsetCommitRequest at group_id,
        OffsetFetch => offset_fetch::OffsetFetchRequest,
        CreateTopics => create_topics::CreateTopicsRequest,
        DescribeConfigs => describe_configs::DescribeConfigsRequest,
        ListTransactions => list_transactions::ListTransactionsRequest,
        DescribeTransactions => describe_transactions::DescribeTransactionsRequest,
        DescribeProducers => describe_producers::DescribeProducersRequest,
        JoinGroup => join_group::JoinGroupRequest at group_id,
        SyncGroup => sync_group::SyncGroupRequest at group_id,
        Heartbeat => heartbeat::HeartbeatRequest at group_id,
        LeaveGroup => leave_group::LeaveGroupRequest at group_id,
        ConsumerGroupHeartbeat => consumer_group_heartbeat::ConsumerGroupHeartbeatRequest at group_id,
        ConsumerGroupDescribe => consumer_group_describe::ConsumerGroupDescribeRequest,
        DeleteTopics => delete_topics::DeleteTopicsRequest,
        CreatePartitions => create_partitions::CreatePartitionsRequest,
        ListGroups => list_groups::ListGroupsRequest,
        DescribeGroups => describe_groups::DescribeGroupsRequest,
        DeleteGroups => delete_groups::DeleteGroupsRequest,
        OffsetForLeaderEpoch => offset_for_leader_epoch::OffsetForLeaderEpochRequest,
        DeleteRecords => delete_records::DeleteRecordsRequest,
        OffsetDelete => offset_delete::OffsetDeleteRequest at group_id,
        IncrementalAlterConfigs => incremental_alter_configs::IncrementalAlterConfigsRequest,
        DescribeCluster => describe_cluster::DescribeClusterRequest,
        CreateAcls => create_acls::CreateAclsRequest,
        DescribeAcls => describe_acls::DescribeAclsRequest,
        DeleteAcls => delete_acls::DeleteAclsRequest,
    )
}

/// The fencing error of a transactional API at `version`: PRODUCER_FENCED
/// from the version that knows it (KIP-588), INVALID_PRODUCER_EPOCH before.
pub(crate) fn fenced_code(version: i16, first_with_producer_fenced: i16) -> ErrorCode {
    if version >= first_with_producer_fenced {
        ErrorCode::ProducerFenced
    } else {
        ErrorCode::InvalidProducerEpoch
    }
}
