//! `auto.offset.reset`: the policy ([`AutoOffsetReset`], Java's
//! `AutoOffsetResetStrategy` with KIP-1106's `by_duration`), and applying it
//! to partitions without a position or whose position left the log.

use super::validate::Hold;
use super::{Key, Offset, Reader, ReaderError};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `auto.offset.reset`: where a partition goes when it has no position, or
/// when its position is no longer in the log (Fetch answered
/// OFFSET_OUT_OF_RANGE: retention or DeleteRecords moved the log start past
/// it, or it is beyond the end), or when the log it was read from was
/// truncated at an unknown point. Java's default, [`Self::Latest`], is
/// this client's default too.
///
/// ```
/// use kafka_consumer::AutoOffsetReset;
/// use std::time::Duration;
/// assert_eq!(AutoOffsetReset::parse("earliest"), Ok(AutoOffsetReset::Earliest));
/// assert_eq!(
///     AutoOffsetReset::parse("by_duration:PT1H30M"),
///     Ok(AutoOffsetReset::ByDuration(Duration::from_secs(5400)))
/// );
/// assert!(AutoOffsetReset::parse("by_duration:-PT1H").is_err());
/// assert_eq!(AutoOffsetReset::default(), AutoOffsetReset::Latest);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AutoOffsetReset {
    /// `earliest`: the log start offset.
    Earliest,
    /// `latest` (the default): the end — the high watermark, or under
    /// read_committed the last stable offset.
    #[default]
    Latest,
    /// `by_duration:<ISO-8601 duration>` (KIP-1106): the first offset whose
    /// timestamp is at or after now minus the duration; the end if none is.
    ByDuration(Duration),
    /// `none`: no reset; the reader fails with a typed error naming the
    /// partition and offsets, and the application seeks.
    None,
}

impl AutoOffsetReset {
    /// Parses Java's values: `earliest`, `latest`, `none` and
    /// `by_duration:PnDTnHnMn.nS` (ISO-8601, as Java's `Duration.parse`
    /// reads it; negative durations are refused). Case-insensitive.
    pub fn parse(value: &str) -> Result<Self, String> {
        let lower = value.trim().to_ascii_lowercase();
        match lower.as_str() {
            "earliest" => return Ok(Self::Earliest),
            "latest" => return Ok(Self::Latest),
            "none" => return Ok(Self::None),
            _ => {}
        }
        match lower.strip_prefix("by_duration:") {
            Some(d) => parse_iso_duration(d).map(Self::ByDuration),
            None => Err(
                "expected earliest, latest, none or by_duration:<ISO-8601 duration> (e.g. by_duration:PT1H)"
                    .into(),
            ),
        }
    }

    /// The seek this policy makes at `now`; `None` under [`Self::None`].
    pub fn offset_at(self, now: SystemTime) -> Option<Offset> {
        match self {
            Self::Earliest => Some(Offset::Earliest),
            Self::Latest => Some(Offset::Latest),
            Self::ByDuration(d) => {
                let now_ms = now
                    .duration_since(UNIX_EPOCH)
                    .map(|t| t.as_millis())
                    .unwrap_or(0);
                let ts = now_ms.saturating_sub(d.as_millis());
                Some(Offset::Timestamp(i64::try_from(ts).unwrap_or(i64::MAX)))
            }
            Self::None => None,
        }
    }
}

impl std::fmt::Display for AutoOffsetReset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Earliest => f.write_str("earliest"),
            Self::Latest => f.write_str("latest"),
            Self::ByDuration(d) => write!(f, "by_duration:PT{}S", d.as_secs_f64()),
            Self::None => f.write_str("none"),
        }
    }
}

