//! The two sans-IO state machines of a group member, one per group
//! protocol; the group driver (the background task of a
//! [`GroupConsumer`](super::GroupConsumer)) runs the one in use:
//!
//! 1. [`kip848`]: `group.protocol=consumer` (KIP-848): the broker computes
//!    the assignment; the member heartbeats, reconciles and acknowledges.
//! 2. [`classic`]: `group.protocol=classic`: JoinGroup and SyncGroup, the
//!    group leader running a client-side
//!    [`Assignor`](classic::assignor::Assignor).
//!
//! Both take answers, application confirmations and time in, and give
//! requests to send and actions for the application out.
//!
//! ```
//! use kafka_consumer::internals::classic::{ClassicConfig, ClassicMember, ClassicState};
//! use kafka_consumer::internals::kip848::{MemberState, Kip848Member, Kip848Config};
//!
//! let kip848 = Kip848Member::new(Kip848Config::new("orders-app", "member-1"));
//! let classic = ClassicMember::new(ClassicConfig::new("orders-app"));
//! assert_eq!(kip848.state(), MemberState::Unsubscribed);
//! assert_eq!(classic.state(), ClassicState::Unsubscribed);
//! ```

pub mod classic;
pub mod kip848;
