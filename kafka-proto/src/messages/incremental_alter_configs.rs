//! IncrementalAlterConfigs (key 44), versions 0–1, flexible from 1.
//!
//! Changes chosen configs of topics and brokers (KIP-339): each entry SETs
//! (0), DELETEs (1, back to the default), APPENDs to (2) or SUBTRACTs from
//! (3) a list value; configs not named are left alone. Broker resources go
//! to the broker they name (or any broker for the cluster default, an empty
//! name).

use crate::describe::{message, nested};

message! {
    /// Changes configs of resources, entry by entry.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = IncrementalAlterConfigsRequest {
    ///     resources: vec![IncrementalAlterConfigsRequestResource {
    ///         resource_type: 2, // TOPIC
    ///         resource_name: "orders".into(),
    ///         configs: vec![IncrementalAlterConfigsRequestConfig {
    ///             name: "retention.ms".into(),
    ///             config_operation: 0, // SET
    ///             value: Some("86400000".into()),
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(IncrementalAlterConfigsRequest::decode(&req.encode_to_vec(1).unwrap(), 1).unwrap(), req);
    /// ```
    pub struct IncrementalAlterConfigsRequest [message IncrementalAlterConfigs, versions 0..=1, flexible 1, request IncrementalAlterConfigsResponse] {
        /// The incremental updates for each resource.
        resources: Vec<IncrementalAlterConfigsRequestResource>;
        /// True if we should validate the request, but not change the configurations.
        validate_only: bool;
    }
}

nested! {
    /// The changes to one resource.
    pub struct IncrementalAlterConfigsRequestResource [in "resources.", flexible 1] {
        /// The resource type (2 topic, 4 broker, 8 broker logger, …).
        resource_type: i8;
        /// The resource name.
        resource_name: String;
        /// The configurations.
        configs: Vec<IncrementalAlterConfigsRequestConfig>;
    }
}

nested! {
    /// One config change.
    pub struct IncrementalAlterConfigsRequestConfig [in "resources.configs.", flexible 1] {
        /// The configuration key name.
        name: String;
        /// The operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
        config_operation: i8;
        /// The value to set for the configuration key (null for DELETE).
        value: Option<String> = Some(String::new()), nullable ..;
    }
}

message! {
    /// The outcome of each resource.
    pub struct IncrementalAlterConfigsResponse [message IncrementalAlterConfigs, versions 0..=1, flexible 1, response] {
        /// Duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The responses for each resource.
        responses: Vec<IncrementalAlterConfigsResponseResource>;
    }
}

nested! {
    /// The outcome of one resource.
    pub struct IncrementalAlterConfigsResponseResource [in "responses.", flexible 1] {
        /// The resource error code.
        error_code: i16;
        /// The resource error message, or null if there was no error.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// The resource type.
        resource_type: i8;
        /// The resource name.
        resource_name: String;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    /// A v0 request (a DELETE with a null value) and a v1 response with an
    /// error message, written by hand.
    #[test]
    fn fixtures() {
        let req_bytes: &[u8] = &[
            0, 0, 0, 1, // resources: 1
            2, // resource_type TOPIC
            0, 1, b't', // resource_name "t"
            0, 0, 0, 1, // configs: 1
            0, 1, b'k', // name "k"
            1,    // DELETE
            0xff, 0xff, // value null
            0,    // validate_only false
        ];
        let req = IncrementalAlterConfigsRequest::decode(req_bytes, 0).unwrap();
        assert_eq!(req.resources[0].configs[0].value, None);
        assert_eq!(req.encode_to_vec(0).unwrap(), req_bytes);

        let resp_bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // responses: 1
            0, 40, // INVALID_CONFIG
            2, b'm', // error_message "m"
            2,    // resource_type TOPIC
            2, b't', // resource_name "t"
            0,    // resource tags
            0,    // response tags
        ];
        let resp = IncrementalAlterConfigsResponse::decode(resp_bytes, 1).unwrap();
        assert_eq!(resp.responses[0].error_code, 40);
        assert_eq!(resp.responses[0].error_message.as_deref(), Some("m"));
        assert_eq!(resp.encode_to_vec(1).unwrap(), resp_bytes);
    }
}