/// `PnDTnHnMn.nS` without signs (Java's `Duration.parse` grammar; KIP-1106
/// refuses negative durations). At least one part is required.
fn parse_iso_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not an ISO-8601 duration such as P1D, PT1H30M or PT0.5S");
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.starts_with('-') || s.contains("-") {
        return Err(format!("{s:?}: a negative duration is not allowed"));
    }
    let rest = s.strip_prefix('p').ok_or_else(bad)?;
    let (date, time) = match rest.split_once('t') {
        Some((d, t)) if !t.is_empty() => (d, Some(t)),
        Some(_) => return Err(bad()),
        None => (rest, None),
    };
    let mut total = Duration::ZERO;
    let mut parts = 0;
    let mut add = |n: &str, unit_secs: u64| -> Result<(), String> {
        let v: u64 = n.parse().map_err(|_| bad())?;
        let d = Duration::from_secs(v.checked_mul(unit_secs).ok_or_else(bad)?);
        total = total.checked_add(d).ok_or_else(bad)?;
        parts += 1;
        Ok(())
    };
    if !date.is_empty() {
        let days = date.strip_suffix('d').ok_or_else(bad)?;
        add(days, 86_400)?;
    }
    if let Some(mut t) = time {
        for (unit, secs) in [('h', 3_600), ('m', 60)] {
            if let Some(i) = t.find(unit) {
                add(&t[..i], secs)?;
                t = &t[i + 1..];
            }
        }
        if !t.is_empty() {
            let secs = t.strip_suffix('s').ok_or_else(bad)?;
            let (whole, frac) = match secs.split_once(['.', ',']) {
                Some((w, f)) => (w, f),
                None => (secs, ""),
            };
            add(whole, 1)?;
            if !frac.is_empty() {
                if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let nanos: u32 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
                total = total
                    .checked_add(Duration::from_nanos(u64::from(nanos)))
                    .ok_or_else(bad)?;
            }
        }
    }
    if parts == 0 {
        return Err(bad());
    }
    Ok(total)
}

impl Reader {
    /// Gives every partition without a position one from
    /// `auto.offset.reset`, and moves every position held for a reset
    /// (OFFSET_OUT_OF_RANGE, or a truncation at an unknown point) the same
    /// way, logging each move at warn with both offsets and counting it.
    /// Under [`AutoOffsetReset::None`] the first such partition fails with
    /// [`ReaderError::NoPosition`] or [`ReaderError::OffsetOutOfRange`]
    /// (naming the log's current start and end when a ListOffsets finds
    /// them) and its position stays for the application to seek from.
    ///
    /// `reading_to_end`: the partitions a [`Reader::read_to_end`] reads. One
    /// of them whose position left the log goes on from the log's new start,
    /// whatever the policy: the read is of everything the log holds up to
    /// its end, and a jump to the latest offset would skip records still
    /// there.
    pub(super) async fn ensure_positions(
        &mut self,
        reading_to_end: Option<&BTreeSet<Key>>,
    ) -> Result<(), ReaderError> {
        // topic -> [(partition, the position that left the log, if any)]
        let mut need: BTreeMap<Arc<str>, Vec<(i32, Option<i64>)>> = BTreeMap::new();
        for (t, ps) in &self.assignment {
            for (p, st) in ps {
                match (st.position, st.hold) {
                    (None, _) => need.entry(t.clone()).or_default().push((*p, None)),
                    (Some(at), Some(Hold::Reset)) => {
                        need.entry(t.clone()).or_default().push((*p, Some(at)))
                    }
                    _ => {}
                }
            }
        }
        let configured = self.config.auto_offset_reset;
        for (topic, parts) in need {
            let (to_start, by_policy): (Vec<_>, Vec<_>) =
                parts.into_iter().partition(|(p, lost)| {
                    lost.is_some()
                        && reading_to_end.is_some_and(|k| k.contains(&(topic.clone(), *p)))
                });
            for (policy, parts) in [
                (AutoOffsetReset::Earliest, to_start),
                (configured, by_policy),
            ] {
                if !parts.is_empty() {
                    self.reset_positions(&topic, parts, policy).await?;
                }
            }
        }
        Ok(())
    }

