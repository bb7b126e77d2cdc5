//! [`ErrorCode`]: every Kafka protocol error code, whether it is retriable, and
//! how the Java transactional producer treats it.

/// How the Java transactional producer handles an error code by default (the
/// per-request differences are modelled by the producer crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnHandling {
    /// Retry the same request after a backoff.
    Retry,
    /// Look the coordinator up again, then retry.
    RefreshCoordinatorThenRetry,
    /// Abort the transaction; the producer stays usable.
    Abortable,
    /// The producer cannot continue.
    Fatal,
    /// A duplicate of an already-written batch: success without an offset.
    DuplicateSuccess,
    /// Not expected on the producer path; treated by request-specific rules.
    Unspecified,
}

/// A Kafka error code.
///
/// The table follows Apache Kafka's `Errors` enum (4.4). Codes this crate does
/// not know are preserved as [`ErrorCode::Unknown`].
///
/// A response carries an `i16`; turn it into an [`ErrorCode`] and decide:
///
/// ```
/// use kafka_proto::{ErrorCode, TxnHandling};
/// let code: i16 = 51; // an EndTxn response's error_code
/// match ErrorCode::from(code).txn_handling() {
///     TxnHandling::Retry => { /* CONCURRENT_TRANSACTIONS: back off, send again */ }
///     TxnHandling::RefreshCoordinatorThenRetry => { /* find the coordinator again */ }
///     TxnHandling::DuplicateSuccess => { /* the broker already did it */ }
///     TxnHandling::Abortable => { /* abort the transaction, redo the work */ }
///     TxnHandling::Fatal | TxnHandling::Unspecified => { /* close the producer */ }
///     _ => { /* a later release's handling: treat as fatal */ }
/// }
/// assert!(ErrorCode::from(code).is_retriable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// UNKNOWN_SERVER_ERROR (-1): UnknownServerException.
    UnknownServerError,
    /// NONE (0).
    None,
    /// OFFSET_OUT_OF_RANGE (1): OffsetOutOfRangeException.
    OffsetOutOfRange,
    /// CORRUPT_MESSAGE (2): CorruptRecordException.
    CorruptMessage,
    /// UNKNOWN_TOPIC_OR_PARTITION (3): UnknownTopicOrPartitionException.
    UnknownTopicOrPartition,
    /// INVALID_FETCH_SIZE (4): InvalidFetchSizeException.
    InvalidFetchSize,
    /// LEADER_NOT_AVAILABLE (5): LeaderNotAvailableException.
    LeaderNotAvailable,
    /// NOT_LEADER_OR_FOLLOWER (6): NotLeaderOrFollowerException.
    NotLeaderOrFollower,
    /// REQUEST_TIMED_OUT (7): TimeoutException.
    RequestTimedOut,
    /// BROKER_NOT_AVAILABLE (8): BrokerNotAvailableException.
    BrokerNotAvailable,
    /// REPLICA_NOT_AVAILABLE (9): ReplicaNotAvailableException.
    ReplicaNotAvailable,
    /// MESSAGE_TOO_LARGE (10): RecordTooLargeException.
    MessageTooLarge,
    /// STALE_CONTROLLER_EPOCH (11): ControllerMovedException.
    StaleControllerEpoch,
    /// OFFSET_METADATA_TOO_LARGE (12): OffsetMetadataTooLarge.
    OffsetMetadataTooLarge,
    /// NETWORK_EXCEPTION (13): NetworkException.
    NetworkException,
    /// COORDINATOR_LOAD_IN_PROGRESS (14): CoordinatorLoadInProgressException.
    CoordinatorLoadInProgress,
    /// COORDINATOR_NOT_AVAILABLE (15): CoordinatorNotAvailableException.
    CoordinatorNotAvailable,
    /// NOT_COORDINATOR (16): NotCoordinatorException.
    NotCoordinator,
    /// INVALID_TOPIC_EXCEPTION (17): InvalidTopicException.
    InvalidTopicException,
    /// RECORD_LIST_TOO_LARGE (18): RecordBatchTooLargeException.
    RecordListTooLarge,
    /// NOT_ENOUGH_REPLICAS (19): NotEnoughReplicasException.
    NotEnoughReplicas,
    /// NOT_ENOUGH_REPLICAS_AFTER_APPEND (20): NotEnoughReplicasAfterAppendException.
    NotEnoughReplicasAfterAppend,
    /// INVALID_REQUIRED_ACKS (21): InvalidRequiredAcksException.
    InvalidRequiredAcks,
    /// ILLEGAL_GENERATION (22): IllegalGenerationException.
    IllegalGeneration,
    /// INCONSISTENT_GROUP_PROTOCOL (23): InconsistentGroupProtocolException.
    InconsistentGroupProtocol,
    /// INVALID_GROUP_ID (24): InvalidGroupIdException.
    InvalidGroupId,
    /// UNKNOWN_MEMBER_ID (25): UnknownMemberIdException.
    UnknownMemberId,
    /// INVALID_SESSION_TIMEOUT (26): InvalidSessionTimeoutException.
    InvalidSessionTimeout,
    /// REBALANCE_IN_PROGRESS (27): RebalanceInProgressException.
    RebalanceInProgress,
    /// INVALID_COMMIT_OFFSET_SIZE (28): InvalidCommitOffsetSizeException.
    InvalidCommitOffsetSize,
    /// TOPIC_AUTHORIZATION_FAILED (29): TopicAuthorizationException.
    TopicAuthorizationFailed,
    /// GROUP_AUTHORIZATION_FAILED (30): GroupAuthorizationException.
    GroupAuthorizationFailed,
    /// CLUSTER_AUTHORIZATION_FAILED (31): ClusterAuthorizationException.
    ClusterAuthorizationFailed,
    /// INVALID_TIMESTAMP (32): InvalidTimestampException.
    InvalidTimestamp,
    /// UNSUPPORTED_SASL_MECHANISM (33): UnsupportedSaslMechanismException.
    UnsupportedSaslMechanism,
    /// ILLEGAL_SASL_STATE (34): IllegalSaslStateException.
    IllegalSaslState,
    /// UNSUPPORTED_VERSION (35): UnsupportedVersionException.
    UnsupportedVersion,
    /// TOPIC_ALREADY_EXISTS (36): TopicExistsException.
    TopicAlreadyExists,
    /// INVALID_PARTITIONS (37): InvalidPartitionsException.
    InvalidPartitions,
    /// INVALID_REPLICATION_FACTOR (38): InvalidReplicationFactorException.
    InvalidReplicationFactor,
    /// INVALID_REPLICA_ASSIGNMENT (39): InvalidReplicaAssignmentException.
    InvalidReplicaAssignment,
    /// INVALID_CONFIG (40): InvalidConfigurationException.
    InvalidConfig,
    /// NOT_CONTROLLER (41): NotControllerException.
    NotController,
    /// INVALID_REQUEST (42): InvalidRequestException.
    InvalidRequest,
    /// UNSUPPORTED_FOR_MESSAGE_FORMAT (43): UnsupportedForMessageFormatException.
    UnsupportedForMessageFormat,
    /// POLICY_VIOLATION (44): PolicyViolationException.
    PolicyViolation,
    /// OUT_OF_ORDER_SEQUENCE_NUMBER (45): OutOfOrderSequenceException.
    OutOfOrderSequenceNumber,
    /// DUPLICATE_SEQUENCE_NUMBER (46): DuplicateSequenceException.
    DuplicateSequenceNumber,
    /// INVALID_PRODUCER_EPOCH (47): InvalidProducerEpochException.
    InvalidProducerEpoch,
    /// INVALID_TXN_STATE (48): InvalidTxnStateException.
    InvalidTxnState,
    /// INVALID_PRODUCER_ID_MAPPING (49): InvalidPidMappingException.
    InvalidProducerIdMapping,
    /// INVALID_TRANSACTION_TIMEOUT (50): InvalidTxnTimeoutException.
    InvalidTransactionTimeout,
    /// CONCURRENT_TRANSACTIONS (51): ConcurrentTransactionsException.
    ConcurrentTransactions,
    /// TRANSACTION_COORDINATOR_FENCED (52): TransactionCoordinatorFencedException.
    TransactionCoordinatorFenced,
    /// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53): TransactionalIdAuthorizationException.
    TransactionalIdAuthorizationFailed,
    /// SECURITY_DISABLED (54): SecurityDisabledException.
    SecurityDisabled,
    /// OPERATION_NOT_ATTEMPTED (55): OperationNotAttemptedException.
    OperationNotAttempted,
    /// KAFKA_STORAGE_ERROR (56): KafkaStorageException.
    KafkaStorageError,
    /// LOG_DIR_NOT_FOUND (57): LogDirNotFoundException.
    LogDirNotFound,
    /// SASL_AUTHENTICATION_FAILED (58): SaslAuthenticationException.
    SaslAuthenticationFailed,
    /// UNKNOWN_PRODUCER_ID (59): UnknownProducerIdException.
    UnknownProducerId,
    /// REASSIGNMENT_IN_PROGRESS (60): ReassignmentInProgressException.
    ReassignmentInProgress,
    /// DELEGATION_TOKEN_AUTH_DISABLED (61): DelegationTokenDisabledException.
    DelegationTokenAuthDisabled,
    /// DELEGATION_TOKEN_NOT_FOUND (62): DelegationTokenNotFoundException.
    DelegationTokenNotFound,
    /// DELEGATION_TOKEN_OWNER_MISMATCH (63): DelegationTokenOwnerMismatchException.
    DelegationTokenOwnerMismatch,
    /// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (64): UnsupportedByAuthenticationException.
    DelegationTokenRequestNotAllowed,
    /// DELEGATION_TOKEN_AUTHORIZATION_FAILED (65): DelegationTokenAuthorizationException.
    DelegationTokenAuthorizationFailed,
    /// DELEGATION_TOKEN_EXPIRED (66): DelegationTokenExpiredException.
    DelegationTokenExpired,
    /// INVALID_PRINCIPAL_TYPE (67): InvalidPrincipalTypeException.
    InvalidPrincipalType,
    /// NON_EMPTY_GROUP (68): GroupNotEmptyException.
    NonEmptyGroup,
    /// GROUP_ID_NOT_FOUND (69): GroupIdNotFoundException.
    GroupIdNotFound,
    /// FETCH_SESSION_ID_NOT_FOUND (70): FetchSessionIdNotFoundException.
    FetchSessionIdNotFound,
    /// INVALID_FETCH_SESSION_EPOCH (71): InvalidFetchSessionEpochException.
    InvalidFetchSessionEpoch,
    /// LISTENER_NOT_FOUND (72): ListenerNotFoundException.
    ListenerNotFound,
    /// TOPIC_DELETION_DISABLED (73): TopicDeletionDisabledException.
    TopicDeletionDisabled,
    /// FENCED_LEADER_EPOCH (74): FencedLeaderEpochException.
    FencedLeaderEpoch,
    /// UNKNOWN_LEADER_EPOCH (75): UnknownLeaderEpochException.
    UnknownLeaderEpoch,
    /// UNSUPPORTED_COMPRESSION_TYPE (76): UnsupportedCompressionTypeException.
    UnsupportedCompressionType,
    /// STALE_BROKER_EPOCH (77): StaleBrokerEpochException.
    StaleBrokerEpoch,
    /// OFFSET_NOT_AVAILABLE (78): OffsetNotAvailableException.
    OffsetNotAvailable,
    /// MEMBER_ID_REQUIRED (79): MemberIdRequiredException.
    MemberIdRequired,
    /// PREFERRED_LEADER_NOT_AVAILABLE (80): PreferredLeaderNotAvailableException.
    PreferredLeaderNotAvailable,
    /// GROUP_MAX_SIZE_REACHED (81): GroupMaxSizeReachedException.
    GroupMaxSizeReached,
    /// FENCED_INSTANCE_ID (82): FencedInstanceIdException.
    FencedInstanceId,
    /// ELIGIBLE_LEADERS_NOT_AVAILABLE (83): EligibleLeadersNotAvailableException.
    EligibleLeadersNotAvailable,
    /// ELECTION_NOT_NEEDED (84): ElectionNotNeededException.
    ElectionNotNeeded,
    /// NO_REASSIGNMENT_IN_PROGRESS (85): NoReassignmentInProgressException.
    NoReassignmentInProgress,
    /// GROUP_SUBSCRIBED_TO_TOPIC (86): GroupSubscribedToTopicException.
    GroupSubscribedToTopic,
    /// INVALID_RECORD (87): InvalidRecordException.
    InvalidRecord,
    /// UNSTABLE_OFFSET_COMMIT (88): UnstableOffsetCommitException.
    UnstableOffsetCommit,
    /// THROTTLING_QUOTA_EXCEEDED (89): ThrottlingQuotaExceededException.
    ThrottlingQuotaExceeded,
    /// PRODUCER_FENCED (90): ProducerFencedException.
    ProducerFenced,
    /// RESOURCE_NOT_FOUND (91): ResourceNotFoundException.
    ResourceNotFound,
    /// DUPLICATE_RESOURCE (92): DuplicateResourceException.
    DuplicateResource,
    /// UNACCEPTABLE_CREDENTIAL (93): UnacceptableCredentialException.
    UnacceptableCredential,
    /// INCONSISTENT_VOTER_SET (94): InconsistentVoterSetException.
    InconsistentVoterSet,
    /// INVALID_UPDATE_VERSION (95): InvalidUpdateVersionException.
    InvalidUpdateVersion,
    /// FEATURE_UPDATE_FAILED (96): FeatureUpdateFailedException.
    FeatureUpdateFailed,
    /// PRINCIPAL_DESERIALIZATION_FAILURE (97): PrincipalDeserializationException.
    PrincipalDeserializationFailure,
    /// SNAPSHOT_NOT_FOUND (98): SnapshotNotFoundException.
    SnapshotNotFound,
    /// POSITION_OUT_OF_RANGE (99): PositionOutOfRangeException.
    PositionOutOfRange,
    /// UNKNOWN_TOPIC_ID (100): UnknownTopicIdException.
    UnknownTopicId,
    /// DUPLICATE_BROKER_REGISTRATION (101): DuplicateBrokerRegistrationException.
    DuplicateBrokerRegistration,
    /// BROKER_ID_NOT_REGISTERED (102): BrokerIdNotRegisteredException.
    BrokerIdNotRegistered,
    /// INCONSISTENT_TOPIC_ID (103): InconsistentTopicIdException.
    InconsistentTopicId,
    /// INCONSISTENT_CLUSTER_ID (104): InconsistentClusterIdException.
    InconsistentClusterId,
    /// TRANSACTIONAL_ID_NOT_FOUND (105): TransactionalIdNotFoundException.
    TransactionalIdNotFound,
    /// FETCH_SESSION_TOPIC_ID_ERROR (106): FetchSessionTopicIdException.
    FetchSessionTopicIdError,
    /// INELIGIBLE_REPLICA (107): IneligibleReplicaException.
    IneligibleReplica,
    /// NEW_LEADER_ELECTED (108): NewLeaderElectedException.
    NewLeaderElected,
    /// OFFSET_MOVED_TO_TIERED_STORAGE (109): OffsetMovedToTieredStorageException.
    OffsetMovedToTieredStorage,
    /// FENCED_MEMBER_EPOCH (110): FencedMemberEpochException.
    FencedMemberEpoch,
    /// UNRELEASED_INSTANCE_ID (111): UnreleasedInstanceIdException.
    UnreleasedInstanceId,
    /// UNSUPPORTED_ASSIGNOR (112): UnsupportedAssignorException.
    UnsupportedAssignor,
    /// STALE_MEMBER_EPOCH (113): StaleMemberEpochException.
    StaleMemberEpoch,
    /// MISMATCHED_ENDPOINT_TYPE (114): MismatchedEndpointTypeException.
    MismatchedEndpointType,
    /// UNSUPPORTED_ENDPOINT_TYPE (115): UnsupportedEndpointTypeException.
    UnsupportedEndpointType,
    /// UNKNOWN_CONTROLLER_ID (116): UnknownControllerIdException.
    UnknownControllerId,
    /// UNKNOWN_SUBSCRIPTION_ID (117): UnknownSubscriptionIdException.
    UnknownSubscriptionId,
    /// TELEMETRY_TOO_LARGE (118): TelemetryTooLargeException.
    TelemetryTooLarge,
    /// INVALID_REGISTRATION (119): InvalidRegistrationException.
    InvalidRegistration,
    /// TRANSACTION_ABORTABLE (120): TransactionAbortableException.
    TransactionAbortable,
    /// INVALID_RECORD_STATE (121): InvalidRecordStateException.
    InvalidRecordState,
    /// SHARE_SESSION_NOT_FOUND (122): ShareSessionNotFoundException.
    ShareSessionNotFound,
    /// INVALID_SHARE_SESSION_EPOCH (123): InvalidShareSessionEpochException.
    InvalidShareSessionEpoch,
    /// FENCED_STATE_EPOCH (124): FencedStateEpochException.
    FencedStateEpoch,
    /// INVALID_VOTER_KEY (125): InvalidVoterKeyException.
    InvalidVoterKey,
    /// DUPLICATE_VOTER (126): DuplicateVoterException.
    DuplicateVoter,
    /// VOTER_NOT_FOUND (127): VoterNotFoundException.
    VoterNotFound,
    /// INVALID_REGULAR_EXPRESSION (128): InvalidRegularExpression.
    InvalidRegularExpression,
    /// REBOOTSTRAP_REQUIRED (129): RebootstrapRequiredException.
    RebootstrapRequired,
    /// STREAMS_INVALID_TOPOLOGY (130): StreamsInvalidTopologyException.
    StreamsInvalidTopology,
    /// STREAMS_INVALID_TOPOLOGY_EPOCH (131): StreamsInvalidTopologyEpochException.
    StreamsInvalidTopologyEpoch,
    /// STREAMS_TOPOLOGY_FENCED (132): StreamsTopologyFencedException.
    StreamsTopologyFenced,
    /// SHARE_SESSION_LIMIT_REACHED (133): ShareSessionLimitReachedException.
    ShareSessionLimitReached,
    /// GROUP_DELETION_FAILED (134): GroupDeletionFailedException.
    GroupDeletionFailed,
    /// STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED (135): StreamsTopologyDescriptionUpdateFailedException.
    StreamsTopologyDescriptionUpdateFailed,
    /// CONTROLLER_ID_NOT_REGISTERED (136): ControllerIdNotRegisteredException.
    ControllerIdNotRegistered,
    /// A code this crate does not know, preserved.
    Unknown(i16),
}

