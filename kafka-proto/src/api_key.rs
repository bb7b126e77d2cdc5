//! [`ApiKey`]: the numeric identifier of every Kafka API.

/// A Kafka API key. Keys this crate does not know are kept as [`ApiKey::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ApiKey {
    /// Produce (0).
    Produce,
    /// Fetch (1).
    Fetch,
    /// ListOffsets (2).
    ListOffsets,
    /// Metadata (3).
    Metadata,
    /// OffsetCommit (8).
    OffsetCommit,
    /// OffsetFetch (9).
    OffsetFetch,
    /// FindCoordinator (10).
    FindCoordinator,
    /// JoinGroup (11).
    JoinGroup,
    /// Heartbeat (12).
    Heartbeat,
    /// LeaveGroup (13).
    LeaveGroup,
    /// SyncGroup (14).
    SyncGroup,
    /// DescribeGroups (15).
    DescribeGroups,
    /// ListGroups (16).
    ListGroups,
    /// SaslHandshake (17).
    SaslHandshake,
    /// ApiVersions (18).
    ApiVersions,
    /// CreateTopics (19).
    CreateTopics,
    /// DeleteTopics (20).
    DeleteTopics,
    /// DeleteRecords (21).
    DeleteRecords,
    /// InitProducerId (22).
    InitProducerId,
    /// OffsetForLeaderEpoch (23).
    OffsetForLeaderEpoch,
    /// AddPartitionsToTxn (24).
    AddPartitionsToTxn,
    /// AddOffsetsToTxn (25).
    AddOffsetsToTxn,
    /// EndTxn (26).
    EndTxn,
    /// WriteTxnMarkers (27).
    WriteTxnMarkers,
    /// TxnOffsetCommit (28).
    TxnOffsetCommit,
    /// DescribeAcls (29).
    DescribeAcls,
    /// CreateAcls (30).
    CreateAcls,
    /// DeleteAcls (31).
    DeleteAcls,
    /// DescribeConfigs (32).
    DescribeConfigs,
    /// AlterConfigs (33).
    AlterConfigs,
    /// SaslAuthenticate (36).
    SaslAuthenticate,
    /// CreatePartitions (37).
    CreatePartitions,
    /// DeleteGroups (42).
    DeleteGroups,
    /// IncrementalAlterConfigs (44).
    IncrementalAlterConfigs,
    /// OffsetDelete (47).
    OffsetDelete,
    /// DescribeCluster (60).
    DescribeCluster,
    /// DescribeProducers (61).
    DescribeProducers,
    /// DescribeTransactions (65).
    DescribeTransactions,
    /// ListTransactions (66).
    ListTransactions,
    /// ConsumerGroupHeartbeat (68).
    ConsumerGroupHeartbeat,
    /// ConsumerGroupDescribe (69).
    ConsumerGroupDescribe,
    /// Any other key.
    Unknown(i16),
}

const TABLE: &[(ApiKey, i16)] = &[
    (ApiKey::Produce, 0),
    (ApiKey::Fetch, 1),
    (ApiKey::ListOffsets, 2),
    (ApiKey::Metadata, 3),
    (ApiKey::OffsetCommit, 8),
    (ApiKey::OffsetFetch, 9),
    (ApiKey::FindCoordinator, 10),
    (ApiKey::JoinGroup, 11),
    (ApiKey::Heartbeat, 12),
    (ApiKey::LeaveGroup, 13),
    (ApiKey::SyncGroup, 14),
    (ApiKey::DescribeGroups, 15),
    (ApiKey::ListGroups, 16),
    (ApiKey::SaslHandshake, 17),
    (ApiKey::ApiVersions, 18),
    (ApiKey::CreateTopics, 19),
    (ApiKey::DeleteTopics, 20),
    (ApiKey::DeleteRecords, 21),
    (ApiKey::InitProducerId, 22),
    (ApiKey::OffsetForLeaderEpoch, 23),
    (ApiKey::AddPartitionsToTxn, 24),
    (ApiKey::AddOffsetsToTxn, 25),
    (ApiKey::EndTxn, 26),
    (ApiKey::WriteTxnMarkers, 27),
    (ApiKey::TxnOffsetCommit, 28),
    (ApiKey::DescribeAcls, 29),
    (ApiKey::CreateAcls, 30),
    (ApiKey::DeleteAcls, 31),
    (ApiKey::DescribeConfigs, 32),
    (ApiKey::AlterConfigs, 33),
    (ApiKey::SaslAuthenticate, 36),
    (ApiKey::CreatePartitions, 37),
    (ApiKey::DeleteGroups, 42),
    (ApiKey::IncrementalAlterConfigs, 44),
    (ApiKey::OffsetDelete, 47),
    (ApiKey::DescribeCluster, 60),
    (ApiKey::DescribeProducers, 61),
    (ApiKey::DescribeTransactions, 65),
    (ApiKey::ListTransactions, 66),
    (ApiKey::ConsumerGroupHeartbeat, 68),
    (ApiKey::ConsumerGroupDescribe, 69),
];

impl From<i16> for ApiKey {
    fn from(v: i16) -> Self {
        TABLE
            .iter()
            .find(|(_, k)| *k == v)
            .map(|(a, _)| *a)
            .unwrap_or(ApiKey::Unknown(v))
    }
}

impl From<ApiKey> for i16 {
    fn from(a: ApiKey) -> i16 {
        match a {
            ApiKey::Unknown(v) => v,
            known => TABLE
                .iter()
                .find(|(k, _)| *k == known)
                .map(|(_, v)| *v)
                .unwrap_or(-1),
        }
    }
}

impl ApiKey {
    /// The numeric key.
    pub fn code(self) -> i16 {
        i16::from(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_round_trips() {
        for (k, v) in TABLE {
            assert_eq!(ApiKey::from(*v), *k);
            assert_eq!(i16::from(*k), *v);
        }
    }

    #[test]
    fn unknown_keys_are_kept() {
        assert_eq!(ApiKey::from(999), ApiKey::Unknown(999));
        assert_eq!(ApiKey::Unknown(1000).code(), 1000);
    }

    #[test]
    fn known_keys_have_their_codes() {
        assert_eq!(ApiKey::from(22), ApiKey::InitProducerId);
        assert_eq!(ApiKey::AddPartitionsToTxn.code(), 24);
        assert_eq!(i16::from(ApiKey::Produce), 0);
    }
}
