//! ConsumerProtocolAssignment, versions 0–3, never flexible.
//!
//! The assignment part of the classic consumer protocol (Java's
//! `ConsumerProtocol`): what the leader puts for each member in its
//! [`SyncGroupRequestAssignment`](crate::messages::SyncGroupRequestAssignment)s
//! and what every member reads from its
//! [`SyncGroupResponse`](crate::messages::SyncGroupResponse). It is not a
//! message with an API key but data with an INT16 version prefix:
//! [`ConsumerProtocolAssignment::encode_prefixed`] and
//! [`ConsumerProtocolAssignment::decode_prefixed`].
//!
//! The layout is the same in every version (v1–3 follow the subscription's
//! versions). A newer version than 3 is read as v3: later versions only
//! append fields, and the bytes after the known ones are ignored, as Java's
//! reader does.

use crate::VersionRange;
use crate::describe::{nested, read_version_prefixed, write_version_prefixed};
use crate::{DecodeError, EncodeError};
use bytes::Bytes;

nested! {
    /// A member's assignment, embedded in SyncGroup assignment bytes.
    pub struct ConsumerProtocolAssignment [in "", flexible never] {
        /// The list of topics and partitions assigned to this consumer.
        assigned_partitions: Vec<ConsumerProtocolAssignmentTopicPartition>;
        /// User data (default null).
        user_data: Option<Bytes> = None, nullable ..;
    }
}

nested! {
    /// The partitions assigned in one topic.
    pub struct ConsumerProtocolAssignmentTopicPartition [in "assigned_partitions.", flexible never] {
        /// The topic name.
        topic: String;
        /// The list of partitions assigned to this consumer.
        partitions: Vec<i32>;
    }
}

impl ConsumerProtocolAssignment {
    /// The versions this crate knows (a newer one is read as the highest).
    pub const VERSIONS: VersionRange = VersionRange::new(0, 3);

    /// Encodes the INT16 `version` then the assignment. A version above
    /// [`VERSIONS`](Self::VERSIONS) is written as the highest (as Java's
    /// `ConsumerProtocol.serializeAssignment`), a negative one is
    /// [`EncodeErrorKind::UnsupportedVersion`](crate::EncodeErrorKind::UnsupportedVersion).
    ///
    /// ```
    /// use kafka_proto::messages::ConsumerProtocolAssignment;
    /// // An empty assignment (the member gets no partitions).
    /// let none = ConsumerProtocolAssignment::default();
    /// assert_eq!(
    ///     none.encode_prefixed(0).unwrap(),
    ///     [0, 0, /* assigned_partitions */ 0, 0, 0, 0, /* user_data null */ 0xff, 0xff, 0xff, 0xff]
    /// );
    /// ```
    pub fn encode_prefixed(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        write_version_prefixed(
            version,
            Self::VERSIONS.max,
            |v| self.body_size(v),
            |buf, v| self.write_body(buf, v),
        )
    }

    /// Decodes a version-prefixed assignment; returns the version on the
    /// wire and the value. A version newer than this crate knows is read as
    /// the highest known one and the bytes after its fields are ignored (as
    /// Java's `ConsumerProtocol.deserializeAssignment`); a negative version
    /// or missing bytes are a [`DecodeError`].
    pub fn decode_prefixed(bytes: &[u8]) -> Result<(i16, Self), DecodeError> {
        read_version_prefixed(bytes, Self::VERSIONS.max, Self::read_body)
    }

    /// Random assignments valid at `version` (tests, fuzzing and the
    /// differential tests).
    #[cfg(any(test, feature = "arbitrary"))]
    pub fn arbitrary(version: i16) -> proptest::strategy::BoxedStrategy<Self> {
        crate::describe::generated::<Self>(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DecodeErrorKind;
    use crate::describe::check_version_prefixed_round_trips;

    /// A v1 assignment written by hand from the schema layout.
    #[test]
    fn v1_fixture() {
        let bytes: &[u8] = &[
            0, 1, // version 1
            0, 0, 0, 2, // assigned_partitions: 2
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, 0, 0, 0, 4, // partitions [4]
            0, 1, b'b', // topic "b"
            0, 0, 0, 0, // partitions []
            0, 0, 0, 1, 7, // user_data [7]
        ];
        let (version, a) = ConsumerProtocolAssignment::decode_prefixed(bytes).unwrap();
        assert_eq!(version, 1);
        assert_eq!(a.assigned_partitions[0].topic, "a");
        assert_eq!(a.assigned_partitions[0].partitions, [4]);
        assert!(a.assigned_partitions[1].partitions.is_empty());
        assert_eq!(a.user_data.as_deref(), Some(&[7][..]));
        assert_eq!(a.encode_prefixed(1).unwrap(), bytes);
        // The layout does not change with the version; only the prefix does.
        assert_eq!(a.encode_prefixed(0).unwrap()[2..], bytes[2..]);
    }

    /// A newer version is read as v3, trailing bytes ignored; a negative
    /// version is refused.
    #[test]
    fn newer_version_and_negative_version() {
        let a = ConsumerProtocolAssignment {
            assigned_partitions: vec![ConsumerProtocolAssignmentTopicPartition {
                topic: "t".into(),
                partitions: vec![0],
            }],
            user_data: Some(Bytes::from_static(b"u")),
        };
        let mut bytes = a.encode_prefixed(3).unwrap();
        bytes[..2].copy_from_slice(&i16::MAX.to_be_bytes());
        bytes.extend([0xff; 9]);
        assert_eq!(
            ConsumerProtocolAssignment::decode_prefixed(&bytes).unwrap(),
            (i16::MAX, a)
        );
        bytes[..2].copy_from_slice(&(-3i16).to_be_bytes());
        let err = ConsumerProtocolAssignment::decode_prefixed(&bytes).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::UnsupportedVersion);
        assert_eq!(err.version, Some(-3));
    }

    /// Every version: random values round-trip and re-encode identically;
    /// every truncation fails cleanly.
    #[test]
    fn round_trip_every_version() {
        check_version_prefixed_round_trips(
            ConsumerProtocolAssignment::VERSIONS,
            ConsumerProtocolAssignment::arbitrary,
            ConsumerProtocolAssignment::encode_prefixed,
            ConsumerProtocolAssignment::decode_prefixed,
        );
    }

    #[test]
    fn newer_version_is_read_and_a_cut_fails() {
        use crate::messages::ConsumerProtocolAssignment;
        let bytes = [
            0, 5, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, /* newer fields */ 1, 2,
        ];
        let (version, assignment) = ConsumerProtocolAssignment::decode_prefixed(&bytes).unwrap();
        assert_eq!(version, 5);
        assert!(assignment.assigned_partitions.is_empty());
        assert!(ConsumerProtocolAssignment::decode_prefixed(&bytes[..5]).is_err());
    }

    #[test]
    fn arbitrary_v3_assignment_encodes() {
        use crate::messages::ConsumerProtocolAssignment;
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let a = ConsumerProtocolAssignment::arbitrary(3)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        assert!(a.encode_prefixed(3).is_ok());
    }
}
