//! ACL bindings of the cluster's authorizer (Kafka's `kafka-acls.sh`,
//! Java's `Admin.createAcls`, `describeAcls`, `deleteAcls`): create them
//! ([`create_acls`], CreateAcls), list those matching a filter
//! ([`describe_acls`], DescribeAcls), delete those matching filters
//! ([`delete_acls`], DeleteAcls). A cluster without an authorizer answers
//! SECURITY_DISABLED.

use crate::broker_error;
use kafka_client::{Cluster, RequestError};
use kafka_proto::messages::{
    CreateAclsRequest, CreateAclsRequestCreation, CreateAclsResponse, DeleteAclsRequest,
    DeleteAclsRequestFilter, DeleteAclsResponse, DescribeAclsRequest, DescribeAclsResponse,
};
use kafka_proto::{ApiKey, ErrorCode};

/// An enum of wire codes with names (Java's `ResourceType`, `PatternType`,
/// `AclOperation`, `AclPermissionType`), a code this client does not know
/// kept in `Unknown`.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal, $text:literal;)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A code this client does not know.
            Unknown(i8),
        }

        impl $name {
            /// The wire code.
            pub fn code(self) -> i8 {
                match self { $($name::$variant => $code,)* $name::Unknown(c) => c }
            }

            /// The value of a wire code.
            pub fn from_code(code: i8) -> Self {
                match code { $($code => $name::$variant,)* c => $name::Unknown(c) }
            }

            /// Parses the name Kafka's tools print (any case, `-` or `_`).
            pub fn parse(s: &str) -> Option<Self> {
                let norm = s.replace('-', "_").to_ascii_uppercase();
                [$($name::$variant),*].into_iter().find(|v| v.as_str() == norm)
            }

            /// The name Kafka's tools print.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* $name::Unknown(_) => "UNKNOWN" }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $name::Unknown(c) => write!(f, "UNKNOWN({c})"),
                    v => f.write_str(v.as_str()),
                }
            }
        }
    };
}

wire_enum! {
    /// The type of resource an ACL protects.
    ResourceType {
        /// Filters only: any type.
        Any = 1, "ANY";
        /// A topic.
        Topic = 2, "TOPIC";
        /// A consumer group.
        Group = 3, "GROUP";
        /// The cluster.
        Cluster = 4, "CLUSTER";
        /// A transactional id.
        TransactionalId = 5, "TRANSACTIONAL_ID";
        /// A delegation token.
        DelegationToken = 6, "DELEGATION_TOKEN";
        /// A user (CreateAcls v3+).
        User = 7, "USER";
    }
}

wire_enum! {
    /// How an ACL's resource name matches.
    PatternType {
        /// Filters only: any pattern type.
        Any = 1, "ANY";
        /// Filters only: every pattern that applies to the name (literal,
        /// wildcard and prefixes).
        Match = 2, "MATCH";
        /// The exact name (`*` for every resource).
        Literal = 3, "LITERAL";
        /// Every name starting with it.
        Prefixed = 4, "PREFIXED";
    }
}

wire_enum! {
    /// The operation an ACL allows or denies.
    AclOperation {
        /// Filters only: any operation.
        Any = 1, "ANY";
        /// Every operation.
        All = 2, "ALL";
        /// Read.
        Read = 3, "READ";
        /// Write.
        Write = 4, "WRITE";
        /// Create.
        Create = 5, "CREATE";
        /// Delete.
        Delete = 6, "DELETE";
        /// Alter.
        Alter = 7, "ALTER";
        /// Describe.
        Describe = 8, "DESCRIBE";
        /// Cluster action (inter-broker).
        ClusterAction = 9, "CLUSTER_ACTION";
        /// Describe configs.
        DescribeConfigs = 10, "DESCRIBE_CONFIGS";
        /// Alter configs.
        AlterConfigs = 11, "ALTER_CONFIGS";
        /// Idempotent write.
        IdempotentWrite = 12, "IDEMPOTENT_WRITE";
        /// Create delegation tokens.
        CreateTokens = 13, "CREATE_TOKENS";
        /// Describe delegation tokens.
        DescribeTokens = 14, "DESCRIBE_TOKENS";
    }
}