    /// Moves `parts` of `topic` (each with the position that left the log,
    /// if any) where `policy` says; see [`Self::ensure_positions`].
    async fn reset_positions(
        &mut self,
        topic: &Arc<str>,
        parts: Vec<(i32, Option<i64>)>,
        policy: AutoOffsetReset,
    ) -> Result<(), ReaderError> {
        let Some(offset) = policy.offset_at(SystemTime::now()) else {
            let (partition, lost) = parts[0];
            return Err(match lost {
                None => ReaderError::NoPosition {
                    topic: topic.to_string(),
                    partition,
                },
                Some(offset) => {
                    // Fetched again (and failing again) until a seek.
                    self.state_mut(topic, partition)?.hold = None;
                    self.out_of_range_error(topic, partition, offset).await
                }
            });
        };
        let partitions: Vec<i32> = parts.iter().map(|(p, _)| *p).collect();
        let resolved = self.resolve(topic, &partitions, offset).await?;
        for (p, lost) in parts {
            let Some(&at) = resolved.get(&p) else {
                continue;
            };
            let state = self.state_mut(topic, p)?;
            state.seek_to(at);
            if let Some(old) = lost {
                self.metrics.offset_reset();
                tracing::warn!(
                    topic = %topic,
                    partition = p,
                    old_position = old,
                    new_position = at,
                    policy = %policy,
                    "reader: position out of range; moved by the policy"
                );
            }
        }
        Ok(())
    }

    /// [`ReaderError::OffsetOutOfRange`] for `offset`, with the log's start
    /// and end as ListOffsets reports them now (left out if it fails).
    async fn out_of_range_error(&self, topic: &str, partition: i32, offset: i64) -> ReaderError {
        let start = self
            .list_offsets(topic, &[partition], Offset::Earliest)
            .await
            .ok()
            .and_then(|l| l.get(&partition).and_then(|l| l.offset));
        let end = self
            .list_offsets(topic, &[partition], Offset::Latest)
            .await
            .ok()
            .and_then(|l| l.get(&partition).and_then(|l| l.offset));
        ReaderError::OffsetOutOfRange {
            topic: topic.to_string(),
            partition,
            offset,
            log_start_offset: start,
            end_offset: end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's four values and KIP-1106 durations parse; anything else is
    /// refused with what is expected.
    #[test]
    fn parses_java_values() {
        assert_eq!(
            AutoOffsetReset::parse("LATEST"),
            Ok(AutoOffsetReset::Latest)
        );
        assert_eq!(AutoOffsetReset::parse("none"), Ok(AutoOffsetReset::None));
        for (text, secs, nanos) in [
            ("by_duration:P1D", 86_400, 0),
            ("by_duration:PT1H", 3_600, 0),
            ("by_duration:PT90M", 5_400, 0),
            (
                "by_duration:P2DT3H4M5.5S",
                2 * 86_400 + 3 * 3_600 + 4 * 60 + 5,
                500_000_000,
            ),
            ("by_duration:PT0.001S", 0, 1_000_000),
            ("BY_DURATION:pt10s", 10, 0),
        ] {
            assert_eq!(
                AutoOffsetReset::parse(text),
                Ok(AutoOffsetReset::ByDuration(Duration::new(secs, nanos))),
                "{text}"
            );
        }
        for bad in [
            "smallest",
            "by_duration:",
            "by_duration:P",
            "by_duration:PT",
            "by_duration:1H",
            "by_duration:-PT1H",
            "by_duration:PT-1H",
            "by_duration:P1Y",
            "by_duration:PT1.0000000001S",
        ] {
            assert!(AutoOffsetReset::parse(bad).is_err(), "{bad}");
        }
    }

    /// `by_duration` seeks to the timestamp now minus the duration; `none`
    /// seeks nowhere.
    #[test]
    fn by_duration_is_a_timestamp_lookup() {
        let now = UNIX_EPOCH + Duration::from_secs(10_000);
        assert_eq!(
            AutoOffsetReset::ByDuration(Duration::from_secs(600)).offset_at(now),
            Some(Offset::Timestamp(9_400_000))
        );
        assert_eq!(
            AutoOffsetReset::Earliest.offset_at(now),
            Some(Offset::Earliest)
        );
        assert_eq!(AutoOffsetReset::None.offset_at(now), None);
    }
}
