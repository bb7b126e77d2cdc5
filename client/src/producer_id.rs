//! A producer's identity on the broker: producer id and epoch.

/// A producer id and epoch; `NONE` is (-1, -1).
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

    /// True when a producer id is set (0 is a valid id).
    pub fn is_valid(&self) -> bool {
        self.producer_id >= 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_minus_one_and_invalid() {
        let none = ProducerIdAndEpoch::NONE;
        assert_eq!((none.producer_id, none.epoch), (-1, -1));
        assert!(!none.is_valid());
    }

    #[test]
    fn producer_id_zero_is_valid() {
        assert!(
            ProducerIdAndEpoch {
                producer_id: 0,
                epoch: 0
            }
            .is_valid()
        );
    }
}