/// (variant, code, name, retriable, handling)
const TABLE: &[(ErrorCode, i16, &str, bool, TxnHandling)] = &[
    (
        ErrorCode::UnknownServerError,
        -1,
        "UNKNOWN_SERVER_ERROR",
        false,
        TxnHandling::Unspecified,
    ),
    (ErrorCode::None, 0, "NONE", false, TxnHandling::Unspecified),
    (
        ErrorCode::OffsetOutOfRange,
        1,
        "OFFSET_OUT_OF_RANGE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::CorruptMessage,
        2,
        "CORRUPT_MESSAGE",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::UnknownTopicOrPartition,
        3,
        "UNKNOWN_TOPIC_OR_PARTITION",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::InvalidFetchSize,
        4,
        "INVALID_FETCH_SIZE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::LeaderNotAvailable,
        5,
        "LEADER_NOT_AVAILABLE",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::NotLeaderOrFollower,
        6,
        "NOT_LEADER_OR_FOLLOWER",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::RequestTimedOut,
        7,
        "REQUEST_TIMED_OUT",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::BrokerNotAvailable,
        8,
        "BROKER_NOT_AVAILABLE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ReplicaNotAvailable,
        9,
        "REPLICA_NOT_AVAILABLE",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::MessageTooLarge,
        10,
        "MESSAGE_TOO_LARGE",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::StaleControllerEpoch,
        11,
        "STALE_CONTROLLER_EPOCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::OffsetMetadataTooLarge,
        12,
        "OFFSET_METADATA_TOO_LARGE",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::NetworkException,
        13,
        "NETWORK_EXCEPTION",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::CoordinatorLoadInProgress,
        14,
        "COORDINATOR_LOAD_IN_PROGRESS",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::CoordinatorNotAvailable,
        15,
        "COORDINATOR_NOT_AVAILABLE",
        true,
        TxnHandling::RefreshCoordinatorThenRetry,
    ),
    (
        ErrorCode::NotCoordinator,
        16,
        "NOT_COORDINATOR",
        true,
        TxnHandling::RefreshCoordinatorThenRetry,
    ),
    (
        ErrorCode::InvalidTopicException,
        17,
        "INVALID_TOPIC_EXCEPTION",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::RecordListTooLarge,
        18,
        "RECORD_LIST_TOO_LARGE",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::NotEnoughReplicas,
        19,
        "NOT_ENOUGH_REPLICAS",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::NotEnoughReplicasAfterAppend,
        20,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::InvalidRequiredAcks,
        21,
        "INVALID_REQUIRED_ACKS",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::IllegalGeneration,
        22,
        "ILLEGAL_GENERATION",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::InconsistentGroupProtocol,
        23,
        "INCONSISTENT_GROUP_PROTOCOL",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidGroupId,
        24,
        "INVALID_GROUP_ID",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnknownMemberId,
        25,
        "UNKNOWN_MEMBER_ID",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::InvalidSessionTimeout,
        26,
        "INVALID_SESSION_TIMEOUT",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::RebalanceInProgress,
        27,
        "REBALANCE_IN_PROGRESS",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidCommitOffsetSize,
        28,
        "INVALID_COMMIT_OFFSET_SIZE",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::TopicAuthorizationFailed,
        29,
        "TOPIC_AUTHORIZATION_FAILED",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::GroupAuthorizationFailed,
        30,
        "GROUP_AUTHORIZATION_FAILED",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::ClusterAuthorizationFailed,
        31,
        "CLUSTER_AUTHORIZATION_FAILED",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::InvalidTimestamp,
        32,
        "INVALID_TIMESTAMP",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::UnsupportedSaslMechanism,
        33,
        "UNSUPPORTED_SASL_MECHANISM",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::IllegalSaslState,
        34,
        "ILLEGAL_SASL_STATE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnsupportedVersion,
        35,
        "UNSUPPORTED_VERSION",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::TopicAlreadyExists,
        36,
        "TOPIC_ALREADY_EXISTS",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidPartitions,
        37,
        "INVALID_PARTITIONS",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidReplicationFactor,
        38,
        "INVALID_REPLICATION_FACTOR",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidReplicaAssignment,
        39,
        "INVALID_REPLICA_ASSIGNMENT",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidConfig,
        40,
        "INVALID_CONFIG",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::NotController,
        41,
        "NOT_CONTROLLER",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidRequest,
        42,
        "INVALID_REQUEST",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::UnsupportedForMessageFormat,
        43,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::PolicyViolation,
        44,
        "POLICY_VIOLATION",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::OutOfOrderSequenceNumber,
        45,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::DuplicateSequenceNumber,
        46,
        "DUPLICATE_SEQUENCE_NUMBER",
        false,
        TxnHandling::DuplicateSuccess,
    ),
    (
        ErrorCode::InvalidProducerEpoch,
        47,
        "INVALID_PRODUCER_EPOCH",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::InvalidTxnState,
        48,
        "INVALID_TXN_STATE",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::InvalidProducerIdMapping,
        49,
        "INVALID_PRODUCER_ID_MAPPING",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::InvalidTransactionTimeout,
        50,
        "INVALID_TRANSACTION_TIMEOUT",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::ConcurrentTransactions,
        51,
        "CONCURRENT_TRANSACTIONS",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::TransactionCoordinatorFenced,
        52,
        "TRANSACTION_COORDINATOR_FENCED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::TransactionalIdAuthorizationFailed,
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::SecurityDisabled,
        54,
        "SECURITY_DISABLED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::OperationNotAttempted,
        55,
        "OPERATION_NOT_ATTEMPTED",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::KafkaStorageError,
        56,
        "KAFKA_STORAGE_ERROR",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::LogDirNotFound,
        57,
        "LOG_DIR_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::SaslAuthenticationFailed,
        58,
        "SASL_AUTHENTICATION_FAILED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnknownProducerId,
        59,
        "UNKNOWN_PRODUCER_ID",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::ReassignmentInProgress,
        60,
        "REASSIGNMENT_IN_PROGRESS",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenAuthDisabled,
        61,
        "DELEGATION_TOKEN_AUTH_DISABLED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenNotFound,
        62,
        "DELEGATION_TOKEN_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenOwnerMismatch,
        63,
        "DELEGATION_TOKEN_OWNER_MISMATCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenRequestNotAllowed,
        64,
        "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenAuthorizationFailed,
        65,
        "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DelegationTokenExpired,
        66,
        "DELEGATION_TOKEN_EXPIRED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidPrincipalType,
        67,
        "INVALID_PRINCIPAL_TYPE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::NonEmptyGroup,
        68,
        "NON_EMPTY_GROUP",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::GroupIdNotFound,
        69,
        "GROUP_ID_NOT_FOUND",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::FetchSessionIdNotFound,
        70,
        "FETCH_SESSION_ID_NOT_FOUND",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidFetchSessionEpoch,
        71,
        "INVALID_FETCH_SESSION_EPOCH",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ListenerNotFound,
        72,
        "LISTENER_NOT_FOUND",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::TopicDeletionDisabled,
        73,
        "TOPIC_DELETION_DISABLED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FencedLeaderEpoch,
        74,
        "FENCED_LEADER_EPOCH",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::UnknownLeaderEpoch,
        75,
        "UNKNOWN_LEADER_EPOCH",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnsupportedCompressionType,
        76,
        "UNSUPPORTED_COMPRESSION_TYPE",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::StaleBrokerEpoch,
        77,
        "STALE_BROKER_EPOCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::OffsetNotAvailable,
        78,
        "OFFSET_NOT_AVAILABLE",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::MemberIdRequired,
        79,
        "MEMBER_ID_REQUIRED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::PreferredLeaderNotAvailable,
        80,
        "PREFERRED_LEADER_NOT_AVAILABLE",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::GroupMaxSizeReached,
        81,
        "GROUP_MAX_SIZE_REACHED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FencedInstanceId,
        82,
        "FENCED_INSTANCE_ID",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::EligibleLeadersNotAvailable,
        83,
        "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ElectionNotNeeded,
        84,
        "ELECTION_NOT_NEEDED",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::NoReassignmentInProgress,
        85,
        "NO_REASSIGNMENT_IN_PROGRESS",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::GroupSubscribedToTopic,
        86,
        "GROUP_SUBSCRIBED_TO_TOPIC",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidRecord,
        87,
        "INVALID_RECORD",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::UnstableOffsetCommit,
        88,
        "UNSTABLE_OFFSET_COMMIT",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ThrottlingQuotaExceeded,
        89,
        "THROTTLING_QUOTA_EXCEEDED",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ProducerFenced,
        90,
        "PRODUCER_FENCED",
        false,
        TxnHandling::Fatal,
    ),
    (
        ErrorCode::ResourceNotFound,
        91,
        "RESOURCE_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DuplicateResource,
        92,
        "DUPLICATE_RESOURCE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnacceptableCredential,
        93,
        "UNACCEPTABLE_CREDENTIAL",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InconsistentVoterSet,
        94,
        "INCONSISTENT_VOTER_SET",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidUpdateVersion,
        95,
        "INVALID_UPDATE_VERSION",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FeatureUpdateFailed,
        96,
        "FEATURE_UPDATE_FAILED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::PrincipalDeserializationFailure,
        97,
        "PRINCIPAL_DESERIALIZATION_FAILURE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::SnapshotNotFound,
        98,
        "SNAPSHOT_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::PositionOutOfRange,
        99,
        "POSITION_OUT_OF_RANGE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnknownTopicId,
        100,
        "UNKNOWN_TOPIC_ID",
        true,
        TxnHandling::Retry,
    ),
    (
        ErrorCode::DuplicateBrokerRegistration,
        101,
        "DUPLICATE_BROKER_REGISTRATION",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::BrokerIdNotRegistered,
        102,
        "BROKER_ID_NOT_REGISTERED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InconsistentTopicId,
        103,
        "INCONSISTENT_TOPIC_ID",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InconsistentClusterId,
        104,
        "INCONSISTENT_CLUSTER_ID",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::TransactionalIdNotFound,
        105,
        "TRANSACTIONAL_ID_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FetchSessionTopicIdError,
        106,
        "FETCH_SESSION_TOPIC_ID_ERROR",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::IneligibleReplica,
        107,
        "INELIGIBLE_REPLICA",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::NewLeaderElected,
        108,
        "NEW_LEADER_ELECTED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::OffsetMovedToTieredStorage,
        109,
        "OFFSET_MOVED_TO_TIERED_STORAGE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FencedMemberEpoch,
        110,
        "FENCED_MEMBER_EPOCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnreleasedInstanceId,
        111,
        "UNRELEASED_INSTANCE_ID",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnsupportedAssignor,
        112,
        "UNSUPPORTED_ASSIGNOR",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::StaleMemberEpoch,
        113,
        "STALE_MEMBER_EPOCH",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::MismatchedEndpointType,
        114,
        "MISMATCHED_ENDPOINT_TYPE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnsupportedEndpointType,
        115,
        "UNSUPPORTED_ENDPOINT_TYPE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnknownControllerId,
        116,
        "UNKNOWN_CONTROLLER_ID",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::UnknownSubscriptionId,
        117,
        "UNKNOWN_SUBSCRIPTION_ID",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::TelemetryTooLarge,
        118,
        "TELEMETRY_TOO_LARGE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidRegistration,
        119,
        "INVALID_REGISTRATION",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::TransactionAbortable,
        120,
        "TRANSACTION_ABORTABLE",
        false,
        TxnHandling::Abortable,
    ),
    (
        ErrorCode::InvalidRecordState,
        121,
        "INVALID_RECORD_STATE",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ShareSessionNotFound,
        122,
        "SHARE_SESSION_NOT_FOUND",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidShareSessionEpoch,
        123,
        "INVALID_SHARE_SESSION_EPOCH",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::FencedStateEpoch,
        124,
        "FENCED_STATE_EPOCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidVoterKey,
        125,
        "INVALID_VOTER_KEY",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::DuplicateVoter,
        126,
        "DUPLICATE_VOTER",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::VoterNotFound,
        127,
        "VOTER_NOT_FOUND",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::InvalidRegularExpression,
        128,
        "INVALID_REGULAR_EXPRESSION",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::RebootstrapRequired,
        129,
        "REBOOTSTRAP_REQUIRED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::StreamsInvalidTopology,
        130,
        "STREAMS_INVALID_TOPOLOGY",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::StreamsInvalidTopologyEpoch,
        131,
        "STREAMS_INVALID_TOPOLOGY_EPOCH",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::StreamsTopologyFenced,
        132,
        "STREAMS_TOPOLOGY_FENCED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ShareSessionLimitReached,
        133,
        "SHARE_SESSION_LIMIT_REACHED",
        true,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::GroupDeletionFailed,
        134,
        "GROUP_DELETION_FAILED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::StreamsTopologyDescriptionUpdateFailed,
        135,
        "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED",
        false,
        TxnHandling::Unspecified,
    ),
    (
        ErrorCode::ControllerIdNotRegistered,
        136,
        "CONTROLLER_ID_NOT_REGISTERED",
        false,
        TxnHandling::Unspecified,
    ),
];

