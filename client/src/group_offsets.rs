//! What a consumer hands a transactional producer (KIP-447): the group's
//! metadata and the offsets to commit in the transaction.

/// Consumer group metadata for `send_offsets_to_transaction` (Java
/// `ConsumerGroupMetadata`); generation -1 and an empty member id when
/// unknown (then the group coordinator cannot fence zombies, KIP-447).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupMetadata {
    /// Group id.
    pub group_id: String,
    /// Generation (or member epoch).
    pub generation_id: i32,
    /// Member id.
    pub member_id: String,
    /// Static member instance id.
    pub group_instance_id: Option<String>,
}

impl GroupMetadata {
    /// Metadata with only a group id: generation -1, no member id, no
    /// instance id. A consumer that is in the group fills in its current
    /// generation and member id, so that the coordinator can fence a zombie:
    ///
    /// ```
    /// use kafka_client::GroupMetadata;
    /// let g = GroupMetadata {
    ///     generation_id: 7,
    ///     member_id: "consumer-1-5f3a".into(),
    ///     ..GroupMetadata::new("billing")
    /// };
    /// assert_eq!(g.group_instance_id, None);
    /// ```
    pub fn new(group_id: impl Into<String>) -> Self {
        Self {
            group_id: group_id.into(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
        }
    }
}

/// An offset to commit in a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffsetAndMetadata {
    /// The next offset to consume.
    pub offset: i64,
    /// The leader epoch of the consumed record, if known.
    pub leader_epoch: Option<i32>,
    /// Metadata string.
    pub metadata: Option<String>,
}

impl OffsetAndMetadata {
    /// An offset without leader epoch or metadata. The offset committed is
    /// the next one to consume: the last processed record's offset plus one.
    ///
    /// ```
    /// use kafka_client::OffsetAndMetadata;
    /// let last_processed = 41;
    /// let commit = OffsetAndMetadata {
    ///     leader_epoch: Some(3), // the record's, lets the broker detect truncation
    ///     ..OffsetAndMetadata::new(last_processed + 1)
    /// };
    /// assert_eq!(commit.offset, 42);
    /// ```
    pub fn new(offset: i64) -> Self {
        Self {
            offset,
            leader_epoch: None,
            metadata: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_metadata_new_is_unknown_generation_and_member() {
        let g = GroupMetadata::new("billing");
        assert_eq!(g.group_id, "billing");
        assert_eq!((g.generation_id, g.member_id.as_str()), (-1, ""));
        assert_eq!(g.group_instance_id, None);
    }

    #[test]
    fn offset_and_metadata_new_has_no_epoch_or_metadata() {
        let o = OffsetAndMetadata::new(42);
        assert_eq!((o.offset, o.leader_epoch, o.metadata), (42, None, None));
    }
}
