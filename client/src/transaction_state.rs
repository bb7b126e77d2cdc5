//! The state of a transaction as its coordinator reports it.

/// The state of a transaction as its coordinator reports it
/// (DescribeTransactions, ListTransactions; the broker's `TransactionState`,
/// Java's admin `TransactionState`) — not the producer's own transaction state. A state
/// name this client does not know (from a newer broker) is kept in
/// [`TransactionState::Unknown`].
///
/// ```
/// use kafka_client::TransactionState;
/// let s = TransactionState::parse("PrepareCommit");
/// assert_eq!(s, TransactionState::PrepareCommit);
/// assert_eq!(s.to_string(), "PrepareCommit");
/// assert!(s.is_committing());
/// let newer = TransactionState::parse("SomethingNew");
/// assert_eq!(newer, TransactionState::Unknown("SomethingNew".into()));
/// assert_eq!(newer.as_str(), "SomethingNew");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransactionState {
    /// No transaction open (after init, or after the previous one completed
    /// and its markers were written long ago).
    Empty,
    /// A transaction is open.
    Ongoing,
    /// EndTxn(commit) accepted; markers being written.
    PrepareCommit,
    /// EndTxn(abort) accepted (or a timeout abort); markers being written.
    PrepareAbort,
    /// The last transaction committed.
    CompleteCommit,
    /// The last transaction aborted.
    CompleteAbort,
    /// The transactional id expired and is being removed.
    Dead,
    /// The coordinator is fencing the epoch (a timed-out TV1 transaction).
    PrepareEpochFence,
    /// A state name this client does not know, kept as sent.
    Unknown(String),
}

impl TransactionState {
    /// The state named `name` (the wire string, exact case).
    ///
    /// ```
    /// use kafka_client::TransactionState;
    /// assert_eq!(TransactionState::parse("Ongoing"), TransactionState::Ongoing);
    /// ```
    pub fn parse(name: &str) -> Self {
        match name {
            "Empty" => TransactionState::Empty,
            "Ongoing" => TransactionState::Ongoing,
            "PrepareCommit" => TransactionState::PrepareCommit,
            "PrepareAbort" => TransactionState::PrepareAbort,
            "CompleteCommit" => TransactionState::CompleteCommit,
            "CompleteAbort" => TransactionState::CompleteAbort,
            "Dead" => TransactionState::Dead,
            "PrepareEpochFence" => TransactionState::PrepareEpochFence,
            other => TransactionState::Unknown(other.to_string()),
        }
    }

    /// The wire name.
    ///
    /// ```
    /// use kafka_client::TransactionState;
    /// assert_eq!(TransactionState::CompleteAbort.as_str(), "CompleteAbort");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            TransactionState::Empty => "Empty",
            TransactionState::Ongoing => "Ongoing",
            TransactionState::PrepareCommit => "PrepareCommit",
            TransactionState::PrepareAbort => "PrepareAbort",
            TransactionState::CompleteCommit => "CompleteCommit",
            TransactionState::CompleteAbort => "CompleteAbort",
            TransactionState::Dead => "Dead",
            TransactionState::PrepareEpochFence => "PrepareEpochFence",
            TransactionState::Unknown(s) => s,
        }
    }

    /// True when the coordinator committed or is committing
    /// (`PrepareCommit`, `CompleteCommit`).
    ///
    /// ```
    /// use kafka_client::TransactionState;
    /// assert!(TransactionState::CompleteCommit.is_committing());
    /// assert!(!TransactionState::Ongoing.is_committing());
    /// ```
    pub fn is_committing(&self) -> bool {
        matches!(
            self,
            TransactionState::PrepareCommit | TransactionState::CompleteCommit
        )
    }

    /// True when the coordinator aborted or is aborting (`PrepareAbort`,
    /// `CompleteAbort`).
    ///
    /// ```
    /// use kafka_client::TransactionState;
    /// assert!(TransactionState::PrepareAbort.is_aborting());
    /// assert!(!TransactionState::PrepareEpochFence.is_aborting());
    /// ```
    pub fn is_aborting(&self) -> bool {
        matches!(
            self,
            TransactionState::PrepareAbort | TransactionState::CompleteAbort
        )
    }
}

impl std::fmt::Display for TransactionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
