//! The command-line tests of kafka-eos, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).

mod admin_ops;
mod bridge_partitioner;
mod cli_errors;
mod commit_unknown;
mod common;
mod consume_options;
mod copy_position_lost;
mod demo_bridge_bench;
mod groups;
mod interrupt;
mod logging;
mod mock;
mod mock_operations;
mod registry_formats;
mod roundtrip;
mod sasl;
mod tls;
mod topic;
mod transactions_system;
