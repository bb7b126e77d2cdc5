//! Integration tests of kafka-eos against real brokers live in `tests/tests/`.
