//! Topic names as Kafka accepts them (the broker's `Topic.validate`): 1 to
//! 249 characters from `[a-zA-Z0-9._-]`, and neither `.` nor `..`.
//!
//! Checking a name before a request spares a round trip that would end in
//! INVALID_TOPIC_EXCEPTION:
//!
//! ```
//! use kafka_proto::topic::{validate, InvalidTopicName};
//! assert!(validate("orders.v2_eu-1").is_ok());
//! match validate("bad topic!") {
//!     Err(e @ InvalidTopicName::IllegalCharacter(' ')) => eprintln!("{e}"),
//!     other => panic!("{other:?}"),
//! }
//! ```

/// The longest legal topic name.
pub const MAX_NAME_LEN: usize = 249;

/// Why a topic name is not legal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTopicName {
    /// The empty name.
    #[error("a topic name cannot be empty")]
    Empty,
    /// `.` or `..`.
    #[error("a topic name cannot be \".\" or \"..\"")]
    DotOrDotDot,
    /// Longer than [`MAX_NAME_LEN`].
    #[error("a topic name has at most 249 characters; this one has {0}")]
    TooLong(usize),
    /// A character outside `[a-zA-Z0-9._-]`.
    #[error("a topic name may only contain ASCII letters, digits, '.', '_' and '-'; found {0:?}")]
    IllegalCharacter(char),
}

/// Checks `name` as the broker would (INVALID_TOPIC_EXCEPTION otherwise).
pub fn validate(name: &str) -> Result<(), InvalidTopicName> {
    if name.is_empty() {
        return Err(InvalidTopicName::Empty);
    }
    if name == "." || name == ".." {
        return Err(InvalidTopicName::DotOrDotDot);
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(InvalidTopicName::IllegalCharacter(c));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(InvalidTopicName::TooLong(name.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_and_illegal_names() {
        assert!(validate(&"a".repeat(249)).is_ok());
        assert!(validate("...").is_ok(), "only . and .. are reserved");
        assert_eq!(validate(""), Err(InvalidTopicName::Empty));
        assert_eq!(validate("."), Err(InvalidTopicName::DotOrDotDot));
        assert_eq!(validate("é"), Err(InvalidTopicName::IllegalCharacter('é')));
        assert_eq!(
            validate("a/b"),
            Err(InvalidTopicName::IllegalCharacter('/'))
        );
    }

    #[test]
    fn dot_dot_and_too_long_names_are_refused() {
        assert_eq!(MAX_NAME_LEN, 249);
        assert_eq!(validate(".."), Err(InvalidTopicName::DotOrDotDot));
        assert_eq!(
            validate(&"x".repeat(250)),
            Err(InvalidTopicName::TooLong(250))
        );
        assert_eq!(
            validate("bad topic!"),
            Err(InvalidTopicName::IllegalCharacter(' '))
        );
    }
}
