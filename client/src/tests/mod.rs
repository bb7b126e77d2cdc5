//! The client's drivers against a scripted peer (quinn's `src/tests/`):
//! connection-level tests, where writing the broker's frames by hand
//! (`internals::scripted_peer`) is the point of the test.

mod peer;
mod readme_recipes;
