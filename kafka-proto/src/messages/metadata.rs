//! Metadata (key 3), versions 0–13, flexible from 9.
//!
//! The request lists the topics to describe: in v0 an empty array means "all
//! topics"; from v1 a **null** array means "all topics" and an empty one "none".
//! From v10 topics carry a topic id and the name may be null (usable from v12).
//! The response lists the brokers, the cluster id, the controller and, per topic,
//! its partitions with leader, epoch and replica sets; v13 adds a top-level error.

use crate::describe::{message, nested};
use crate::primitives::Uuid;

message! {
    /// Asks a broker for cluster and topic metadata.
    ///
    /// `topics: None` (v1+) asks for every topic; `Some(vec![])` asks for none (but
    /// in v0 an empty array means every topic, and null cannot be sent).
    ///
    /// ```
    /// use kafka_proto::{
    ///     Message,
    ///     messages::{MetadataRequest, MetadataRequestTopic},
    /// };
    /// let req = MetadataRequest {
    ///     topics: Some(vec![MetadataRequestTopic::by_name("orders")]),
    ///     allow_auto_topic_creation: false,
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(12).unwrap();
    /// assert_eq!(MetadataRequest::decode(&bytes, 12).unwrap(), req);
    /// // All topics: a null array, which v0 cannot express.
    /// let all = MetadataRequest::all_topics();
    /// assert!(all.encode_to_vec(0).is_err());
    /// assert!(all.encode_to_vec(1).is_ok());
    /// ```
    pub struct MetadataRequest [message Metadata, versions 0..=13, flexible 9, request MetadataResponse] {
        /// The topics to fetch metadata for; null (v1+) for all topics. Defaults to
        /// an empty (non-null) array.
        topics: Option<Vec<MetadataRequestTopic>> = Some(Vec::new()), nullable 1..;
        /// Whether the broker may auto-create requested topics that do not exist
        /// (v4+, default true).
        allow_auto_topic_creation: bool = true, versions 4..;
        /// Whether to include cluster authorized operations (v8–10).
        include_cluster_authorized_operations: bool, versions 8..=10;
        /// Whether to include topic authorized operations (v8+).
        include_topic_authorized_operations: bool, versions 8..;
    }
}

nested! {
    /// A topic to fetch metadata for.
    pub struct MetadataRequestTopic [in "topics.", flexible 9] {
        /// The topic id (v10+; all zeros when querying by name).
        topic_id: Uuid, versions 10..;
        /// The topic name; null only from v10 (to query by id). Defaults to `""`.
        name: Option<String> = Some(String::new()), nullable 10..;
    }
}

message! {
    /// The brokers, controller and topic/partition layout of the cluster.
    pub struct MetadataResponse [message Metadata, versions 0..=13, flexible 9, response] {
        /// Throttle time in milliseconds (v3+).
        throttle_time_ms: i32, versions 3..;
        /// The brokers present in the cluster.
        brokers: Vec<MetadataResponseBroker>;
        /// The cluster id (v2+, default null).
        cluster_id: Option<String>, versions 2.., nullable 2..;
        /// The controller's broker id (v1+, default -1).
        controller_id: i32 = -1, versions 1..;
        /// Each topic in the response.
        topics: Vec<MetadataResponseTopic>;
        /// Cluster authorized operations bitfield (v8–10, default `i32::MIN`).
        cluster_authorized_operations: i32 = i32::MIN, versions 8..=10;
        /// The top-level error code (v13+).
        error_code: i16, versions 13..;
    }
}

nested! {
    /// A broker in the cluster.
    pub struct MetadataResponseBroker [in "brokers.", flexible 9] {
        /// The broker id.
        node_id: i32;
        /// The broker hostname.
        host: String;
        /// The broker port.
        port: i32;
        /// The broker's rack, or null (v1+, default null).
        rack: Option<String>, versions 1.., nullable 1..;
    }
}

nested! {
    /// One topic's metadata.
    pub struct MetadataResponseTopic [in "topics.", flexible 9] {
        /// The topic error, or 0.
        error_code: i16;
        /// The topic name; null (v12+) for unknown topics queried by id. Defaults to `""`.
        name: Option<String> = Some(String::new()), nullable 12..;
        /// The topic id (v10+); zero for unknown topics queried by name.
        topic_id: Uuid, versions 10..;
        /// True if the topic is internal (v1+).
        is_internal: bool, versions 1..;
        /// Each partition of the topic.
        partitions: Vec<MetadataResponsePartition>;
        /// Topic authorized operations bitfield (v8+, default `i32::MIN`).
        topic_authorized_operations: i32 = i32::MIN, versions 8..;
    }
}

