//! ConsumerProtocolSubscription, versions 0–3, never flexible.
//!
//! The subscription part of the classic consumer protocol (Java's
//! `ConsumerProtocol`): what a consumer puts in each protocol's metadata of
//! its [`JoinGroupRequest`](crate::messages::JoinGroupRequest) and what the
//! leader reads from every [`JoinGroupResponseMember`](crate::messages::JoinGroupResponseMember).
//! It is not a message with an API key but data with an INT16 version prefix:
//! [`ConsumerProtocolSubscription::encode_prefixed`] and
//! [`ConsumerProtocolSubscription::decode_prefixed`].
//!
//! v1 adds the owned partitions (for cooperative rebalancing, KIP-429), v2
//! the generation id, v3 the rack id (KIP-881); all three are ignorable, so
//! encoding at an older version drops them. A newer version than 3 is read
//! as v3: later versions only append fields, and the bytes after the known
//! ones are ignored, as Java's reader does.

use crate::VersionRange;
use crate::describe::{ignorable, nested, read_version_prefixed, write_version_prefixed};
use crate::{DecodeError, EncodeError};
use bytes::Bytes;

nested! {
    /// A consumer's subscription, embedded in JoinGroup protocol metadata.
    pub struct ConsumerProtocolSubscription [in "", flexible never] {
        /// The topics that the member wants to consume.
        topics: Vec<String>;
        /// User data that will be passed back to the consumer (default null).
        user_data: Option<Bytes> = None, nullable ..;
        /// The partitions that the member owns (v1+, ignorable).
        owned_partitions: Vec<ConsumerProtocolSubscriptionTopicPartition>, versions ignorable(1..);
        /// The generation id of the member (v2+, default -1, ignorable).
        generation_id: i32 = -1, versions ignorable(2..);
        /// The rack id of the member (v3+, default null, ignorable).
        rack_id: Option<String> = None, versions ignorable(3..), nullable 3..;
    }
}

nested! {
    /// The partitions a member owns in one topic (v1+).
    pub struct ConsumerProtocolSubscriptionTopicPartition [in "owned_partitions.", flexible never] {
        /// The topic name.
        topic: String, versions 1..;
        /// The partition ids.
        partitions: Vec<i32>, versions 1..;
    }
}

impl ConsumerProtocolSubscription {
    /// The versions this crate knows (a newer one is read as the highest).
    pub const VERSIONS: VersionRange = VersionRange::new(0, 3);

    /// Encodes the INT16 `version` then the subscription at that version.
    /// A version above [`VERSIONS`](Self::VERSIONS) is written as the highest
    /// (as Java's `ConsumerProtocol.serializeSubscription`), a negative one
    /// is [`EncodeErrorKind::UnsupportedVersion`](crate::EncodeErrorKind::UnsupportedVersion).
    ///
    /// ```
    /// use kafka_proto::messages::ConsumerProtocolSubscription;
    /// let sub = ConsumerProtocolSubscription {
    ///     topics: vec!["t".into()],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     sub.encode_prefixed(0).unwrap(),
    ///     [0, 0, /* topics */ 0, 0, 0, 1, 0, 1, b't', /* user_data null */ 0xff, 0xff, 0xff, 0xff]
    /// );
    /// assert_eq!(sub.encode_prefixed(7).unwrap()[..2], [0, 3]);
    /// assert!(sub.encode_prefixed(-1).is_err());
    /// ```
    pub fn encode_prefixed(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        write_version_prefixed(
            version,
            Self::VERSIONS.max,
            |v| self.body_size(v),
            |buf, v| self.write_body(buf, v),
        )
    }

    /// Decodes a version-prefixed subscription; returns the version on the
    /// wire and the value. A version newer than this crate knows is read as
    /// the highest known one and the bytes after its fields are ignored (as
    /// Java's `ConsumerProtocol.deserializeSubscription`); a negative version
    /// or missing bytes are a [`DecodeError`].
    pub fn decode_prefixed(bytes: &[u8]) -> Result<(i16, Self), DecodeError> {
        read_version_prefixed(bytes, Self::VERSIONS.max, Self::read_body)
    }