wire_enum! {
    /// Whether an ACL allows or denies.
    AclPermission {
        /// Filters only: either.
        Any = 1, "ANY";
        /// Denies.
        Deny = 2, "DENY";
        /// Allows.
        Allow = 3, "ALLOW";
    }
}

/// One ACL binding: who may (or may not) do what on which resources.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AclBinding {
    /// The resource type.
    pub resource_type: ResourceType,
    /// The resource name (`*`: every resource of the type).
    pub resource_name: String,
    /// How the name matches.
    pub pattern_type: PatternType,
    /// The principal, e.g. `User:alice`.
    pub principal: String,
    /// The host, `*` for any.
    pub host: String,
    /// The operation.
    pub operation: AclOperation,
    /// Allow or deny.
    pub permission: AclPermission,
}

impl std::fmt::Display for AclBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} on {}:{}:{} from host {}",
            self.principal,
            self.permission,
            self.resource_type,
            self.pattern_type,
            self.resource_name,
            self.host
        )?;
        write!(f, " ({})", self.operation)
    }
}

/// Which bindings a describe or delete matches; `None` matches any name,
/// principal or host, the `Any` values any type, pattern, operation or
/// permission.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclFilter {
    /// The resource type.
    pub resource_type: ResourceType,
    /// The resource name.
    pub resource_name: Option<String>,
    /// The pattern type (`Match`: every pattern that applies to the name).
    pub pattern_type: PatternType,
    /// The principal.
    pub principal: Option<String>,
    /// The host.
    pub host: Option<String>,
    /// The operation.
    pub operation: AclOperation,
    /// The permission.
    pub permission: AclPermission,
}

impl AclFilter {
    /// The filter matching every binding; narrow it with struct update
    /// syntax.
    ///
    /// ```
    /// use kafka_admin::{AclFilter, ResourceType};
    /// let on_topics = AclFilter { resource_type: ResourceType::Topic, ..AclFilter::any() };
    /// assert_eq!(on_topics.principal, None);
    /// ```
    pub fn any() -> Self {
        Self {
            resource_type: ResourceType::Any,
            resource_name: None,
            pattern_type: PatternType::Any,
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission: AclPermission::Any,
        }
    }
}

/// Creates `bindings` (CreateAcls through any broker, forwarded to the
/// controller). The first refused binding fails the call with the broker's
/// error and the binding named in the message; the bindings before it in
/// the same request may have been created (Kafka applies each on its own).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// use kafka_admin::{AclBinding, AclOperation, AclPermission, PatternType, ResourceType};
/// let read_orders = AclBinding {
///     resource_type: ResourceType::Topic,
///     resource_name: "orders".into(),
///     pattern_type: PatternType::Literal,
///     principal: "User:billing".into(),
///     host: "*".into(),
///     operation: AclOperation::Read,
///     permission: AclPermission::Allow,
/// };
/// kafka_admin::create_acls(cluster, &[read_orders]).await?;
/// # Ok(()) }
/// ```
pub async fn create_acls(cluster: &Cluster, bindings: &[AclBinding]) -> Result<(), RequestError> {
    let conn = cluster.any_connection().await?;
    let version = conn.versions().version_for::<CreateAclsRequest>()?;
    let resp = conn.send(&create_request(bindings), version).await?;
    create_answer(version, bindings, resp)
}