impl ErrorCode {
    fn entry(self) -> Option<&'static (ErrorCode, i16, &'static str, bool, TxnHandling)> {
        TABLE.iter().find(|e| e.0 == self)
    }

    /// The numeric code.
    pub fn code(self) -> i16 {
        match self {
            ErrorCode::Unknown(c) => c,
            known => known.entry().map_or(-1, |e| e.1),
        }
    }

    /// Kafka's name for the code, e.g. `CONCURRENT_TRANSACTIONS`.
    pub fn name(self) -> &'static str {
        self.entry().map_or("UNKNOWN_CODE", |e| e.2)
    }

    /// True for [`ErrorCode::None`].
    pub fn is_ok(self) -> bool {
        self == ErrorCode::None
    }

    /// Whether Kafka marks the error retriable (`RetriableException`).
    pub fn is_retriable(self) -> bool {
        self.entry().is_some_and(|e| e.3)
    }

    /// The transactional producer's default handling.
    pub fn txn_handling(self) -> TxnHandling {
        self.entry().map_or(TxnHandling::Unspecified, |e| e.4)
    }

    /// `Ok(())` for NONE, else `Err(self)`.
    pub fn into_result(self) -> Result<(), ErrorCode> {
        if self.is_ok() { Ok(()) } else { Err(self) }
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> Self {
        // Codes are dense from -1; index directly where possible.
        let idx = (i32::from(code) + 1) as usize;
        match TABLE.get(idx) {
            Some(e) if e.1 == code => e.0,
            _ => TABLE
                .iter()
                .find(|e| e.1 == code)
                .map_or(ErrorCode::Unknown(code), |e| e.0),
        }
    }
}

