//! Consumer groups: membership under Kafka's group coordinator.
//!
//! [`membership`] is the KIP-848 member (`group.protocol=consumer`), a
//! sans-IO state machine; the broker computes the assignment.

pub mod membership;
