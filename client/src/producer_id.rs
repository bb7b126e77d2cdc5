//! A producer's identity on the broker: producer id and epoch.

/// A producer id and epoch; `NONE` is (-1, -1).
///
/// ```
/// use kafka_client::ProducerIdAndEpoch;
/// let p = ProducerIdAndEpoch { producer_id: 4001, epoch: 3 };
/// assert!(p.is_valid());
/// assert_eq!((ProducerIdAndEpoch::NONE.producer_id, ProducerIdAndEpoch::NONE.epoch), (-1, -1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProducerIdAndEpoch {
    /// Producer id.
    pub producer_id: i64,
    /// Epoch.
    pub epoch: i16,
}

impl ProducerIdAndEpoch {
    /// No producer id.
    pub const NONE: Self = Self {
        producer_id: -1,
        epoch: -1,
    };

    /// True when a producer id is set.
    ///
    /// ```
    /// use kafka_client::ProducerIdAndEpoch;
    /// assert!(ProducerIdAndEpoch { producer_id: 0, epoch: 0 }.is_valid());
    /// assert!(!ProducerIdAndEpoch::NONE.is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        self.producer_id >= 0
    }
}