impl From<ErrorCode> for i16 {
    fn from(e: ErrorCode) -> i16 {
        e.code()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

impl std::error::Error for ErrorCode {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for e in TABLE {
            assert_eq!(ErrorCode::from(e.1), e.0);
            assert_eq!(e.0.code(), e.1);
        }
        assert_eq!(TABLE.len(), 138);
    }

    #[test]
    fn retriable_classification_matches_kafka() {
        for (code, retriable) in [
            // CONCURRENT_TRANSACTIONS is retriable in Kafka (kafka-protocol marks it otherwise).
            (ErrorCode::ConcurrentTransactions, true),
            (ErrorCode::NotLeaderOrFollower, true),
            (ErrorCode::ProducerFenced, false),
            (ErrorCode::TransactionalIdAuthorizationFailed, false),
        ] {
            assert_eq!(code.is_retriable(), retriable, "{code:?}");
        }
    }

    #[test]
    fn txn_handling_matches_kafka() {
        for (code, handling) in [
            (
                ErrorCode::NotCoordinator,
                TxnHandling::RefreshCoordinatorThenRetry,
            ),
            (
                ErrorCode::DuplicateSequenceNumber,
                TxnHandling::DuplicateSuccess,
            ),
            (ErrorCode::TransactionAbortable, TxnHandling::Abortable),
            (ErrorCode::ConcurrentTransactions, TxnHandling::Retry),
            (ErrorCode::InvalidProducerEpoch, TxnHandling::Abortable),
            (ErrorCode::ProducerFenced, TxnHandling::Fatal),
        ] {
            assert_eq!(code.txn_handling(), handling, "{code:?}");
        }
    }

    #[test]
    fn unknown_codes_keep_their_number_and_are_not_retriable() {
        for n in [31000, 9999, -7, -42] {
            let e = ErrorCode::from(n);
            assert_eq!(e, ErrorCode::Unknown(n));
            assert_eq!(e.code(), n);
            assert_eq!(i16::from(e), n);
            assert!(!e.is_retriable());
        }
    }

    #[test]
    fn known_codes_and_names() {
        assert_eq!(ErrorCode::from(47), ErrorCode::InvalidProducerEpoch);
        assert_eq!(ErrorCode::TransactionalIdAuthorizationFailed.code(), 53);
        assert_eq!(ErrorCode::from(51).name(), "CONCURRENT_TRANSACTIONS");
    }

    #[test]
    fn only_zero_is_ok_and_into_result_maps_it() {
        assert!(ErrorCode::from(0).is_ok());
        assert!(!ErrorCode::ProducerFenced.is_ok());
        assert_eq!(ErrorCode::from(0).into_result(), Ok(()));
        assert_eq!(
            ErrorCode::from(90).into_result(),
            Err(ErrorCode::ProducerFenced)
        );
    }
}
