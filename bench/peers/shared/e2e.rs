//! The end-to-end latency workloads of `bench/compare.sh` (`e2e-*`), shared
//! by the Rust benchmark programs (`bench/peers/ours`, `bench/peers/rdkafka`;
//! `bench/peers/franz-go` does the same in Go):
//!
//! - the **producer** (`--mode e2e-produce`) sends `--records` N records at
//!   a fixed `--rate` R per second: record i is scheduled at
//!   `t0 + i / R` (t0: the start of the timed loop, after the warm-up) and
//!   its value carries i and that scheduled time. A sender that falls
//!   behind sends every record that is due at once, with its scheduled time
//!   unchanged, so a stall shows as latency of the records it delayed
//!   instead of being hidden by a later schedule (no coordinated omission).
//!   The pacing runs on its own thread, sleeping until the next record is
//!   due ([`Pacer`]);
//! - the **reader** (`--mode e2e-read`, another process) records, for each
//!   record on arrival, now − its scheduled time (the wall clock of the one
//!   machine both run on) and which indexes it saw: records lost (never
//!   seen) and duplicated (seen twice) are counted, both must be 0
//!   ([`Recorder`]).
//!
//! Values: `e2e:`, the index (8 bytes, big-endian), the scheduled time in ns
//! since the Unix epoch (8 bytes, big-endian), then `a`..`z` filler up to
//! the workload's size. The topics also hold records that are not e2e
//! records and that every e2e program passes over: `ready` (one per
//! partition, written by `bench-topic create`) and `w` (the producer's
//! untimed warm-up record).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first bytes of every e2e value.
pub const MAGIC: &[u8; 4] = b"e2e:";

/// The wall clock in ns since the Unix epoch.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The value of record `index`, scheduled at `scheduled_ns`: `size` bytes
/// (at least 20).
pub fn encode(index: u64, scheduled_ns: u64, size: usize) -> Vec<u8> {
    let mut v: Vec<u8> = (0..size.max(20)).map(|i| b'a' + (i % 26) as u8).collect();
    v[..4].copy_from_slice(MAGIC);
    v[4..12].copy_from_slice(&index.to_be_bytes());
    v[12..20].copy_from_slice(&scheduled_ns.to_be_bytes());
    v
}

/// What a consumed value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// `ready` (written by `bench-topic create`, one per partition).
    Ready,
    /// `w`: a producer's untimed warm-up record.
    WarmUp,
    /// An e2e record.
    Record { index: u64, scheduled_ns: u64 },
}

/// Parses a consumed value; anything else than the three kinds is an error.
pub fn parse(value: Option<&[u8]>, size: usize) -> Result<Value, String> {
    match value {
        Some(b"ready") => Ok(Value::Ready),
        Some(b"w") => Ok(Value::WarmUp),
        Some(v) if v.len() == size.max(20) && v.starts_with(MAGIC) => Ok(Value::Record {
            index: u64::from_be_bytes(v[4..12].try_into().expect("8 bytes")),
            scheduled_ns: u64::from_be_bytes(v[12..20].try_into().expect("8 bytes")),
        }),
        Some(v) => Err(format!("an unexpected value of {} bytes", v.len())),
        None => Err("a record without a value".into()),
    }
}

/// The fixed schedule of the producer: `records` records at `rate` per
/// second from `t0_ns`.
pub struct Pacer {
    /// The scheduled time of record 0 (ns since the epoch).
    pub t0_ns: u64,
    /// Records per second.
    pub rate: u64,
    /// Records in all.
    pub records: u64,
    /// The next record to send.
    pub next: u64,
    /// The longest any batch of due records waited past its first record's
    /// scheduled time before being handed to the client (ns).
    pub lag_max_ns: u64,
}

impl Pacer {
    /// A schedule starting now.
    pub fn start(rate: u64, records: u64) -> Pacer {
        Pacer {
            t0_ns: now_ns(),
            rate,
            records,
            next: 0,
            lag_max_ns: 0,
        }
    }

    /// Record `i`'s scheduled time.
    pub fn scheduled_ns(&self, i: u64) -> u64 {
        self.t0_ns + (i as u128 * 1_000_000_000 / self.rate as u128) as u64
    }

