//! TxnOffsetCommit: offsets written inside a transaction, at the group's
//! coordinator; they become committed with the transaction's commit
//! marker. From v3 a member id and generation are checked against the
//! classic group (KIP-447). From v5 (transaction version 2) the group is added to the
//! transaction here; below v5 AddOffsetsToTxn must have added it. A stale
//! producer epoch is INVALID_PRODUCER_EPOCH.

use super::{Call, Handle, Reply, offset_commit_answers};
use crate::state::txn::TxnProducer;
use crate::state::{ClusterState, CommitValidator, CoordinatorKind, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// STALE_MEMBER_EPOCH is ILLEGAL_GENERATION before v6, which does not
/// know it (`TxnOffsetCommitRequest.supportsStaleMemberEpochError`).
fn stale_as_known(code: ErrorCode, version: i16) -> ErrorCode {
    if code == ErrorCode::StaleMemberEpoch && version < 6 {
        ErrorCode::IllegalGeneration
    } else {
        code
    }
}

impl Handle for TxnOffsetCommitRequest {
    type Response = TxnOffsetCommitResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let validator = if call.version >= 3 {
            match state.check_commit_member(commit_member(self), true, call.version) {
                Ok(v) => v,
                // KIP-447: a zombie member of an older generation is fenced.
                Err(code) => {
                    return Reply::Now(self.error(state, call, stale_as_known(code, call.version)));
                }
            }
        } else {
            CommitValidator::Any
        };
        let producer = TxnProducer {
            tid: &self.transactional_id,
            pid: self.producer_id,
            epoch: self.producer_epoch,
            fenced: ErrorCode::InvalidProducerEpoch,
        };
        let tv2 = call.version >= 5;
        let coordinator = state.coordinator(CoordinatorKind::Transaction, &self.transactional_id);
        let forwarded = Ctx {
            broker: coordinator.unwrap_or(-1),
            ..call.ctx.clone()
        };
        if let Err(code) =
            state.add_to_txn(&forwarded, producer, &[], Some(&self.group_id), tv2, !tv2)
        {
            let code = match code {
                ErrorCode::ProducerFenced => ErrorCode::InvalidProducerEpoch,
                ErrorCode::NotCoordinator | ErrorCode::CoordinatorLoadInProgress => {
                    ErrorCode::CoordinatorNotAvailable
                }
                ErrorCode::InvalidTxnState if call.version >= 4 => ErrorCode::TransactionAbortable,
                c => c,
            };
            return Reply::Now(self.error(state, call, code));
        }
        Reply::Now(response(self, call.version, |t, p| {
            let code = commit(
                state,
                &validator,
                self,
                Some(self.producer_id),
                call.version,
                t,
                p,
            );
            stale_as_known(code, call.version)
        }))
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        response(self, call.version, |_, _| code)
    }
}

offset_commit_answers! {
    TxnOffsetCommitRequest { TxnOffsetCommitRequestTopic { TxnOffsetCommitRequestPartition } }
        => TxnOffsetCommitResponse {
            TxnOffsetCommitResponseTopic { TxnOffsetCommitResponsePartition }
        },
    topic ids from version 6,
}
