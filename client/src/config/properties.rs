//! [`Properties`]: the bag of `key=value` settings every client's
//! configuration takes its keys from.

use super::{ConfigError, Secret};
use std::ops::RangeInclusive;
use std::time::Duration;

/// Settings under the Java clients' property names, read by each
/// configuration in turn; [`Self::finish`] refuses the keys nobody read.
///
/// Each configuration reads the keys it knows (`ClientConfig::take_from`,
/// the producer's and the consumers' `take_from`); several may read the
/// same key (every client reads `bootstrap.servers`). After the last one,
/// [`Properties::finish`] refuses the first key nobody read, so that no
/// setting is silently ignored. A value parses as Java's `ConfigDef`
/// parses it: values are trimmed, booleans ignore case, numbers are
/// checked against a range, lists are comma-separated. Every error is a
/// [`ConfigError`] naming the key, and a range error reads the same from
/// every client. A key given twice takes its last value (as a later line
/// of a Java properties file, or a later `-X` on a command line).
///
/// ```
/// use kafka_client::{ClientConfig, Properties};
/// let mut props = Properties::new([
///     ("bootstrap.servers", "broker-1:9092"),
///     ("enable.auto.commit", "TRUE"),
///     ("lingr.ms", "5"),
/// ]);
/// let client = ClientConfig::take_from(&mut props).unwrap();
/// assert_eq!(client.bootstrap_servers, ["broker-1:9092"]);
/// // A consumer would read its own key; here, nobody else reads any.
/// assert_eq!(props.bool("enable.auto.commit").unwrap(), Some(true));
/// assert_eq!(props.finish().unwrap_err().key(), "lingr.ms", "the typo is reported");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Properties {
    entries: Vec<Entry>,
}

#[derive(Clone)]
struct Entry {
    key: String,
    value: String,
    used: bool,
}

impl std::fmt::Debug for Entry {
    /// The keys and whether they were read; never the values (passwords).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.key, if self.used { " (read)" } else { "" })
    }
}

impl Properties {
    /// A bag of these settings, keys and values trimmed, none read yet.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// let mut props = Properties::new([("linger.ms", " 5 "), ("linger.ms", "10")]);
    /// // The last value of a key wins, as in a Java properties file.
    /// assert_eq!(props.long("linger.ms", 0..=i64::MAX).unwrap(), Some(10));
    /// props.finish().unwrap(); // every key was read
    /// ```
    pub fn new<I, K, V>(props: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut bag = Self::default();
        for (k, v) in props {
            bag.insert(k.as_ref(), v.as_ref());
        }
        bag
    }

    /// Adds a setting after the others: it overrides an earlier value of
    /// the same key.
    pub fn insert(&mut self, key: &str, value: &str) {
        self.entries.push(Entry {
            key: key.trim().to_string(),
            value: value.trim().to_string(),
            used: false,
        });
    }

    /// The keys, in the order given (each once per time given).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }

