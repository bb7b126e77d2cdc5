//! OffsetDelete (KIP-496) as Kafka's group coordinator does it
//! (`OffsetMetadataManager.deleteOffsets`): a group that does not exist is
//! GROUP_ID_NOT_FOUND; a classic group in use whose protocol type is not
//! `consumer` is NON_EMPTY_GROUP; the partitions of a topic the group is
//! subscribed to answer GROUP_SUBSCRIBED_TO_TOPIC and keep their offsets;
//! every other partition's committed offset is removed (NONE, whether
//! there was one or not).

use super::ClusterState;
use super::group_admin::GroupRef;
use super::membership::GroupState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::ConsumerProtocolSubscription;
use std::collections::BTreeSet;

impl ClusterState {
    /// The topics `group`'s members subscribe to: KIP-848 members' names
    /// (and regex matches), classic `consumer` members' subscriptions.
    fn group_subscriptions(&self, group: GroupRef<'_>) -> BTreeSet<String> {
        match group {
            GroupRef::Consumer(g) => g.subscribed_topics(self.topics.keys()),
            GroupRef::Classic(None) => BTreeSet::new(),
            GroupRef::Classic(Some(g)) => {
                if g.state == GroupState::Empty || g.protocol_type != "consumer" {
                    return BTreeSet::new();
                }
                let Some(protocol) = &g.protocol else {
                    return BTreeSet::new();
                };
                g.members
                    .values()
                    .filter_map(|m| m.protocols.iter().find(|(name, _)| name == protocol))
                    .filter_map(|(_, meta)| {
                        ConsumerProtocolSubscription::decode_prefixed(meta).ok()
                    })
                    .flat_map(|(_, sub)| sub.topics)
                    .collect()
            }
        }
    }

    /// Deletes `group`'s offsets of `partitions` (topic, partition);
    /// returns each partition's error, or the group-wide one.
    pub(crate) fn delete_offsets(
        &mut self,
        group: &str,
        partitions: &[(String, i32)],
    ) -> Result<Vec<ErrorCode>, ErrorCode> {
        let Some(g) = self.group_ref(group) else {
            return Err(ErrorCode::GroupIdNotFound);
        };
        if let GroupRef::Classic(Some(c)) = g
            && c.state != GroupState::Empty
            && c.protocol_type != "consumer"
        {
            return Err(ErrorCode::NonEmptyGroup);
        }
        let subscribed = self.group_subscriptions(g);
        Ok(partitions
            .iter()
            .map(|tp| {
                if subscribed.contains(&tp.0) {
                    ErrorCode::GroupSubscribedToTopic
                } else {
                    self.groups.remove_offset(group, tp);
                    ErrorCode::None
                }
            })
            .collect())
    }
}
