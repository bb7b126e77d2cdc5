//! ACL bindings of an authorizer-enabled mock (Kafka's `AclControlManager`
//! and the `AclBindingFilter` matching rules): CreateAcls checks and stores
//! bindings (a binding stored twice is kept once), DescribeAcls and
//! DeleteAcls select them by filter. The mock stores ACLs but enforces
//! none: every request is still allowed.

use kafka_proto::ErrorCode;

/// `ResourceType`, `PatternType`, `AclOperation` and `AclPermissionType`
/// codes that only filters may carry.
const UNKNOWN: i8 = 0;
const ANY: i8 = 1;
/// `PatternType.MATCH`: a filter matching literal, wildcard and prefixed
/// patterns that apply to its name.
const MATCH: i8 = 2;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;

/// One ACL binding: a resource pattern and an access control entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct AclBinding {
    /// `ResourceType` code (TOPIC 2, GROUP 3, CLUSTER 4, ...).
    pub resource_type: i8,
    /// The resource name (`*` for every resource of literal patterns).
    pub resource_name: String,
    /// LITERAL (3) or PREFIXED (4).
    pub pattern_type: i8,
    /// `Type:name`, e.g. `User:alice`.
    pub principal: String,
    /// The client host, `*` for any.
    pub host: String,
    /// `AclOperation` code.
    pub operation: i8,
    /// DENY (2) or ALLOW (3).
    pub permission_type: i8,
}

/// A filter over bindings; `None` names match any.
#[derive(Debug, Clone)]
pub(crate) struct AclFilter {
    /// A resource type, or ANY.
    pub resource_type: i8,
    /// A resource name, or any.
    pub resource_name: Option<String>,
    /// A pattern type, ANY or MATCH.
    pub pattern_type: i8,
    /// A principal, or any.
    pub principal: Option<String>,
    /// A host, or any.
    pub host: Option<String>,
    /// An operation, or ANY.
    pub operation: i8,
    /// A permission type, or ANY.
    pub permission_type: i8,
}

impl AclFilter {
    /// Kafka's `AclBindingFilter.matches`.
    pub(crate) fn matches(&self, b: &AclBinding) -> bool {
        if self.resource_type != ANY && self.resource_type != b.resource_type {
            return false;
        }
        if self.pattern_type != ANY
            && self.pattern_type != MATCH
            && self.pattern_type != b.pattern_type
        {
            return false;
        }
        let name_matches = match &self.resource_name {
            None => true,
            Some(name) if self.pattern_type == ANY || self.pattern_type == b.pattern_type => {
                *name == b.resource_name
            }
            Some(name) => match b.pattern_type {
                LITERAL => *name == b.resource_name || b.resource_name == "*",
                PREFIXED => name.starts_with(&b.resource_name),
                _ => false,
            },
        };
        name_matches
            && self.principal.as_ref().is_none_or(|p| *p == b.principal)
            && self.host.as_ref().is_none_or(|h| *h == b.host)
            && (self.operation == ANY || self.operation == b.operation)
            && (self.permission_type == ANY || self.permission_type == b.permission_type)
    }

    /// A filter with an UNKNOWN field matches nothing Kafka could store:
    /// INVALID_REQUEST, as Kafka's `AclControlManager.validateFilter`.
    pub(crate) fn check(&self) -> Result<(), (ErrorCode, String)> {
        let unknown = [
            self.resource_type,
            self.pattern_type,
            self.operation,
            self.permission_type,
        ]
        .contains(&UNKNOWN);
        if unknown {
            return Err((ErrorCode::InvalidRequest, "Unknown filter field".into()));
        }
        Ok(())
    }
}