fn create_request(bindings: &[AclBinding]) -> CreateAclsRequest {
    CreateAclsRequest {
        creations: bindings
            .iter()
            .map(|b| CreateAclsRequestCreation {
                resource_type: b.resource_type.code(),
                resource_name: b.resource_name.clone(),
                resource_pattern_type: b.pattern_type.code(),
                principal: b.principal.clone(),
                host: b.host.clone(),
                operation: b.operation.code(),
                permission_type: b.permission.code(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn create_answer(
    version: i16,
    bindings: &[AclBinding],
    resp: CreateAclsResponse,
) -> Result<(), RequestError> {
    if resp.results.len() != bindings.len() {
        return Err(broker_error(
            ApiKey::CreateAcls,
            version,
            ErrorCode::UnknownServerError,
            Some(format!(
                "{} results for {} bindings",
                resp.results.len(),
                bindings.len()
            )),
        ));
    }
    for (r, b) in resp.results.into_iter().zip(bindings) {
        let error = ErrorCode::from(r.error_code);
        if !error.is_ok() {
            let why = r.error_message.unwrap_or_default();
            return Err(broker_error(
                ApiKey::CreateAcls,
                version,
                error,
                Some(format!("{b}: {why}")),
            ));
        }
    }
    Ok(())
}

/// The bindings matching `filter` (DescribeAcls through any broker), sorted.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// use kafka_admin::AclFilter;
/// let mine = AclFilter { principal: Some("User:billing".into()), ..AclFilter::any() };
/// for b in kafka_admin::describe_acls(cluster, &mine).await? {
///     println!("{b}");
/// }
/// # Ok(()) }
/// ```
pub async fn describe_acls(
    cluster: &Cluster,
    filter: &AclFilter,
) -> Result<Vec<AclBinding>, RequestError> {
    let conn = cluster.any_connection().await?;
    let version = conn.versions().version_for::<DescribeAclsRequest>()?;
    let req = DescribeAclsRequest {
        resource_type_filter: filter.resource_type.code(),
        resource_name_filter: filter.resource_name.clone(),
        pattern_type_filter: filter.pattern_type.code(),
        principal_filter: filter.principal.clone(),
        host_filter: filter.host.clone(),
        operation: filter.operation.code(),
        permission_type: filter.permission.code(),
        ..Default::default()
    };
    let resp = conn.send(&req, version).await?;
    describe_answer(version, resp)
}

fn describe_answer(
    version: i16,
    resp: DescribeAclsResponse,
) -> Result<Vec<AclBinding>, RequestError> {
    let error = ErrorCode::from(resp.error_code);
    if !error.is_ok() {
        return Err(broker_error(
            ApiKey::DescribeAcls,
            version,
            error,
            resp.error_message,
        ));
    }
    let mut out: Vec<AclBinding> = resp
        .resources
        .into_iter()
        .flat_map(|r| {
            let (rt, name, pt) = (
                ResourceType::from_code(r.resource_type),
                r.resource_name,
                PatternType::from_code(r.pattern_type),
            );
            r.acls.into_iter().map(move |a| AclBinding {
                resource_type: rt,
                resource_name: name.clone(),
                pattern_type: pt,
                principal: a.principal,
                host: a.host,
                operation: AclOperation::from_code(a.operation),
                permission: AclPermission::from_code(a.permission_type),
            })
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Deletes every binding matching any of `filters` (DeleteAcls through any
/// broker); returns the bindings deleted, sorted. A filter or binding the
/// broker refused fails the call with its error.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// use kafka_admin::{AclFilter, ResourceType};
/// let on_orders = AclFilter {
///     resource_type: ResourceType::Topic,
///     resource_name: Some("orders".into()),
///     ..AclFilter::any()
/// };
/// let gone = kafka_admin::delete_acls(cluster, &[on_orders]).await?;
/// println!("{} bindings deleted", gone.len());
/// # Ok(()) }
/// ```
pub async fn delete_acls(
    cluster: &Cluster,
    filters: &[AclFilter],
) -> Result<Vec<AclBinding>, RequestError> {
    let conn = cluster.any_connection().await?;
    let version = conn.versions().version_for::<DeleteAclsRequest>()?;
    let req = DeleteAclsRequest {
        filters: filters
            .iter()
            .map(|f| DeleteAclsRequestFilter {
                resource_type_filter: f.resource_type.code(),
                resource_name_filter: f.resource_name.clone(),
                pattern_type_filter: f.pattern_type.code(),
                principal_filter: f.principal.clone(),
                host_filter: f.host.clone(),
                operation: f.operation.code(),
                permission_type: f.permission.code(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let resp = conn.send(&req, version).await?;
    delete_answer(version, resp)
}

fn delete_answer(version: i16, resp: DeleteAclsResponse) -> Result<Vec<AclBinding>, RequestError> {
    let mut out = Vec::new();
    for f in resp.filter_results {
        let error = ErrorCode::from(f.error_code);
        if !error.is_ok() {
            return Err(broker_error(
                ApiKey::DeleteAcls,
                version,
                error,
                f.error_message,
            ));
        }
        for m in f.matching_acls {
            let binding = AclBinding {
                resource_type: ResourceType::from_code(m.resource_type),
                resource_name: m.resource_name,
                pattern_type: PatternType::from_code(m.pattern_type),
                principal: m.principal,
                host: m.host,
                operation: AclOperation::from_code(m.operation),
                permission: AclPermission::from_code(m.permission_type),
            };
            let error = ErrorCode::from(m.error_code);
            if !error.is_ok() {
                let why = m.error_message.unwrap_or_default();
                return Err(broker_error(
                    ApiKey::DeleteAcls,
                    version,
                    error,
                    Some(format!("{binding}: {why}")),
                ));
            }
            out.push(binding);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{
        CreateAclsResponseResult, DeleteAclsResponseFilterResult, DeleteAclsResponseMatchingAcl,
        DescribeAclsResponseAcl, DescribeAclsResponseResource,
    };

    fn binding() -> AclBinding {
        AclBinding {
            resource_type: ResourceType::Topic,
            resource_name: "t".into(),
            pattern_type: PatternType::Prefixed,
            principal: "User:a".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission: AclPermission::Allow,
        }
    }

    /// Names parse as the tools print them; codes round-trip; unknown
    /// codes are kept.
    #[test]
    fn names_and_codes() {
        assert_eq!(
            AclOperation::parse("describe-configs"),
            Some(AclOperation::DescribeConfigs)
        );
        assert_eq!(
            ResourceType::parse("transactional_id"),
            Some(ResourceType::TransactionalId)
        );
        assert_eq!(PatternType::parse("Prefixed"), Some(PatternType::Prefixed));
        assert_eq!(AclPermission::parse("nope"), None);
        assert_eq!(AclOperation::from_code(12), AclOperation::IdempotentWrite);
        assert_eq!(ResourceType::from_code(42), ResourceType::Unknown(42));
        assert_eq!(ResourceType::Unknown(42).code(), 42);
        assert_eq!(ResourceType::Unknown(42).to_string(), "UNKNOWN(42)");
    }

    /// A binding goes on the wire with its codes; a refused creation names
    /// the binding.
    #[test]
    fn create_requests_and_answers() {
        let req = create_request(&[binding()]);
        let c = &req.creations[0];
        assert_eq!(
            (
                c.resource_type,
                c.resource_pattern_type,
                c.operation,
                c.permission_type
            ),
            (2, 4, 3, 3)
        );
        let ok = CreateAclsResponse {
            results: vec![CreateAclsResponseResult {
                error_message: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(create_answer(3, &[binding()], ok).is_ok());
        let refused = CreateAclsResponse {
            results: vec![CreateAclsResponseResult {
                error_code: ErrorCode::SecurityDisabled.code(),
                error_message: Some("no authorizer".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = create_answer(3, &[binding()], refused).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::SecurityDisabled));
        assert!(e.to_string().contains("User:a"), "{e}");
        assert!(create_answer(3, &[binding()], CreateAclsResponse::default()).is_err());
    }

    /// Resources with their ACLs flatten into bindings.
    #[test]
    fn describe_answers_flatten() {
        let resp = DescribeAclsResponse {
            error_message: None,
            resources: vec![DescribeAclsResponseResource {
                resource_type: 2,
                resource_name: "t".into(),
                pattern_type: 4,
                acls: vec![DescribeAclsResponseAcl {
                    principal: "User:a".into(),
                    host: "*".into(),
                    operation: 3,
                    permission_type: 3,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(describe_answer(3, resp).unwrap(), [binding()]);
        let refused = DescribeAclsResponse {
            error_code: ErrorCode::SecurityDisabled.code(),
            ..Default::default()
        };
        assert!(describe_answer(3, refused).is_err());
    }

    /// Deleted bindings are returned; a filter's error fails the call.
    #[test]
    fn delete_answers() {
        let m = DeleteAclsResponseMatchingAcl {
            error_message: None,
            resource_type: 2,
            resource_name: "t".into(),
            pattern_type: 4,
            principal: "User:a".into(),
            host: "*".into(),
            operation: 3,
            permission_type: 3,
            ..Default::default()
        };
        let resp = DeleteAclsResponse {
            filter_results: vec![DeleteAclsResponseFilterResult {
                error_message: None,
                matching_acls: vec![m.clone()],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(delete_answer(3, resp).unwrap(), [binding()]);
        let refused = DeleteAclsResponse {
            filter_results: vec![DeleteAclsResponseFilterResult {
                error_code: ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = delete_answer(3, refused).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::ClusterAuthorizationFailed));
    }
}
