//! The tests of kafka-schema-registry, one module per subject, compiled as
//! one test binary. The registry tests run against a real Apicurio Registry
//! (`kafka_testcontainers::SchemaRegistry`); the oracle tests against
//! Confluent's own Python serializers
//! (`testcontainers/install-confluent-python.sh`). `.ci/run-tests.py` runs
//! each module as a job of its own (`<package>::<module>`).

mod auth_proxy;
#[cfg(feature = "avro")]
mod avro_registry;
mod http_policy;
#[cfg(feature = "json")]
mod json_registry;
#[cfg(feature = "protobuf")]
mod protobuf_oracle;
#[cfg(feature = "protobuf")]
mod protobuf_registry;
mod registry;
