//! A scripted in-memory transactional store (not a mock of Kafka): it keeps
//! every transaction's status and rows, exposes what a read-committed reader
//! would see, and fails operations when a test scripts it.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use kafka_sink::StateSerializer;
use kafka_sink::codec::{Codec, StateDecodeError, StateReader, U64Codec, put_u32, put_u64};
use kafka_sink::{CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitHandler};

/// Status of one store transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Prepared,
    Committed,
    Aborted,
}

#[derive(Debug)]
pub struct TxnRecord {
    pub status: Status,
    pub rows: Vec<String>,
}

#[derive(Debug, Default)]
pub struct StoreInner {
    next_id: u64,
    pub txns: BTreeMap<u64, TxnRecord>,
    /// Rows visible to a read-committed reader, in commit order.
    pub committed: Vec<String>,
    /// Operation log: "begin 1", "commit 1", "abort 2", "finish [1, 2]".
    pub log: Vec<String>,
    /// Txn id → number of upcoming commit calls that fail.
    pub fail_commit: HashMap<u64, usize>,
    /// Number of upcoming pre-commits that fail.
    pub fail_pre_commit: usize,
}

/// Shared handle to the store (clones see the same data: the "external
/// system" survives the crash of a sink).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore(Arc<Mutex<StoreInner>>);

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn inner(&self) -> MutexGuard<'_, StoreInner> {
        self.0.lock().unwrap()
    }
    pub fn committed(&self) -> Vec<String> {
        self.inner().committed.clone()
    }
    pub fn status(&self, id: u64) -> Option<Status> {
        self.inner().txns.get(&id).map(|t| t.status)
    }
    pub fn log(&self) -> Vec<String> {
        self.inner().log.clone()
    }
    /// Ids of transactions still open or prepared (lingering).
    pub fn unfinished(&self) -> Vec<u64> {
        self.inner()
            .txns
            .iter()
            .filter(|(_, t)| matches!(t.status, Status::Open | Status::Prepared))
            .map(|(id, _)| *id)
            .collect()
    }
    pub fn fail_next_commit_of(&self, id: u64, times: usize) {
        self.inner().fail_commit.insert(id, times);
    }
    pub fn fail_next_pre_commit(&self) {
        self.inner().fail_pre_commit += 1;
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    Scripted(&'static str, u64),
    Invalid(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Scripted(op, id) => write!(f, "scripted {op} failure of txn {id}"),
            StoreError::Invalid(s) => write!(f, "invalid: {s}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// The user context: ids of the store transactions this sink owns.
pub type Owned = BTreeSet<u64>;

/// The handler: writes strings into store transactions.
#[derive(Debug, Clone)]
pub struct StoreSink {
    pub store: MemoryStore,
}

impl StoreSink {
    pub fn new(store: &MemoryStore) -> Self {
        StoreSink {
            store: store.clone(),
        }
    }
}

impl TwoPhaseCommitHandler for StoreSink {
    type Value = String;
    type Txn = u64;
    type Ctx = Owned;
    type Error = StoreError;

    async fn begin_transaction(&mut self, ctx: &mut Owned) -> Result<u64, StoreError> {
        let mut s = self.store.inner();
        s.next_id += 1;
        let id = s.next_id;
        s.txns.insert(
            id,
            TxnRecord {
                status: Status::Open,
                rows: Vec::new(),
            },
        );
        s.log.push(format!("begin {id}"));
        ctx.insert(id);
        Ok(id)
    }

    async fn invoke(
        &mut self,
        txn: &mut u64,
        value: String,
        _context: &RecordContext,
    ) -> Result<(), StoreError> {
        let mut s = self.store.inner();
        let t = s.txns.get_mut(txn).unwrap();
        if t.status != Status::Open {
            return Err(StoreError::Invalid(format!(
                "write to {txn} in {:?}",
                t.status
            )));
        }
        t.rows.push(value);
        Ok(())
    }

    async fn pre_commit(&mut self, txn: &mut u64) -> Result<(), StoreError> {
        let mut s = self.store.inner();
        if s.fail_pre_commit > 0 {
            s.fail_pre_commit -= 1;
            return Err(StoreError::Scripted("pre-commit", *txn));
        }
        s.txns.get_mut(txn).unwrap().status = Status::Prepared;
        s.log.push(format!("pre-commit {txn}"));
        Ok(())
    }

    async fn commit(
        &mut self,
        txn: PreCommitted<u64>,
        ctx: &mut Owned,
    ) -> Result<CommitOutcome, StoreError> {
        let id = *txn.handle();
        let mut s = self.store.inner();
        if let Some(n) = s.fail_commit.get_mut(&id)
            && *n > 0
        {
            *n -= 1;
            s.log.push(format!("commit-failed {id}"));
            return Err(StoreError::Scripted("commit", id));
        }
        s.log.push(format!("commit {id}"));
        let t = s.txns.get_mut(&id).unwrap();
        let outcome = match t.status {
            Status::Prepared => {
                t.status = Status::Committed;
                let rows = t.rows.clone();
                s.committed.extend(rows);
                CommitOutcome::Committed
            }
            Status::Committed => CommitOutcome::AlreadyCommitted,
            Status::Aborted => CommitOutcome::Lost {
                reason: "the store aborted the transaction".into(),
            },
            Status::Open => return Err(StoreError::Invalid(format!("commit of open txn {id}"))),
        };
        ctx.remove(&id);
        Ok(outcome)
    }

    async fn abort(&mut self, txn: u64, ctx: &mut Owned) -> Result<(), StoreError> {
        let mut s = self.store.inner();
        s.log.push(format!("abort {txn}"));
        let t = s.txns.get_mut(&txn).unwrap();
        match t.status {
            // A prepared transaction may be aborted too (a failover aborts
            // the transactions of checkpoints that never completed).
            Status::Open | Status::Prepared | Status::Aborted => t.status = Status::Aborted,
            other => return Err(StoreError::Invalid(format!("abort of {other:?} txn {txn}"))),
        }
        ctx.remove(&txn);
        Ok(())
    }

    async fn initialize_user_context(&mut self) -> Result<Owned, StoreError> {
        self.store.inner().log.push("init-context".into());
        Ok(Owned::new())
    }

    /// Like FlinkKafkaProducer (FLINK-13535): abort every owned transaction
    /// that recovery did not handle.
    async fn finish_recovering_and_committing(
        &mut self,
        ctx: &mut Owned,
        handled: &[u64],
    ) -> Result<(), StoreError> {
        let mut s = self.store.inner();
        s.log.push(format!("finish {handled:?}"));
        for id in ctx.iter() {
            if !handled.contains(id)
                && let Some(t) = s.txns.get_mut(id)
                && t.status == Status::Open
            {
                t.status = Status::Aborted;
            }
        }
        ctx.retain(|id| !handled.contains(id));
        Ok(())
    }
}

/// Codec of the owned-id set: u32 count, then u64 ids.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnedCodec;

impl Codec<Owned> for OwnedCodec {
    fn encode(&self, value: &Owned, out: &mut Vec<u8>) {
        put_u32(out, value.len() as u32);
        for id in value {
            put_u64(out, *id);
        }
    }
    fn decode(&self, bytes: &[u8]) -> Result<Owned, StateDecodeError> {
        let mut r = StateReader::new(bytes);
        let n = r.u32()?;
        let mut set = Owned::new();
        for _ in 0..n {
            set.insert(r.u64()?);
        }
        r.finish()?;
        Ok(set)
    }
}

pub fn serializer() -> StateSerializer<U64Codec, OwnedCodec> {
    StateSerializer::new(U64Codec, OwnedCodec)
}