    /// The last value of `key`, marking the key read.
    fn take(&mut self, key: &str) -> Option<&str> {
        let mut last = None;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.key == key {
                e.used = true;
                last = Some(i);
            }
        }
        last.map(|i| self.entries[i].value.as_str())
    }

    /// `key` as a string, as given.
    pub fn string(&mut self, key: &str) -> Option<String> {
        self.take(key).map(str::to_string)
    }

    /// `key` as a string that must not be empty (an id).
    pub fn non_empty(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.take(key) {
            Some("") => Err(ConfigError::invalid_value(key, "", "must not be empty")),
            v => Ok(v.map(str::to_string)),
        }
    }

    /// `key` as a secret (a password): never printed.
    pub fn password(&mut self, key: &str) -> Option<Secret> {
        self.take(key).map(Secret::from)
    }

    /// `key` as a boolean: `true` or `false` in any case, as Java's
    /// `ConfigDef` compares them.
    pub fn bool(&mut self, key: &str) -> Result<Option<bool>, ConfigError> {
        self.take(key)
            .map(|v| {
                if v.eq_ignore_ascii_case("true") {
                    Ok(true)
                } else if v.eq_ignore_ascii_case("false") {
                    Ok(false)
                } else {
                    Err(ConfigError::invalid_value(key, v, "expected true or false"))
                }
            })
            .transpose()
    }

    /// `key` as a 32-bit integer (Java's `INT`) within `range`.
    pub fn int(
        &mut self,
        key: &str,
        range: RangeInclusive<i32>,
    ) -> Result<Option<i32>, ConfigError> {
        let range = i64::from(*range.start())..=i64::from(*range.end());
        Ok(self.long(key, range)?.map(|v| v as i32))
    }

    /// `key` as a 64-bit integer (Java's `LONG`) within `range`.
    pub fn long(
        &mut self,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<Option<i64>, ConfigError> {
        self.take(key).map(|v| in_range(key, v, &range)).transpose()
    }

    /// `key` as a size in bytes within `range`.
    pub fn bytes(
        &mut self,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<Option<usize>, ConfigError> {
        self.take(key)
            .map(|v| {
                let n = in_range(key, v, &range)?;
                usize::try_from(n)
                    .map_err(|_| ConfigError::invalid_value(key, v, "too large for this platform"))
            })
            .transpose()
    }

    /// `key` (a `*.ms` property) as a duration of milliseconds within
    /// `range` (in milliseconds; durations are never negative).
    pub fn millis(
        &mut self,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<Option<Duration>, ConfigError> {
        let range = (*range.start()).max(0)..=*range.end();
        Ok(self
            .long(key, range)?
            .map(|ms| Duration::from_millis(ms as u64)))
    }

    /// `key` as a comma-separated list, each item trimmed, empty items
    /// dropped.
    pub fn list(&mut self, key: &str) -> Option<Vec<String>> {
        self.take(key).map(split_list)
    }

    /// `key` as one of `choices` (names compared exactly, as Java's
    /// `ValidString`); the error lists the names.
    pub fn one_of<T: Copy>(
        &mut self,
        key: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, ConfigError> {
        self.choose(key, choices, false)
    }

    /// [`Self::one_of`] with names compared ignoring case (Java's
    /// `CaseInsensitiveValidString`).
    pub fn one_of_ignoring_case<T: Copy>(
        &mut self,
        key: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, ConfigError> {
        self.choose(key, choices, true)
    }

    fn choose<T: Copy>(
        &mut self,
        key: &str,
        choices: &[(&str, T)],
        ignore_case: bool,
    ) -> Result<Option<T>, ConfigError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let found = choices.iter().find(|(name, _)| {
            if ignore_case {
                name.eq_ignore_ascii_case(v)
            } else {
                *name == v
            }
        });
        match found {
            Some((_, t)) => Ok(Some(*t)),
            None => {
                let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                let expected = match names.split_last() {
                    Some((last, [])) => last.to_string(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => String::new(),
                };
                Err(ConfigError::invalid_value(
                    key,
                    v,
                    &format!("expected {expected}"),
                ))
            }
        }
    }

    /// After every configuration took its keys: the first key none of them
    /// read is [`ConfigError::UnknownKey`] (once, however often given).
    pub fn finish(self) -> Result<(), ConfigError> {
        match self.entries.into_iter().find(|e| !e.used) {
            Some(e) => Err(ConfigError::UnknownKey(e.key)),
            None => Ok(()),
        }
    }
}

/// `value` parsed as an integer within `range`; the one wording of a range
/// error, Java's `ConfigDef.Range`.
fn in_range(key: &str, value: &str, range: &RangeInclusive<i64>) -> Result<i64, ConfigError> {
    let n: i64 = value
        .parse()
        .map_err(|_| ConfigError::invalid_value(key, value, "not an integer"))?;
    if n < *range.start() {
        return Err(ConfigError::invalid_value(
            key,
            value,
            &format!("must be at least {}", range.start()),
        ));
    }
    if n > *range.end() {
        return Err(ConfigError::invalid_value(
            key,
            value,
            &format!("must be no more than {}", range.end()),
        ));
    }
    Ok(n)
}

/// A comma-separated list: items trimmed, empty ones dropped.
pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's `ConfigDef` compares booleans ignoring case.
    #[test]
    fn booleans_ignore_case() {
        let mut p = Properties::new([("a", "TRUE"), ("b", "False"), ("c", "yes")]);
        assert_eq!(p.bool("a").unwrap(), Some(true));
        assert_eq!(p.bool("b").unwrap(), Some(false));
        assert_eq!(p.bool("c").unwrap_err().key(), "c");
        assert_eq!(p.bool("absent").unwrap(), None);
    }

    /// Below the range and above it, the reasons are Java's, whatever the
    /// type read.
    #[test]
    fn range_errors_say_the_bound_crossed() {
        let mut p = Properties::new([("low", "-1"), ("high", "9"), ("nan", "1.5")]);
        let low = p.millis("low", 0..=5).unwrap_err();
        assert_eq!(
            low.to_string(),
            r#"invalid value "-1" for low: must be at least 0"#
        );
        let high = p.int("high", 0..=5).unwrap_err();
        assert_eq!(
            high.to_string(),
            r#"invalid value "9" for high: must be no more than 5"#
        );
        let nan = p.bytes("nan", 0..=5).unwrap_err();
        assert_eq!(
            nan.to_string(),
            r#"invalid value "1.5" for nan: not an integer"#
        );
    }

    /// A key given twice takes its last value and counts as read once.
    #[test]
    fn the_last_value_wins() {
        let mut p = Properties::new([("k", "1"), ("k", "2")]);
        assert_eq!(p.int("k", 0..=9).unwrap(), Some(2));
        p.finish().unwrap();
    }

    /// The unread key is reported once, by name, even when given twice.
    #[test]
    fn an_unread_key_is_reported_once_by_name() {
        let mut p = Properties::new([("typo", "1"), ("known", "x"), ("typo", "2")]);
        assert_eq!(p.string("known").as_deref(), Some("x"));
        assert_eq!(p.finish(), Err(ConfigError::UnknownKey("typo".into())));
    }

    /// Two readers of one key: both see it, and it is not unread.
    #[test]
    fn a_key_read_by_two_configurations_is_read() {
        let mut p = Properties::new([("retry.backoff.ms", "50")]);
        let first = p.millis("retry.backoff.ms", 0..=i64::MAX).unwrap();
        let second = p.millis("retry.backoff.ms", 0..=i64::MAX).unwrap();
        assert_eq!(first, second);
        p.finish().unwrap();
    }

    /// Choices list their names in the error; values and keys are trimmed.
    #[test]
    fn choices_name_the_accepted_values() {
        let mut p = Properties::new([(" acks ", " all "), ("mode", "x")]);
        let acks = [("0", 0), ("1", 1), ("all", -1), ("-1", -1)];
        assert_eq!(p.one_of("acks", &acks).unwrap(), Some(-1));
        let e = p.one_of("mode", &[("a", 1), ("b", 2)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"invalid value "x" for mode: expected a or b"#
        );
        let mut p = Properties::new([("p", "Classic")]);
        assert_eq!(
            p.one_of_ignoring_case("p", &[("classic", 1)]).unwrap(),
            Some(1)
        );
    }

    /// Lists split on commas and drop empty items.
    #[test]
    fn lists_are_comma_separated() {
        let mut p = Properties::new([("l", "a:1, b:2,,")]);
        assert_eq!(p.list("l").unwrap(), ["a:1", "b:2"]);
    }

    /// `Debug` shows keys, never values.
    #[test]
    fn debug_never_prints_values() {
        let p = Properties::new([("sasl.password", "hunter2")]);
        assert!(!format!("{p:?}").contains("hunter2"));
    }

    /// A key no configuration took is reported by `finish` as unknown.
    #[test]
    fn finish_reports_a_key_no_configuration_took() {
        let mut props = Properties::new([("bootstrap.servers", "broker-1:9092"), ("no.such", "1")]);
        crate::config::ClientConfig::take_from(&mut props).unwrap();
        assert_eq!(
            props.finish(),
            Err(ConfigError::UnknownKey("no.such".into()))
        );
    }
}
