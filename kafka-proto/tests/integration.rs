//! The tests of the codec, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).
//!
//! `record_alloc` stays a binary of its own: it installs a counting global allocator.

mod batch_around;
mod record_fixture;
mod record_hostile;
mod record_proptest;
mod sequence_wrap;
