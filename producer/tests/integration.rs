//! The tests of the producer, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).
//!
//! `partitioner_alloc`, `producer_alloc` stay binaries of their own: they install a counting global allocator.

mod producer_peer;
mod txn_injection;
