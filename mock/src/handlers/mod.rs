//! One module per API: each decodes nothing itself (the routing table
//! below decodes the request with kafka-proto's message tables), and
//! implements [`Handle`] for its request type: `handle` (the broker's
//! answer, changing the cluster state) and `error` (the answer carrying
//! one error code everywhere, for injected faults, changing nothing).
//! A request answered item by item (each group, topic or resource it
//! names) implements it through [`answer_each!`], one answered partition
//! by partition through [`answer_each_partition!`].
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
use kafka_proto::primitives::Uuid;
use kafka_proto::{ApiKey, ErrorCode, Message};
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

/// What every handler is told besides the request: who asks, at which
/// version, and whether this is the last try.
#[derive(Debug)]
pub(crate) struct Call {
    /// Who asks: the connection, with the client id this request's header names.
    pub ctx: Ctx,
    /// The request's API version, within the advertised range.
    pub version: i16,
    /// Set when a parked request's wait is over: answer what there is.
    pub final_attempt: bool,
}

/// A request the mock serves.
pub(crate) trait Handle: Message {
    /// The answer's message type.
    type Response: Message;

    /// The broker's answer, changing the cluster state.
    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response>;

    /// The answer carrying `code` everywhere (for injected faults and
    /// refusals), changing nothing.
    fn error(&self, state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response;
}

/// Serves `frame` as an `R`. With `group`, only the coordinator of the
/// group it names serves the request; any other broker answers `error`
/// with NOT_COORDINATOR (COORDINATOR_NOT_AVAILABLE while none is alive).
fn serve<R: Handle>(
    state: &mut ClusterState,
    ctx: &Ctx,
    frame: &[u8],
    inject: Option<ErrorCode>,
    final_attempt: bool,
    group: Option<fn(&R) -> &str>,
) -> Outcome {
    let (header, req) = match decode_request_frame::<R>(frame) {
        Ok(x) => x,
        Err(e) => return Outcome::Close(format!("malformed {:?} request: {e}", R::API_KEY)),
    };
    let call = Call {
        ctx: Ctx {
            client_id: header
                .client_id
                .as_deref()
                .map(Arc::from)
                .unwrap_or_else(|| ctx.client_id.clone()),
            ..ctx.clone()
        },
        version: header.request_api_version,
        final_attempt,
    };
    let refused = inject.or_else(|| {
        let id = group?(&req);
        state
            .check_coordinator(&call.ctx, CoordinatorKind::Group, id)
            .err()
    });
    let reply = match refused {
        Some(code) => Reply::Now(req.error(state, &call, code)),
        None => req.handle(state, &call),
    };
    let resp = match reply {
        Reply::Now(resp) => resp,
        Reply::Silent => return Outcome::Silent,
        Reply::Park { until_ms } => return Outcome::Park { until_ms },
    };
    match encode_response_frame(&resp, call.version, header.correlation_id) {
        Ok(frame) => Outcome::Respond(frame),
        Err(e) => Outcome::Close(format!(
            "the mock could not encode its {:?} response: {e}",
            R::API_KEY
        )),
    }
}

macro_rules! routes {
    (@group) => { None };
    (@group $field:ident) => { Some(|req| &req.$field) };
    ($state:ident, $ctx:ident, $frame:ident, $inject:ident, $final_attempt:ident, $api:ident;
     $( $key:ident => $Req:ident $(at $field:ident)? ),* $(,)?) => {
        match $api {
            $( ApiKey::$key => serve::<$Req>(
                $state, $ctx, $frame, $inject, $final_attempt, routes!(@group $($field)?),
            ), )*
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
    // `at field`: the group that field names is the one whose coordinator
    // alone serves the request (see `serve`).
    routes!(state, ctx, frame, inject, final_attempt, api;
        ApiVersions => ApiVersionsRequest,
        Metadata => MetadataRequest,
        Produce => ProduceRequest,
        Fetch => FetchRequest,
        ListOffsets => ListOffsetsRequest,
        FindCoordinator => FindCoordinatorRequest,
        InitProducerId => InitProducerIdRequest,
        AddPartitionsToTxn => AddPartitionsToTxnRequest,
        AddOffsetsToTxn => AddOffsetsToTxnRequest,
        EndTxn => EndTxnRequest,
        TxnOffsetCommit => TxnOffsetCommitRequest at group_id,
        OffsetCommit => OffsetCommitRequest at group_id,
        OffsetFetch => OffsetFetchRequest,
        CreateTopics => CreateTopicsRequest,
        DescribeConfigs => DescribeConfigsRequest,
        ListTransactions => ListTransactionsRequest,
        DescribeTransactions => DescribeTransactionsRequest,
        DescribeProducers => DescribeProducersRequest,
        JoinGroup => JoinGroupRequest at group_id,
        SyncGroup => SyncGroupRequest at group_id,
        Heartbeat => HeartbeatRequest at group_id,
        LeaveGroup => LeaveGroupRequest at group_id,
        ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest at group_id,
        ConsumerGroupDescribe => ConsumerGroupDescribeRequest,
        DeleteTopics => DeleteTopicsRequest,
        CreatePartitions => CreatePartitionsRequest,
        ListGroups => ListGroupsRequest,
        DescribeGroups => DescribeGroupsRequest,
        DeleteGroups => DeleteGroupsRequest,
        OffsetForLeaderEpoch => OffsetForLeaderEpochRequest,
        DeleteRecords => DeleteRecordsRequest,
        OffsetDelete => OffsetDeleteRequest at group_id,
        IncrementalAlterConfigs => IncrementalAlterConfigsRequest,
        DescribeCluster => DescribeClusterRequest,
        CreateAcls => CreateAclsRequest,
        DescribeAcls => DescribeAclsRequest,
        DeleteAcls => DeleteAclsRequest,
    )
}

/// Implements [`Handle`] for `$Req`, answered with `$Resp`: `handle`
/// answers at once with `$handle` (given the request, the state and the
/// call, by the names listed), and `error` with `$error` (given the
/// request and the code).
macro_rules! handle_with {
    (
        $Req:ident => $Resp:ident,
        handle: |$req:ident, $state:ident, $call:ident| $handle:expr,
        error: |$error_req:ident, $code:ident| $error:expr $(,)?
    ) => {
        impl $crate::handlers::Handle for $Req {
            type Response = $Resp;

            fn handle(
                &self,
                $state: &mut $crate::state::ClusterState,
                $call: &$crate::handlers::Call,
            ) -> $crate::handlers::Reply<$Resp> {
                let $req = self;
                $crate::handlers::Reply::Now($handle)
            }

            fn error(
                &self,
                _state: &$crate::state::ClusterState,
                _call: &$crate::handlers::Call,
                $code: kafka_proto::ErrorCode,
            ) -> $Resp {
                let $error_req = self;
                $error
            }
        }
    };
}
pub(crate) use handle_with;

/// Implements [`Handle`] for a request answered item by item, in order
/// (each group, topic or resource it names, `$Req.$items`), its answers
/// being the response's `$Resp.$answers`: `handle` answers each `item`
/// with `answer` (given the request, the state and the call), and `error`
/// answers each with `failed(item, code)`. With `at_coordinator`, each
/// item is a group or transactional id answered only at its own
/// coordinator, and elsewhere `failed` with NOT_COORDINATOR
/// (COORDINATOR_NOT_AVAILABLE while none is alive).
macro_rules! answer_each {
    (
        $Req:ident . $items:ident => $Resp:ident . $answers:ident,
        $(at_coordinator: $kind:ident,)?
        answer: |$req:ident, $state:ident, $call:ident, $item:ident| $answer:expr,
        failed: $failed:path $(,)?
    ) => {
        $crate::handlers::handle_with! {
            $Req => $Resp,
            handle: |$req, $state, $call| $Resp {
                $answers: $req
                    .$items
                    .iter()
                    .map(|$item| {
                        $(
                            let kind = $crate::state::CoordinatorKind::$kind;
                            if let Err(code) = $state.check_coordinator(&$call.ctx, kind, $item) {
                                return $failed($item, code);
                            }
                        )?
                        $answer
                    })
                    .collect(),
                ..Default::default()
            },
            error: |req, code| $Resp {
                $answers: req.$items.iter().map(|item| $failed(item, code)).collect(),
                ..Default::default()
            },
        }
    };
}
pub(crate) use answer_each;

/// Implements [`Handle`] for a request answered partition by partition:
/// its `topics` each name a topic in `$name` and its partitions (of type
/// `$ReqPartition`) in `$parts`, and the response's `topics` (of type
/// `$RespTopic`) name the same topics in the same order, each with its
/// answered `partitions` (of type `$RespPartition`). `handle` answers each
/// partition `p` of `topic` with `answer` (given the request, the state
/// and the call), and `error` answers each with `failed(p, code)`.
macro_rules! answer_each_partition {
    (
        $Req:ident.topics[$name:ident].$parts:ident: $ReqPartition:ty
            => $Resp:ident.topics[$RespTopic:ident].partitions: $RespPartition:ty,
        answer: |$req:ident, $state:ident, $call:ident, $topic:ident, $p:ident| $answer:expr,
        failed: $failed:path $(,)?
    ) => {
        /// The response with `answer` each partition asked for, by topic.
        fn per_partition(
            req: &$Req,
            mut answer: impl FnMut(&str, &$ReqPartition) -> $RespPartition,
        ) -> $Resp {
            let topics = req.topics.iter().map(|t| $RespTopic {
                $name: t.$name.clone(),
                partitions: t.$parts.iter().map(|p| answer(&t.$name, p)).collect(),
                ..Default::default()
            });
            $Resp {
                topics: topics.collect(),
                ..Default::default()
            }
        }

        $crate::handlers::handle_with! {
            $Req => $Resp,
            handle: |$req, $state, $call| per_partition($req, |$topic, $p| $answer),
            error: |req, code| per_partition(req, |_, p| $failed(p, code)),
        }
    };
}
pub(crate) use answer_each_partition;

/// Defines, for an offset commit request (OffsetCommit, TxnOffsetCommit)
/// whose topics are named by id from version `$by_id_from`:
/// `commit_member(req)`, who the request says commits;
/// `commit(state, validator, req, txn, version, topic, partition)`, which
/// stores one requested partition's offset (in producer `txn`'s open
/// transaction when given) and gives its error code, and
/// `response(req, version, code_of)`, the response with `code_of` each
/// requested partition.
macro_rules! offset_commit_answers {
    (
        $Req:ident { $ReqTopic:ident { $ReqPartition:ident } }
            => $Resp:ident { $RespTopic:ident { $RespPartition:ident } },
        topic ids from version $by_id_from:literal $(,)?
    ) => {
        /// Who `req` says commits.
        fn commit_member(req: &$Req) -> $crate::state::CommitMember<'_> {
            $crate::state::CommitMember {
                group: &req.group_id,
                member_id: &req.member_id,
                instance_id: req.group_instance_id.as_deref(),
                generation: req.generation_id_or_member_epoch,
            }
        }

        /// Stores partition `p` of topic `t`'s offset (in producer `txn`'s
        /// open transaction when given) as `validator` allows; its error code.
        fn commit(
            state: &mut $crate::state::ClusterState,
            validator: &$crate::state::CommitValidator,
            req: &$Req,
            txn: Option<i64>,
            version: i16,
            t: &$ReqTopic,
            p: &$ReqPartition,
        ) -> kafka_proto::ErrorCode {
            let name = state.request_topic(version >= $by_id_from, &t.name, &t.topic_id);
            let offset = $crate::state::groups::CommittedOffset {
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: p.committed_metadata.clone(),
            };
            state.commit_offset(
                validator,
                &req.group_id,
                txn,
                name.as_deref(),
                p.partition_index,
                offset,
            )
        }

        /// The response with `code_of` each requested partition.
        fn response(
            req: &$Req,
            version: i16,
            mut code_of: impl FnMut(&$ReqTopic, &$ReqPartition) -> kafka_proto::ErrorCode,
        ) -> $Resp {
            let topics = req.topics.iter().map(|t| {
                let (name, topic_id) =
                    $crate::handlers::response_topic(version >= $by_id_from, &t.name, &t.topic_id);
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| $RespPartition {
                        partition_index: p.partition_index,
                        error_code: code_of(t, p).code(),
                        ..Default::default()
                    })
                    .collect();
                $RespTopic {
                    name,
                    topic_id,
                    partitions,
                    ..Default::default()
                }
            });
            $Resp {
                topics: topics.collect(),
                ..Default::default()
            }
        }
    };
}
pub(crate) use offset_commit_answers;

/// How a response names a request's topic: by id (and an empty name) from
/// the version that names topics by id (`by_id`), else by name (and a zero
/// id) — the answer's side of [`ClusterState::request_topic`].
pub(crate) fn response_topic(by_id: bool, name: &str, id: &Uuid) -> (String, Uuid) {
    if by_id {
        (String::new(), *id)
    } else {
        (name.to_string(), [0; 16])
    }
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