nested! {
    /// One partition's metadata.
    pub struct MetadataResponsePartition [in "topics.partitions.", flexible 9] {
        /// The partition error, or 0.
        error_code: i16;
        /// The partition index.
        partition_index: i32;
        /// The leader's broker id.
        leader_id: i32;
        /// The leader epoch (v7+, default -1).
        leader_epoch: i32 = -1, versions 7..;
        /// All replicas of the partition.
        replica_nodes: Vec<i32>;
        /// The in-sync replicas.
        isr_nodes: Vec<i32>;
        /// The offline replicas (v5+).
        offline_replicas: Vec<i32>, versions 5..;
    }
}

impl MetadataRequest {
    /// A request for every topic (a null topic array, v1+).
    ///
    /// ```
    /// # use kafka_proto::{messages::MetadataRequest, Message};
    /// let req = MetadataRequest::all_topics();
    /// assert!(req.topics.is_none());
    /// assert!(
    ///     req.encode_to_vec(0).is_err(),
    ///     "v0 cannot ask for all topics"
    /// );
    /// assert_eq!(
    ///     MetadataRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
    ///     req
    /// );
    /// ```
    pub fn all_topics() -> Self {
        Self {
            topics: None,
            ..Self::default()
        }
    }
}

impl MetadataRequestTopic {
    /// A topic queried by name.
    pub fn by_name(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            ..Self::default()
        }
    }
    /// A topic queried by id (v10+; brokers honour it from v12).
    pub fn by_id(topic_id: Uuid) -> Self {
        Self {
            topic_id,
            name: None,
            ..Self::default()
        }
    }
}

