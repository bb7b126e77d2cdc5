//! The tests of the sink layer, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).

mod checkpoint;
mod late_init_fences_prepared;
mod source_base;
mod source_operator;
mod state_fixture;
mod support;
mod two_phase;
