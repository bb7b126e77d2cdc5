//! What a consumer hands a transactional producer (KIP-447): the group's
//! metadata and the offsets to commit in the transaction.

/// Consumer group metadata for `send_offsets_to_transaction` (Java
/// `ConsumerGroupMetadata`); generation -1 and an empty member id when
/// unknown (then the group coordinator cannot fence zombies, KIP-447).
///
/// ```
/// use kafka_client::GroupMetadata;
/// let g = GroupMetadata::new("my-group");
/// assert_eq!(g.generation_id, -1);
/// ```
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
    /// Metadata with only a group id.
    ///
    /// ```
    /// use kafka_client::GroupMetadata;
    /// let g = GroupMetadata::new("billing");
    /// assert_eq!((g.group_id.as_str(), g.member_id.as_str()), ("billing", ""));
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
///
/// ```
/// use kafka_client::OffsetAndMetadata;
/// let o = OffsetAndMetadata { offset: 42, leader_epoch: Some(3), metadata: Some("batch-7".into()) };
/// assert_eq!(o.offset, 42, "the next offset to consume");
/// ```
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
    /// An offset without metadata.
    ///
    /// ```
    /// use kafka_client::OffsetAndMetadata;
    /// let o = OffsetAndMetadata::new(42);
    /// assert_eq!((o.offset, o.leader_epoch, o.metadata), (42, None, None));
    /// ```
    pub fn new(offset: i64) -> Self {
        Self {
            offset,
            leader_epoch: None,
            metadata: None,
        }
    }
}
