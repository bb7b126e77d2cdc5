//! The exactly-once checkers' mock mode drives kafka-mock's seeded
//! [`Nemesis`] (its module docs list the fault kinds) from the schedule's
//! [`Control`]: the schedule's topics, transactional id and group become
//! its targets once known, and the schedule's request to heal stops it.

use super::nemesis::Control;
use kafka_mock::{MockCluster, Nemesis, NemesisConfig, NemesisFault, NemesisTargets};
use std::collections::BTreeMap;
use std::time::Duration;

/// Faults injected, by kind.
pub type MockFaultCounts = BTreeMap<NemesisFault, u64>;

/// Runs seeded faults on `mock` until [`Control::heal`] is called, then
/// heals everything (queued faults dropped, brokers restarted and
/// reachable) and marks the control healed.
pub async fn run(
    mock: &MockCluster,
    control: &Control,
    seed: u64,
    request_timeout: Duration,
) -> MockFaultCounts {
    let nemesis = Nemesis::new(NemesisConfig {
        seed,
        request_timeout,
        ..NemesisConfig::default()
    });
    let forward = async {
        let mut aimed = false;
        loop {
            let changes = control.changes();
            tokio::pin!(changes);
            changes.as_mut().enable();
            if !aimed && let Some(t) = control.targets() {
                nemesis.set_targets(NemesisTargets {
                    topics: t.topics,
                    transactional_ids: vec![t.transactional_id],
                    groups: t.group.into_iter().collect(),
                });
                aimed = true;
            }
            if control.stop_requested() {
                nemesis.stop();
                return;
            }
            changes.await;
        }
    };
    let (report, ()) = tokio::join!(nemesis.run(mock), forward);
    control.mark_healed();
    report.counts
}
