//! The integration tests of kafka-eos, one module per subject, compiled as
//! one test binary: the library crates' generic code (the producer's and the
//! sink's async state machines over tokio) is instantiated and linked once
//! instead of once per file. Each module's tests are named
//! `<module>::<test>`, so `cargo test -p kafka-eos-tests --test integration
//! producer_txn_broker::` runs one module's; `.ci/run-tests.py` runs the
//! modules as jobs of their own, several at a time.
//!
//! `producer_metrics_facade` stays a binary of its own: it installs the
//! process's global `metrics` recorder, which the producers of every other
//! test would write to.

mod consumer_metrics_broker;
mod consumer_positions_broker;
mod consumer_read_to_end_mock;
mod consumer_replicas_broker;
mod differential_kafka_protocol;
mod eos_faults;
mod fuzz_corpus;
mod group_consumer_steering_broker;
mod mock_differential;
mod mock_differential_admin;
mod mock_eos_checker;
mod mock_java_clients;
mod oauth_broker;
mod oauth_eos_checkers;
mod oauth_sasl_ssl_broker;
mod producer_admin_broker;
mod producer_admin_change_broker;
mod producer_admin_groups_broker;
mod producer_batch_growth_broker;
mod producer_broker;
mod producer_connection_broker;
mod producer_eos_checker;
mod producer_faults;
mod producer_group_consumer_broker;
mod producer_group_consumer_classic_broker;
mod producer_partitioner_java;
mod producer_reader_broker;
mod producer_reader_frame_cap;
mod producer_tls_broker;
mod producer_txn_broker;
mod producer_txn_faults_broker;
mod producer_txn_late_request_broker;
mod producer_txn_resume_broker;
mod producer_txn_rollover_broker;
mod reader_fetch_sessions;
mod registry_consumer_broker;
mod registry_producer_broker;
mod registry_sink_broker;
mod sink_bridge_soak;
mod sink_eos_checker;
mod sink_kafka_broker;
mod sink_kafka_copy;
mod sink_kafka_failed_send;
mod sink_kafka_lost_transaction;
mod sink_kafka_scenarios;
mod sink_kafka_soak;
mod sink_pipeline_transform_error;
mod sink_source_rabbitmq;
mod support;
mod tls_stores_broker;
