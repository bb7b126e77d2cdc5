//! The state of a transaction as its coordinator reports it.

/// The state of a transaction as its coordinator reports it
/// (DescribeTransactions, ListTransactions; the broker's `TransactionState`,
/// Java's admin `TransactionState`) — not the producer's own transaction state. A state
/// name this client does not know (from a newer broker) is kept in
/// [`TransactionState::Unknown`].
///
/// Deciding what a described transaction's outcome is:
///
/// ```
/// use kafka_client::TransactionState;
/// fn outcome(wire_name: &str) -> &'static str {
///     match TransactionState::parse(wire_name) {
///         s if s.is_committing() => "committed",
///         s if s.is_aborting() => "aborted",
///         TransactionState::Ongoing => "open",
///         _ => "none or unknown",
///     }
/// }
/// assert_eq!(outcome("PrepareCommit"), "committed");
/// assert_eq!(outcome("SomethingNew"), "none or unknown");
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
    pub fn is_committing(&self) -> bool {
        matches!(
            self,
            TransactionState::PrepareCommit | TransactionState::CompleteCommit
        )
    }

    /// True when the coordinator aborted or is aborting (`PrepareAbort`,
    /// `CompleteAbort`).
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

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [TransactionState; 8] = [
        TransactionState::Empty,
        TransactionState::Ongoing,
        TransactionState::PrepareCommit,
        TransactionState::PrepareAbort,
        TransactionState::CompleteCommit,
        TransactionState::CompleteAbort,
        TransactionState::Dead,
        TransactionState::PrepareEpochFence,
    ];

    #[test]
    fn every_known_state_round_trips_through_its_wire_name() {
        for s in KNOWN {
            assert_eq!(TransactionState::parse(s.as_str()), s);
            assert_eq!(s.to_string(), s.as_str());
        }
        assert_eq!(TransactionState::PrepareCommit.as_str(), "PrepareCommit");
    }

    #[test]
    fn unknown_name_is_kept_as_sent() {
        let newer = TransactionState::parse("SomethingNew");
        assert_eq!(newer, TransactionState::Unknown("SomethingNew".into()));
        assert_eq!(newer.as_str(), "SomethingNew");
    }

    /// Asserts `pred` holds for the known states in `holders` and no other.
    fn holds_for_exactly(pred: fn(&TransactionState) -> bool, holders: &[TransactionState]) {
        for s in KNOWN {
            assert_eq!(pred(&s), holders.contains(&s), "{s}");
        }
    }

    #[test]
    fn committing_is_prepare_and_complete_commit_only() {
        holds_for_exactly(
            TransactionState::is_committing,
            &[
                TransactionState::PrepareCommit,
                TransactionState::CompleteCommit,
            ],
        );
    }

    #[test]
    fn aborting_is_prepare_and_complete_abort_only() {
        holds_for_exactly(
            TransactionState::is_aborting,
            &[
                TransactionState::PrepareAbort,
                TransactionState::CompleteAbort,
            ],
        );
    }
}