    /// Random subscriptions valid at `version` (tests, fuzzing and the
    /// differential tests).
    #[cfg(any(test, feature = "arbitrary"))]
    pub fn arbitrary(version: i16) -> proptest::strategy::BoxedStrategy<Self> {
        crate::describe::generated::<Self>(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::check_version_prefixed_round_trips;
    use crate::{DecodeErrorKind, EncodeErrorKind};

    /// A v1 subscription written by hand from the schema layout.
    #[test]
    fn v1_fixture() {
        let bytes: &[u8] = &[
            0, 1, // version 1
            0, 0, 0, 1, // topics: 1
            0, 1, b't', // "t"
            0, 0, 0, 2, 0xaa, 0xbb, // user_data
            0, 0, 0, 1, // owned_partitions: 1
            0, 1, b't', // topic "t"
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, // partitions [0, 3]
        ];
        let (version, sub) = ConsumerProtocolSubscription::decode_prefixed(bytes).unwrap();
        assert_eq!(version, 1);
        assert_eq!(sub.topics, ["t"]);
        assert_eq!(sub.user_data.as_deref(), Some(&[0xaa, 0xbb][..]));
        assert_eq!(sub.owned_partitions[0].partitions, [0, 3]);
        assert_eq!(sub.generation_id, -1);
        assert_eq!(sub.rack_id, None);
        assert_eq!(sub.encode_prefixed(1).unwrap(), bytes);
    }

    /// A v3 subscription with a rack; v0 drops every ignorable field.
    #[test]
    fn v3_fixture_and_older_versions_drop_ignorable_fields() {
        let bytes: &[u8] = &[
            0, 3, // version 3
            0, 0, 0, 0, // topics: 0
            0xff, 0xff, 0xff, 0xff, // user_data null
            0, 0, 0, 0, // owned_partitions: 0
            0, 0, 0, 5, // generation_id 5
            0, 1, b'r', // rack_id "r"
        ];
        let (_, sub) = ConsumerProtocolSubscription::decode_prefixed(bytes).unwrap();
        assert_eq!((sub.generation_id, sub.rack_id.as_deref()), (5, Some("r")));
        assert_eq!(sub.encode_prefixed(3).unwrap(), bytes);
        assert_eq!(
            sub.encode_prefixed(0).unwrap(),
            [0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]
        );
    }

    /// Unknown newer versions read the v3 fields; truncated ones fail.
    #[test]
    fn newer_version_reads_known_fields() {
        let sub = ConsumerProtocolSubscription {
            topics: vec!["a".into()],
            owned_partitions: vec![ConsumerProtocolSubscriptionTopicPartition {
                topic: "a".into(),
                partitions: vec![1],
            }],
            generation_id: 8,
            rack_id: Some("r".into()),
            ..Default::default()
        };
        let mut bytes = sub.encode_prefixed(3).unwrap();
        bytes[1] = 4;
        assert_eq!(
            ConsumerProtocolSubscription::decode_prefixed(&bytes).unwrap(),
            (4, sub.clone())
        );
        bytes.extend([1, 2, 3]);
        assert_eq!(
            ConsumerProtocolSubscription::decode_prefixed(&bytes).unwrap(),
            (4, sub)
        );
        let err =
            ConsumerProtocolSubscription::decode_prefixed(&bytes[..bytes.len() - 6]).unwrap_err();
        assert_eq!(err.version, Some(4));
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
    }

    #[test]
    fn negative_or_missing_version_is_an_error() {
        let err = ConsumerProtocolSubscription::decode_prefixed(&[0x80, 0]).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::UnsupportedVersion);
        assert_eq!(err.version, Some(i16::MIN));
        assert!(ConsumerProtocolSubscription::decode_prefixed(&[0]).is_err());
        let err = ConsumerProtocolSubscription::default()
            .encode_prefixed(-1)
            .unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::UnsupportedVersion);
    }

    /// Every version: random values round-trip and re-encode identically;
    /// every truncation fails cleanly.
    #[test]
    fn round_trip_every_version() {
        check_version_prefixed_round_trips(
            ConsumerProtocolSubscription::VERSIONS,
            ConsumerProtocolSubscription::arbitrary,
            ConsumerProtocolSubscription::encode_prefixed,
            ConsumerProtocolSubscription::decode_prefixed,
        );
    }

    #[test]
    fn newer_version_reads_the_known_fields_and_ignores_the_rest() {
        use crate::messages::ConsumerProtocolSubscription;
        // A v9 subscription from a newer client: the v3 fields, then more.
        let v3 = ConsumerProtocolSubscription {
            topics: vec!["orders".into()],
            generation_id: 2,
            ..Default::default()
        };
        let mut bytes = v3.encode_prefixed(3).unwrap();
        bytes[..2].copy_from_slice(&9i16.to_be_bytes());
        bytes.extend([0, 0, 0, 42]); // a field added after v3
        assert_eq!(
            ConsumerProtocolSubscription::decode_prefixed(&bytes).unwrap(),
            (9, v3)
        );
        assert!(ConsumerProtocolSubscription::decode_prefixed(&[0xff, 0xff]).is_err());
    }

    #[test]
    fn arbitrary_v0_subscription_has_no_owned_partitions() {
        use crate::messages::ConsumerProtocolSubscription;
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let sub = ConsumerProtocolSubscription::arbitrary(0)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        assert!(
            sub.owned_partitions.is_empty(),
            "v0 has no owned partitions"
        );
    }
}
