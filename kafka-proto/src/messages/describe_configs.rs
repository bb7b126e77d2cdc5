//! DescribeConfigs (key 32), versions 1–4, flexible from 4.
//!
//! Describes the configuration of topics, brokers and other resources. From v3
//! the request can ask for documentation and each config carries its type and
//! documentation.

use crate::describe::{message, nested};

message! {
    /// Describes the configuration of resources.
    ///
    /// ```
    /// use kafka_proto::{
    ///     Message,
    ///     messages::{DescribeConfigsRequest, DescribeConfigsRequestDescribeConfigsResource},
    /// };
    /// let req = DescribeConfigsRequest {
    ///     resources: vec![DescribeConfigsRequestDescribeConfigsResource {
    ///         resource_type: 2, // TOPIC
    ///         resource_name: "orders".into(),
    ///         configuration_keys: Some(vec!["min.insync.replicas".into()]),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(4).unwrap();
    /// assert_eq!(DescribeConfigsRequest::decode(&bytes, 4).unwrap(), req);
    /// ```
    pub struct DescribeConfigsRequest [message DescribeConfigs, versions 1..=4, flexible 4, request DescribeConfigsResponse] {
        /// The resources whose configurations we want to describe.
        resources: Vec<DescribeConfigsRequestDescribeConfigsResource>;
        /// True if we should include all synonyms.
        include_synonyms: bool;
        /// True if we should include configuration documentation (v3+).
        include_documentation: bool, versions 3..;
    }
}

nested! {
    /// One resource to describe.
    pub struct DescribeConfigsRequestDescribeConfigsResource [in "resources.", flexible 4] {
        /// The resource type (2 = topic, 4 = broker, 8 = broker logger, …).
        resource_type: i8;
        /// The resource name.
        resource_name: String;
        /// The configuration keys to list, or null to list all configuration keys.
        configuration_keys: Option<Vec<String>> = Some(Vec::new()), nullable ..;
    }
}

message! {
    /// The configurations of the requested resources.
    pub struct DescribeConfigsResponse [message DescribeConfigs, versions 1..=4, flexible 4, response] {
        /// Throttle time in milliseconds, or zero.
        throttle_time_ms: i32;
        /// The results for each resource.
        results: Vec<DescribeConfigsResponseDescribeConfigsResult>;
    }
}

nested! {
    /// The result for one resource.
    pub struct DescribeConfigsResponseDescribeConfigsResult [in "results.", flexible 4] {
        /// The error code, or 0 if we were able to successfully describe the configurations.
        error_code: i16;
        /// The error message, or null.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// The resource type.
        resource_type: i8;
        /// The resource name.
        resource_name: String;
        /// Each listed configuration.
        configs: Vec<DescribeConfigsResponseDescribeConfigsResourceResult>;
    }
}

nested! {
    /// One configuration entry.
    pub struct DescribeConfigsResponseDescribeConfigsResourceResult [in "results.configs.", flexible 4] {
        /// The configuration name.
        name: String;
        /// The configuration value.
        value: Option<String> = Some(String::new()), nullable ..;
        /// True if the configuration is read-only.
        read_only: bool;
        /// The configuration source (default -1).
        config_source: i8 = -1;
        /// True if this configuration is sensitive.
        is_sensitive: bool;
        /// The synonyms for this configuration key.
        synonyms: Vec<DescribeConfigsResponseDescribeConfigsSynonym>;
        /// The configuration data type (v3+): BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD.
        config_type: i8, versions 3..;
        /// The configuration documentation (v3+).
        documentation: Option<String> = Some(String::new()), versions 3.., nullable ..;
    }
}

nested! {
    /// A synonym of a configuration key.
    pub struct DescribeConfigsResponseDescribeConfigsSynonym [in "results.configs.synonyms.", flexible 4] {
        /// The synonym name.
        name: String;
        /// The synonym value.
        value: Option<String> = Some(String::new()), nullable ..;
        /// The synonym source.
        source: i8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v4 request: one topic resource, all keys (null), synonyms and docs.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            2, // resources: 1 element
            2, // resource_type TOPIC
            2, b't', // resource_name "t"
            0,    // configuration_keys null
            0,    // resource tags
            1,    // include_synonyms
            1,    // include_documentation
            0,    // tags
        ];
        let req: DescribeConfigsRequest = decode_fixture(bytes, 4);
        assert_eq!(req.resources[0].resource_type, 2);
        assert_eq!(req.resources[0].resource_name, "t");
        assert_eq!(req.resources[0].configuration_keys, None);
        assert!(req.include_synonyms && req.include_documentation);
        assert_not_in_version(&req, 2, "include_documentation");
    }

    /// v1 response: one topic, one config with one synonym.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // results: 1 element
            0, 0, // error_code
            0xff, 0xff, // error_message null
            2,    // resource_type
            0, 1, b't', // resource_name "t"
            0, 0, 0, 1, // configs: 1 element
            0, 3, b'm', b'i', b'r', // name "mir"
            0, 1, b'2', // value "2"
            0,    // read_only
            1,    // config_source DYNAMIC_TOPIC_CONFIG
            0,    // is_sensitive
            0, 0, 0, 1, // synonyms: 1 element
            0, 3, b'm', b'i', b'r', // name
            0, 1, b'2', // value
            1,    // source
        ];
        let resp: DescribeConfigsResponse = decode_fixture(bytes, 1);
        let res = &resp.results[0];
        assert_eq!(res.error_message, None);
        assert_eq!(res.resource_name, "t");
        let c = &res.configs[0];
        assert_eq!(c.name, "mir");
        assert_eq!(c.value.as_deref(), Some("2"));
        assert_eq!(c.config_source, 1);
        assert_eq!(c.synonyms[0].source, 1);
        assert_eq!(c.config_type, 0);
        // Not in v1: the schema default, an empty (non-null) string.
        assert_eq!(c.documentation.as_deref(), Some(""));
    }

    /// v3 adds config_type and documentation after the synonyms.
    #[test]
    fn v3_config_type_and_documentation() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // results
            0, 0, 0xff, 0xff, 2, 0, 1, b't', // error, null message, TOPIC, "t"
            0, 0, 0, 1, // configs
            0, 1, b'x', // name
            0xff, 0xff, // value null
            1, 5, 1, // read_only, source DEFAULT_CONFIG, sensitive
            0, 0, 0, 0, // synonyms: empty
            3, // config_type INT
            0, 2, b'h', b'i', // documentation "hi"
        ];
        let resp: DescribeConfigsResponse = decode_fixture(bytes, 3);
        let c = &resp.results[0].configs[0];
        assert_eq!(c.value, None);
        assert!(c.read_only && c.is_sensitive);
        assert_eq!(c.config_type, 3);
        assert_eq!(c.documentation.as_deref(), Some("hi"));
        assert_eq!(
            resp.encode_to_vec(2).unwrap_err().field,
            "results.configs.config_type"
        );
    }
}
