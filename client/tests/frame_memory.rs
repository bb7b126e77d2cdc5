//! A peer that announces a huge response frame and then sends little: the
//! connection's memory must follow the bytes that actually arrive, never the
//! length the peer claims.
//!
//! Invariant: while a peer announces a 100,000,000-byte frame (just under the
//! 100 MiB limit) and sends 256 KiB of it before closing, the client's live
//! heap never grows by more than a few MiB, and the connection attempt ends
//! with a typed error once the peer closes. Checked with a global allocator
//! that tracks live bytes and their peak.
#![allow(unsafe_code)] // the GlobalAlloc impl below; the library forbids unsafe

use kafka_client::{Connection, ConnectionConfig};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct TrackingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards every call to the system allocator unchanged and only
// updates two atomics.
unsafe impl GlobalAlloc for TrackingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: TrackingAlloc = TrackingAlloc;

const ANNOUNCED: i32 = 100_000_000;
const SENT: usize = 256 * 1024;

/// Answers the first request with a frame header announcing `ANNOUNCED`
/// bytes, its correlation id, then `SENT` bytes of filler in 1 KiB writes,
/// then closes.
async fn hostile_peer(listener: tokio::net::TcpListener) {
    let (mut s, _) = listener.accept().await.unwrap();
    let len = s.read_i32().await.unwrap();
    let mut request = vec![0u8; len as usize];
    s.read_exact(&mut request).await.unwrap();
    let correlation_id = &request[4..8];
    s.write_all(&ANNOUNCED.to_be_bytes()).await.unwrap();
    s.write_all(correlation_id).await.unwrap();
    let filler = [0u8; 1024];
    for _ in 0..SENT / filler.len() {
        s.write_all(&filler).await.unwrap();
    }
    s.flush().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn an_announced_huge_frame_costs_only_the_bytes_received() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let peer = tokio::spawn(hostile_peer(listener));
    let config = ConnectionConfig {
        connect_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);

    let result = Connection::connect(&addr, &config).await;
    let grown = PEAK.load(Ordering::Relaxed) - before;
    peer.await.unwrap();

    let err = result.expect_err("the frame never completes");
    eprintln!("connect failed as expected: {err}; peak heap growth {grown} bytes");
    assert!(
        grown < 4 * 1024 * 1024,
        "announced {ANNOUNCED} bytes, sent {SENT}: the heap grew by {grown} bytes"
    );
}