impl MetadataResponse {
    /// The broker with id `node_id`, if listed.
    pub fn broker(&self, node_id: i32) -> Option<&MetadataResponseBroker> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }
    /// The topic named `name`, if listed.
    pub fn topic(&self, name: &str) -> Option<&MetadataResponseTopic> {
        self.topics.iter().find(|t| t.name.as_deref() == Some(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    #[test]
    fn v0_request_cannot_send_null_topics() {
        let e = MetadataRequest::all_topics().encode_to_vec(0).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::NullNotAllowed);
        assert_eq!(e.field, "topics");
        // v0 "all topics" is an empty array.
        assert_eq!(
            MetadataRequest::default().encode_to_vec(0).unwrap(),
            [0, 0, 0, 0]
        );
        // v1 null array.
        assert_eq!(
            MetadataRequest::all_topics().encode_to_vec(1).unwrap(),
            [0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn fields_outside_their_versions_are_rejected() {
        let req = MetadataRequest {
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        assert_not_in_version(&req, 3, "allow_auto_topic_creation");
        let req = MetadataRequest {
            include_cluster_authorized_operations: true,
            ..Default::default()
        };
        assert!(req.encode_to_vec(10).is_ok());
        assert!(req.encode_to_vec(11).is_err());
        let by_id = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic::by_id([1; 16])]),
            ..Default::default()
        };
        assert!(by_id.encode_to_vec(9).is_err());
        assert!(by_id.encode_to_vec(12).is_ok());
        let resp = MetadataResponse {
            topics: vec![MetadataResponseTopic {
                partitions: vec![MetadataResponsePartition {
                    leader_epoch: 4,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = resp.encode_to_vec(6).unwrap_err();
        assert_eq!(e.field, "topics.partitions.leader_epoch");
        assert!(resp.encode_to_vec(7).is_ok());
        let tagged = MetadataRequest {
            unknown_tagged_fields: vec![(20, bytes::Bytes::from_static(b"x"))],
            ..Default::default()
        };
        assert!(tagged.encode_to_vec(8).is_err());
        assert!(tagged.encode_to_vec(9).is_ok());
    }

    /// A v12 request written out by hand from the schema: one topic by name,
    /// one by id (null name), no auto-creation, topic authorized operations.
    #[test]
    fn v12_request_fixture() {
        let mut bytes = vec![
            3, // compact array: 2 topics
        ];
        bytes.extend_from_slice(&[0; 16]); // topic_id zero
        bytes.extend_from_slice(&[4, b'a', b'b', b'c', 0]); // name "abc", no tags
        bytes.extend_from_slice(&[0xab; 16]); // topic_id
        bytes.extend_from_slice(&[0, 0]); // null name, no tags
        bytes.extend_from_slice(&[
            0, // allow_auto_topic_creation false
            1, // include_topic_authorized_operations true
            0, // no tags
        ]);
        let req = MetadataRequest::decode(&bytes, 12).unwrap();
        assert_eq!(
            req,
            MetadataRequest {
                topics: Some(vec![
                    MetadataRequestTopic::by_name("abc"),
                    MetadataRequestTopic::by_id([0xab; 16]),
                ]),
                allow_auto_topic_creation: false,
                include_topic_authorized_operations: true,
                ..Default::default()
            }
        );
        assert_eq!(req.encode_to_vec(12).unwrap(), bytes);
    }

    /// A v1 response written out by hand: one broker with rack "r1", controller 1,
    /// one internal topic "t" with one partition led by broker 1.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // brokers: 1
            0, 0, 0, 1, // node_id 1
            0, 2, b'h', b'1', // host "h1"
            0, 0, 0x23, 0x84, // port 9092
            0, 2, b'r', b'1', // rack "r1"
            0, 0, 0, 1, // controller_id 1
            0, 0, 0, 1, // topics: 1
            0, 0, // error_code
            0, 1, b't', // name "t"
            1,    // is_internal
            0, 0, 0, 1, // partitions: 1
            0, 9, // error_code 9 (REPLICA_NOT_AVAILABLE)
            0, 0, 0, 0, // partition_index 0
            0, 0, 0, 1, // leader_id 1
            0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // replicas [1, 2]
            0, 0, 0, 1, 0, 0, 0, 1, // isr [1]
        ];
        let resp: MetadataResponse = decode_fixture(bytes, 1);
        assert_eq!(resp.controller_id, 1);
        let b = resp.broker(1).unwrap();
        assert_eq!((b.host.as_str(), b.port), ("h1", 9092));
        assert_eq!(b.rack.as_deref(), Some("r1"));
        let t = resp.topic("t").unwrap();
        assert!(t.is_internal);
        assert_eq!(t.partitions[0].error_code, 9);
        assert_eq!(t.partitions[0].leader_epoch, -1);
        assert_eq!(t.partitions[0].replica_nodes, [1, 2]);
        assert_eq!(t.partitions[0].isr_nodes, [1]);
    }

    /// A v13 response by hand: no brokers, null cluster id, one unknown topic
    /// queried by id (null name), top-level error 0.
    #[test]
    fn v13_response_fixture() {
        let mut bytes = vec![
            0, 0, 0, 5, // throttle 5
            1, // brokers: 0
            0, // cluster_id null
            0xff, 0xff, 0xff, 0xff, // controller -1
            2,    // topics: 1
            0, 100, // UNKNOWN_TOPIC_ID
            0,   // null name
        ];
        bytes.extend_from_slice(&[7; 16]);
        bytes.extend_from_slice(&[
            0, // is_internal
            1, // no partitions
            0x80, 0, 0, 0, // topic_authorized_operations MIN
            0, // topic tags
            0, 0, // error_code
            0, // tags
        ]);
        let resp = MetadataResponse::decode(&bytes, 13).unwrap();
        assert_eq!(resp.throttle_time_ms, 5);
        assert_eq!(resp.topics[0].name, None);
        assert_eq!(resp.topics[0].topic_id, [7; 16]);
        assert_eq!(resp.topics[0].error_code, 100);
        assert_eq!(resp.encode_to_vec(13).unwrap(), bytes);
        // A null name is not valid before v12.
        assert!(MetadataResponse::decode(&bytes, 11).is_err());
    }

    #[test]
    fn broker_rack_is_refused_at_v0() {
        use crate::{
            Message,
            messages::{MetadataResponse, MetadataResponseBroker},
        };
        let broker = MetadataResponseBroker {
            node_id: 1,
            host: "kafka-1".into(),
            port: 9093,
            rack: Some("eu-west-1a".into()),
            ..Default::default()
        };
        let resp = MetadataResponse {
            brokers: vec![broker],
            ..Default::default()
        };
        assert_eq!(
            MetadataResponse::decode(&resp.encode_to_vec(12).unwrap(), 12).unwrap(),
            resp
        );
        assert!(resp.encode_to_vec(0).is_err(), "v0 has no rack");
    }

    #[test]
    fn by_name_leaves_the_topic_id_zero() {
        use crate::messages::MetadataRequestTopic;
        let t = MetadataRequestTopic::by_name("orders");
        assert_eq!((t.name.as_deref(), t.topic_id), (Some("orders"), [0; 16]));
    }

    #[test]
    fn topic_ids_need_v10() {
        use crate::{
            Message,
            messages::{MetadataRequest, MetadataRequestTopic},
        };
        let req = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic::by_id([7; 16])]),
            ..Default::default()
        };
        assert!(req.encode_to_vec(9).is_err(), "ids need v10+");
        assert_eq!(
            MetadataRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
            req
        );
    }
}
