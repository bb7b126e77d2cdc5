//! DescribeCluster (key 60), versions 0–2, flexible in all.
//!
//! The cluster id, the controller and the brokers as one broker sees them
//! (Java's `Admin.describeCluster`). v1 adds the endpoint type (1 brokers,
//! 2 controllers, KIP-919); v2 can include fenced brokers (KIP-1073).

use crate::describe::{message, nested};

message! {
    /// Asks for the cluster's id, controller and brokers.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::DescribeClusterRequest};
    /// let req = DescribeClusterRequest { include_fenced_brokers: true, ..Default::default() };
    /// assert_eq!(DescribeClusterRequest::decode(&req.encode_to_vec(2).unwrap(), 2).unwrap(), req);
    /// ```
    pub struct DescribeClusterRequest [message DescribeCluster, versions 0..=2, flexible 0, request DescribeClusterResponse] {
        /// Whether to include cluster authorized operations.
        include_cluster_authorized_operations: bool;
        /// The endpoint type to describe: 1 brokers, 2 controllers (v1+, default 1).
        endpoint_type: i8 = 1, versions 1..;
        /// Whether to include fenced brokers when listing brokers (v2+).
        include_fenced_brokers: bool, versions 2..;
    }
}

message! {
    /// The cluster as the answering broker sees it.
    pub struct DescribeClusterResponse [message DescribeCluster, versions 0..=2, flexible 0, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The top-level error code, or 0 if there was no error.
        error_code: i16;
        /// The top-level error message, or null if there was no error (default null).
        error_message: Option<String> = None, nullable ..;
        /// The endpoint type that was described: 1 brokers, 2 controllers (v1+, default 1).
        endpoint_type: i8 = 1, versions 1..;
        /// The cluster ID that responding broker belongs to.
        cluster_id: String;
        /// The ID of the controller (a random alive broker when a broker answers under KRaft; default -1).
        controller_id: i32 = -1;
        /// Each broker in the response.
        brokers: Vec<DescribeClusterResponseBroker>;
        /// 32-bit bitfield of the operations authorized on the cluster (default i32::MIN: not asked).
        cluster_authorized_operations: i32 = i32::MIN;
    }
}

nested! {
    /// One broker.
    pub struct DescribeClusterResponseBroker [in "brokers.", flexible 0] {
        /// The broker ID.
        broker_id: i32;
        /// The broker hostname.
        host: String;
        /// The broker port.
        port: i32;
        /// The rack of the broker, or null if it has not been assigned to a rack (default null).
        rack: Option<String> = None, nullable ..;
        /// Whether the broker is fenced (v2+).
        is_fenced: bool, versions 2..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    /// A v0 response written by hand: one broker without a rack.
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, // error_message null
            2, b'c', // cluster_id "c"
            0, 0, 0, 1, // controller_id 1
            2, // brokers: 1
            0, 0, 0, 1, // broker_id 1
            2, b'h', // host "h"
            0, 0, 0x23, 0x84, // port 9092
            0,    // rack null
            0,    // broker tags
            0x80, 0, 0, 0, // cluster_authorized_operations i32::MIN
            0, // response tags
        ];
        let resp: DescribeClusterResponse = decode_fixture(bytes, 0);
        assert_eq!(resp.cluster_id, "c");
        assert_eq!(resp.brokers[0].port, 9092);
        assert_eq!(resp.brokers[0].rack, None);
    }
}