/// Kafka's `AclControlManager.validateNewAcl`: INVALID_REQUEST with its
/// message for a binding an authorizer cannot store.
pub(crate) fn check_new(b: &AclBinding) -> Result<(), (ErrorCode, String)> {
    let invalid = |m: String| Err((ErrorCode::InvalidRequest, m));
    if b.resource_type == UNKNOWN || b.resource_type == ANY {
        return invalid(format!("Invalid resourceType {}", b.resource_type));
    }
    if b.pattern_type != LITERAL && b.pattern_type != PREFIXED {
        return invalid(format!("Invalid patternType {}", b.pattern_type));
    }
    if b.operation == UNKNOWN || b.operation == ANY {
        return invalid(format!("Invalid operation {}", b.operation));
    }
    if b.permission_type != 2 && b.permission_type != 3 {
        return invalid(format!("Invalid permissionType {}", b.permission_type));
    }
    if b.resource_name.is_empty() {
        return invalid("Resource name should not be empty".into());
    }
    match b.principal.split_once(':') {
        Some((kind, name)) if !kind.is_empty() && !name.is_empty() => Ok(()),
        _ => invalid(format!("Could not parse principal {}", b.principal)),
    }
}

/// The stored bindings.
#[derive(Debug, Default)]
pub(crate) struct Acls {
    /// Every binding, each once, in creation order.
    bindings: Vec<AclBinding>,
}

impl Acls {
    /// Stores `b` (checked by [`check_new`]); storing it again changes nothing.
    pub(crate) fn create(&mut self, b: AclBinding) {
        if !self.bindings.contains(&b) {
            self.bindings.push(b);
        }
    }

    /// The bindings `filter` matches, in creation order.
    pub(crate) fn describe(&self, filter: &AclFilter) -> Vec<AclBinding> {
        self.bindings
            .iter()
            .filter(|b| filter.matches(b))
            .cloned()
            .collect()
    }

    /// Removes and returns the bindings `filter` matches.
    pub(crate) fn delete(&mut self, filter: &AclFilter) -> Vec<AclBinding> {
        let (gone, kept) = std::mem::take(&mut self.bindings)
            .into_iter()
            .partition(|b| filter.matches(b));
        self.bindings = kept;
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(name: &str, pattern: i8, principal: &str) -> AclBinding {
        AclBinding {
            resource_type: 2,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: principal.into(),
            host: "*".into(),
            operation: 3,
            permission_type: 3,
        }
    }

    fn any() -> AclFilter {
        AclFilter {
            resource_type: ANY,
            resource_name: None,
            pattern_type: ANY,
            principal: None,
            host: None,
            operation: ANY,
            permission_type: ANY,
        }
    }

    #[test]
    fn match_filters_find_literal_wildcard_and_prefixed_patterns() {
        let mut acls = Acls::default();
        acls.create(binding("orders", LITERAL, "User:a"));
        acls.create(binding("*", LITERAL, "User:b"));
        acls.create(binding("ord", PREFIXED, "User:c"));
        acls.create(binding("audit", LITERAL, "User:d"));
        acls.create(binding("orders", LITERAL, "User:a"));
        assert_eq!(acls.describe(&any()).len(), 4, "a duplicate is stored once");
        let matching = AclFilter {
            resource_name: Some("orders".into()),
            pattern_type: MATCH,
            ..any()
        };
        let principals: Vec<String> = acls
            .describe(&matching)
            .into_iter()
            .map(|b| b.principal)
            .collect();
        assert_eq!(principals, ["User:a", "User:b", "User:c"]);
        let literal = AclFilter {
            resource_name: Some("orders".into()),
            pattern_type: LITERAL,
            ..any()
        };
        assert_eq!(acls.delete(&literal).len(), 1);
        assert_eq!(acls.describe(&any()).len(), 3);
    }

    #[test]
    fn bindings_an_authorizer_cannot_store_are_refused() {
        assert!(check_new(&binding("t", LITERAL, "User:a")).is_ok());
        assert!(check_new(&binding("t", MATCH, "User:a")).is_err());
        assert!(check_new(&binding("t", LITERAL, "alice")).is_err());
        assert!(check_new(&binding("", LITERAL, "User:a")).is_err());
    }
}
