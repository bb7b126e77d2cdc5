//! The README's "Connecting to managed Kafka" recipes given to the command
//! line as `-X KEY=VALUE` arguments: each parses through clap and then
//! through the producer and group consumer configurations every command
//! builds, without connecting. The recipes are read from the README's
//! ```` ```properties recipe-NAME ```` blocks, so they cannot drift.

use crate::args::Cli;
use crate::common::Globals;
use clap::Parser;

/// The README, as the repository holds it.
const README: &str = include_str!("../../README.md");

/// The key store fixtures of the client crate (the recipes' `/path/to/`).
const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../client/src/connection/fixtures/"
);

/// The `-X` arguments of each recipe block: (name, `KEY=VALUE` lines).
fn recipes() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = README.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim().strip_prefix("```properties") else {
            continue;
        };
        let Some(name) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("recipe-"))
        else {
            continue;
        };
        let args = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                l.replace("/path/to/", FIXTURES)
                    .replace("<KEYSTORE_PASSWORD>", "store-secret")
            })
            .collect();
        out.push((name.to_string(), args));
    }
    out
}

/// Invariant: every recipe, as `-X` arguments of a command, gives a
/// producer and a group consumer configuration (no key refused), with the
/// recipe's mechanism.
#[test]
fn readme_recipes_are_accepted_as_x_arguments() {
    let found = recipes();
    assert_eq!(found.len(), 12, "the README's recipes");
    for (name, lines) in found {
        let mut argv = vec!["kafka-eos".to_string()];
        for l in &lines {
            argv.push("-X".into());
            argv.push(l.clone());
        }
        argv.extend(["topic".into(), "list".into()]);
        let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("recipe {name}: {e}"));
        let globals = Globals::from_cli(&cli).unwrap_or_else(|e| panic!("recipe {name}: {e:?}"));
        let (consumer, producer, ()) = globals
            .group_configs(&[("group.id", "recipes")], &[], |_| Ok(()))
            .unwrap_or_else(|e| panic!("recipe {name}: {}", e.message));
        let mechanism = lines.iter().find_map(|l| l.strip_prefix("sasl.mechanism="));
        assert_eq!(
            producer
                .connection_config()
                .sasl
                .map(|s| s.mechanism_name()),
            mechanism,
            "{name}"
        );
        assert_eq!(
            consumer.connection.security_protocol, producer.security_protocol,
            "{name}"
        );
    }
}
