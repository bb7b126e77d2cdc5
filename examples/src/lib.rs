#![doc = include_str!("../../README.md")]
//!
//! ---
//!
//! This crate (`kafka-eos-examples`, not published) holds the runnable
//! programs of `examples/` and the helpers they share ([`support`]); its
//! documentation is the workspace README, so the README's Rust snippets are
//! compiled as doctests (`cargo test -p kafka-eos-examples --doc`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod support;
