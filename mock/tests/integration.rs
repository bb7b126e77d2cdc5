//! The tests of kafka-mock, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).

mod admin;
mod admin_groups_topics;
mod admin_operations;
mod clients;
mod common;
mod control;
mod groups;
mod interceptor_and_hold;
mod leader_epochs;
mod nemesis;
mod respond;