    /// Sleeps until at least one record is due, then returns the range of
    /// records due now (empty once every record was handed out).
    pub fn due(&mut self) -> std::ops::Range<u64> {
        if self.next >= self.records {
            return self.next..self.next;
        }
        let first = self.scheduled_ns(self.next);
        let mut now = now_ns();
        if now < first {
            std::thread::sleep(Duration::from_nanos(first - now));
            now = now_ns();
        }
        self.lag_max_ns = self.lag_max_ns.max(now.saturating_sub(first));
        let elapsed = now.saturating_sub(self.t0_ns) as u128;
        let due = ((elapsed * self.rate as u128 / 1_000_000_000) as u64 + 1).min(self.records);
        let range = self.next..due.max(self.next + 1);
        self.next = range.end;
        range
    }
}

/// The reader's account of what arrived.
pub struct Recorder {
    /// Records expected (indexes 0..records).
    pub records: u64,
    /// One bit per index: seen.
    seen: Vec<u64>,
    /// Distinct indexes seen.
    pub distinct: u64,
    /// Records whose index was seen before.
    pub duplicates: u64,
    /// Latency of each first arrival, in µs.
    latencies_us: Vec<u32>,
    /// Partitions that delivered their `ready` record.
    ready: std::collections::BTreeSet<i32>,
}

impl Recorder {
    pub fn new(records: u64) -> Recorder {
        Recorder {
            records,
            seen: vec![0; records.div_ceil(64) as usize],
            distinct: 0,
            duplicates: 0,
            latencies_us: Vec::with_capacity(records as usize),
            ready: Default::default(),
        }
    }

    /// Accounts one consumed record of `partition` that arrived at `now`.
    pub fn record(
        &mut self,
        partition: i32,
        value: Option<&[u8]>,
        size: usize,
        now: u64,
    ) -> Result<(), String> {
        match parse(value, size)? {
            Value::Ready => {
                self.ready.insert(partition);
            }
            Value::WarmUp => {}
            Value::Record {
                index,
                scheduled_ns,
            } => {
                if index >= self.records {
                    return Err(format!("index {index} beyond the {} records", self.records));
                }
                let (word, bit) = ((index / 64) as usize, 1u64 << (index % 64));
                if self.seen[word] & bit != 0 {
                    self.duplicates += 1;
                } else {
                    self.seen[word] |= bit;
                    self.distinct += 1;
                    let us = now.saturating_sub(scheduled_ns) / 1000;
                    self.latencies_us.push(us.min(u32::MAX as u64) as u32);
                }
            }
        }
        Ok(())
    }

    /// How many partitions delivered their `ready` record.
    pub fn ready_partitions(&self) -> usize {
        self.ready.len()
    }

    /// Every record arrived.
    pub fn complete(&self) -> bool {
        self.distinct == self.records
    }

    /// The reader's result line (latencies in ms, nearest rank).
    pub fn result_line(&mut self, client: &str, settings: &str, secs: f64) -> String {
        self.latencies_us.sort_unstable();
        let n = self.latencies_us.len();
        let pct = |p: f64| -> String {
            if n == 0 {
                return "null".into();
            }
            let rank = ((n as f64 * p).ceil() as usize).clamp(1, n);
            format!("{:.3}", self.latencies_us[rank - 1] as f64 / 1e3)
        };
        format!(
            "{{\"client\":\"{client}\",\"mode\":\"e2e-read\",\"settings\":\"{settings}\",\
             \"records\":{},\"received\":{},\"lost\":{},\"duplicates\":{},\"p50_ms\":{},\
             \"p99_ms\":{},\"p999_ms\":{},\"max_ms\":{},\"secs\":{secs:.6}}}",
            self.records,
            self.distinct,
            self.records - self.distinct,
            self.duplicates,
            pct(0.5),
            pct(0.99),
            pct(0.999),
            pct(1.0),
        )
    }
}

/// The producer's result line: how far behind schedule it fell at most and
/// its commits (transactional variants).
pub fn producer_line(
    client: &str,
    settings: &str,
    records: u64,
    secs: f64,
    lag_max_ns: u64,
    commits: &[Duration],
) -> String {
    let commit_ms: Vec<String> = commits
        .iter()
        .map(|d| format!("{:.3}", d.as_secs_f64() * 1e3))
        .collect();
    format!(
        "{{\"client\":\"{client}\",\"mode\":\"e2e-produce\",\"settings\":\"{settings}\",\
         \"records\":{records},\"secs\":{secs:.6},\"lag_max_ms\":{:.3},\"commit_ms\":[{}]}}",
        lag_max_ns as f64 / 1e6,
        commit_ms.join(",")
    )
}

/// Creates `path` (the driver waits for it before the next step).
pub fn signal_ready(path: &str) -> Result<(), String> {
    std::fs::write(path, b"ready\n").map_err(|e| format!("writing the ready file {path}: {e}"))
}
