//! `Partitioner::partition` is on the send hot path: once a topic has been
//! seen, neither it nor `on_new_batch` may allocate. Checked with a counting
//! global allocator (per thread, so the test harness's own threads do not
//! interfere).
#![allow(unsafe_code)] // the GlobalAlloc impl below; the library forbids unsafe

use kafka_producer::partitioner::{
    DefaultPartitioner, FixedPartitioner, KeyHashPartitioner, Partitioner, RoundRobinPartitioner,
    StickyPartitioner,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the counter
// is a const-initialised thread-local without destructor, safe to touch here.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

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
