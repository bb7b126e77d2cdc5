//! Consumer groups: membership under Kafka's group coordinator, which splits
//! the partitions of the subscribed topics between the members (no
//! coordinator of ours).

//!
//! Under it run two sans-IO state machines, private to the crate (the
//! `internals` cargo feature opens them to kafka-eos's own tests): the
//! classic member (`group.protocol=classic`, JoinGroup / SyncGroup; the
//! group leader runs a client-side [`Assignor`]) and the KIP-848 member
//! (`group.protocol=consumer`; the broker computes the assignment), and the
//! ordered commit queue behind [`PendingCommit`].

mod buffer;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub mod commit;
mod config;
mod consumer;
mod driver;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub mod member;
mod stream;
mod subscription;

pub use commit::PendingCommit;
pub use config::{GroupConsumerConfig, GroupProtocol};
pub use consumer::{ConsumerEvent, GroupConsumer, GroupError};
pub use member::classic::assignor::Assignor;
pub use member::kip848::{MemberError, MemberState};
pub use stream::EventStream;
pub use subscription::Subscription;
