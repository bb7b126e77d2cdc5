//! `Partitioner::partition` is on the send hot path: once a topic has been
//! seen, neither it nor `on_new_batch` may allocate. Checked with a counting
//! global allocator (per thread, so the test harness's own threads do not
//! interfere).

use kafka_producer::partitioner::{
    DefaultPartitioner, FixedPartitioner, KeyHashPartitioner, Partitioner, RoundRobinPartitioner,
    StickyPartitioner,
};
use std::sync::Arc;

mod counting_alloc;
use counting_alloc::allocations;

#[test]
fn partition_and_on_new_batch_do_not_allocate_once_a_topic_is_known() {
    let partitioners: Vec<Arc<dyn Partitioner>> = vec![
        Arc::new(DefaultPartitioner::new()),
        Arc::new(KeyHashPartitioner::new()),
        Arc::new(StickyPartitioner::new()),
        Arc::new(RoundRobinPartitioner::new()),
        Arc::new(FixedPartitioner::new(3)),
    ];
    let topics = ["orders", "payments", "audit-log"];
    let key = b"customer-42".to_vec();
    // Warm-up: the first record of each topic creates its entry, and the
    // first random choice initialises this thread's RNG.
    for p in &partitioners {
        for t in topics {
            let q = p.partition(t, None, None, 12);
            p.on_new_batch(t, 12, q);
        }
    }
    let before = allocations();
    let mut checksum = 0i64;
    for round in 0..20_000 {
        for p in &partitioners {
            let t = topics[round % topics.len()];
            checksum += i64::from(p.partition(t, Some(&key), Some(b"v"), 12));
            let q = p.partition(t, None, None, 12);
            checksum += i64::from(q);
            if round % 7 == 0 {
                p.on_new_batch(t, 12, q);
            }
        }
    }
    let after = allocations();
    assert!(checksum > 0);
    assert_eq!(after - before, 0, "allocations on the partition hot path");
}
