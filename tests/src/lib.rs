//! The integration tests of kafka-eos live in `tests/` of this package:
//! the producer and sink layers against real brokers started by the test
//! harness (`kafka-testcontainers`; the library crates do not depend on it),
//! and differential codec tests. `src/bin/` holds the child programs that
//! some of them spawn and kill.
