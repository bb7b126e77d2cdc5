//! `acl list`, `acl add`, `acl remove`: the authorizer's ACL bindings
//! (DescribeAcls, CreateAcls, DeleteAcls), as Kafka's `kafka-acls.sh`.

use crate::common::Globals;
use crate::error::{CliError, CliResult};
use crate::group::table;
use kafka_admin::{AclBinding, AclFilter, AclOperation, AclPermission, PatternType, ResourceType};

/// `acl` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct AclArgs {
    /// The ACL command.
    #[command(subcommand)]
    pub command: AclCommand,
}

/// The resource and who/what of a binding or filter.
#[derive(Debug, Clone, clap::Args)]
pub struct AclSelection {
    /// A topic (`*`: every topic).
    #[arg(long)]
    pub topic: Option<String>,
    /// A consumer group (`*`: every group).
    #[arg(long)]
    pub group: Option<String>,
    /// The cluster.
    #[arg(long)]
    pub cluster: bool,
    /// A transactional id (`*`: every one).
    #[arg(long)]
    pub transactional_id: Option<String>,
    /// How the resource name matches: literal, prefixed (list/remove also
    /// any, match). Default: literal for add, any for list/remove.
    #[arg(long, value_parser = parse_pattern)]
    pub resource_pattern_type: Option<PatternType>,
    /// The principal, e.g. User:alice.
    #[arg(long)]
    pub principal: Option<String>,
    /// The host (add: default `*`).
    #[arg(long)]
    pub host: Option<String>,
    /// Operations (repeatable): read, write, create, delete, alter,
    /// describe, cluster-action, describe-configs, alter-configs,
    /// idempotent-write, all (list/remove also any).
    #[arg(long, value_parser = parse_operation)]
    pub operation: Vec<AclOperation>,
    /// allow or deny (add: default allow; list/remove: any).
    #[arg(long, value_parser = parse_permission)]
    pub permission: Option<AclPermission>,
}

fn parse_pattern(s: &str) -> Result<PatternType, String> {
    PatternType::parse(s).ok_or_else(|| "expected literal, prefixed, any or match".into())
}

fn parse_operation(s: &str) -> Result<AclOperation, String> {
    AclOperation::parse(s).ok_or_else(|| format!("unknown operation {s:?}"))
}

fn parse_permission(s: &str) -> Result<AclPermission, String> {
    AclPermission::parse(s).ok_or_else(|| "expected allow, deny or any".into())
}

impl AclSelection {
    /// The resources named; at most one.
    fn resource(&self) -> CliResult<Option<(ResourceType, String)>> {
        let mut named = Vec::new();
        if let Some(t) = &self.topic {
            named.push((ResourceType::Topic, t.clone()));
        }
        if let Some(g) = &self.group {
            named.push((ResourceType::Group, g.clone()));
        }
        if self.cluster {
            named.push((ResourceType::Cluster, "kafka-cluster".to_string()));
        }
        if let Some(t) = &self.transactional_id {
            named.push((ResourceType::TransactionalId, t.clone()));
        }
        if named.len() > 1 {
            return Err(CliError::usage(
                "name one resource: --topic, --group, --cluster or --transactional-id",
            ));
        }
        Ok(named.pop())
    }

    /// The filters: one per operation (or one for any operation).
    fn filters(&self) -> CliResult<Vec<AclFilter>> {
        let (resource_type, resource_name) = match self.resource()? {
            Some((t, n)) => (t, Some(n)),
            None => (ResourceType::Any, None),
        };
        let base = AclFilter {
            resource_type,
            resource_name,
            pattern_type: self.resource_pattern_type.unwrap_or(PatternType::Any),
            principal: self.principal.clone(),
            host: self.host.clone(),
            operation: AclOperation::Any,
            permission: self.permission.unwrap_or(AclPermission::Any),
        };
        if self.operation.is_empty() {
            return Ok(vec![base]);
        }
        Ok(self
            .operation
            .iter()
            .map(|op| AclFilter {
                operation: *op,
                ..base.clone()
            })
            .collect())
    }

    /// The bindings to create: one per operation.
    fn bindings(&self) -> CliResult<Vec<AclBinding>> {
        let Some((resource_type, resource_name)) = self.resource()? else {
            return Err(CliError::usage(
                "name the resource: --topic, --group, --cluster or --transactional-id",
            ));
        };
        let Some(principal) = self.principal.clone() else {
            return Err(CliError::usage("name the principal: --principal User:NAME"));
        };
        if self.operation.is_empty() {
            return Err(CliError::usage("name at least one --operation"));
        }
        let pattern_type = self.resource_pattern_type.unwrap_or(PatternType::Literal);
        if !matches!(pattern_type, PatternType::Literal | PatternType::Prefixed) {
            return Err(CliError::usage(
                "a binding's --resource-pattern-type is literal or prefixed",
            ));
        }
        let permission = self.permission.unwrap_or(AclPermission::Allow);
        if permission == AclPermission::Any {
            return Err(CliError::usage("a binding's --permission is allow or deny"));
        }
        Ok(self
            .operation
            .iter()
            .map(|op| AclBinding {
                resource_type,
                resource_name: resource_name.clone(),
                pattern_type,
                principal: principal.clone(),
                host: self.host.clone().unwrap_or_else(|| "*".into()),
                operation: *op,
                permission,
            })
            .collect())
    }
}

/// The `acl` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum AclCommand {
    /// List the bindings matching the options (all without options).
    #[command(after_help = ACL_LIST_HELP)]
    List(AclSelection),
    /// Create bindings: one per --operation on the named resource.
    #[command(after_help = ACL_ADD_HELP)]
    Add(AclSelection),
    /// Delete the bindings matching the options.
    #[command(after_help = ACL_REMOVE_HELP)]
    Remove(AclSelection),
}

pub const ACL_HELP: &str = "\
Examples:
  kafka-eos acl add --principal User:billing --operation read --operation describe --topic orders
  kafka-eos acl list --topic orders
  kafka-eos acl remove --principal User:billing --topic orders";

pub const ACL_LIST_HELP: &str = "\
One line per binding: PRINCIPAL HOST OPERATION PERMISSION RESOURCE-TYPE
PATTERN-TYPE NAME. A cluster without an authorizer fails with
SECURITY_DISABLED.

Examples:
  kafka-eos acl list
  kafka-eos acl list --principal User:billing
  kafka-eos acl list --topic orders --resource-pattern-type match";

pub const ACL_ADD_HELP: &str = "\
Creates one binding per --operation (CreateAcls). Defaults: --permission
allow, --host *, --resource-pattern-type literal.

Examples:
  kafka-eos acl add --principal User:billing --operation read --topic orders
  kafka-eos acl add --principal User:billing --operation all --group billing- --resource-pattern-type prefixed";

pub const ACL_REMOVE_HELP: &str = "\
Deletes every binding matching the options (DeleteAcls) and prints them. At
least a resource or --principal is required, so that a bare `acl remove`
cannot delete everything.

Examples:
  kafka-eos acl remove --principal User:billing --topic orders
  kafka-eos acl remove --principal User:old-app";

/// Bindings as a table.
pub(crate) fn bindings_text(bindings: &[AclBinding]) -> String {
    let mut rows = vec![
        [
            "PRINCIPAL",
            "HOST",
            "OPERATION",
            "PERMISSION",
            "RESOURCE-TYPE",
            "PATTERN-TYPE",
            "NAME",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for b in bindings {
        rows.push(vec![
            b.principal.clone(),
            b.host.clone(),
            b.operation.to_string(),
            b.permission.to_string(),
            b.resource_type.to_string(),
            b.pattern_type.to_string(),
            b.resource_name.clone(),
        ]);
    }
    table(&rows)
}

/// Runs an `acl` subcommand.
pub async fn run(g: &Globals, command: AclCommand) -> CliResult<()> {
    match command {
        AclCommand::List(s) => {
            let filters = s.filters()?;
            let cluster = g.cluster().await?;
            let mut all = Vec::new();
            for f in &filters {
                all.extend(kafka_admin::describe_acls(&cluster, f).await?);
            }
            all.sort();
            all.dedup();
            print!("{}", bindings_text(&all));
            Ok(())
        }
        AclCommand::Add(s) => {
            let bindings = s.bindings()?;
            let cluster = g.cluster().await?;
            kafka_admin::create_acls(&cluster, &bindings).await?;
            print!("{}", bindings_text(&bindings));
            Ok(())
        }
        AclCommand::Remove(s) => {
            if s.resource()?.is_none() && s.principal.is_none() {
                return Err(CliError::usage(
                    "name a resource or --principal: `acl remove` without them would delete every binding",
                ));
            }
            let filters = s.filters()?;
            let cluster = g.cluster().await?;
            let deleted = kafka_admin::delete_acls(&cluster, &filters).await?;
            print!("{}", bindings_text(&deleted));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel() -> AclSelection {
        AclSelection {
            topic: Some("orders".into()),
            group: None,
            cluster: false,
            transactional_id: None,
            resource_pattern_type: None,
            principal: Some("User:a".into()),
            host: None,
            operation: vec![AclOperation::Read, AclOperation::Describe],
            permission: None,
        }
    }

    /// `acl add` makes one binding per operation with the defaults.
    #[test]
    fn add_makes_one_binding_per_operation() {
        let b = sel().bindings().unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].pattern_type, PatternType::Literal);
        assert_eq!(b[0].permission, AclPermission::Allow);
        assert_eq!(b[0].host, "*");
        let no_principal = AclSelection {
            principal: None,
            ..sel()
        };
        assert!(no_principal.bindings().is_err());
        let two = AclSelection {
            group: Some("g".into()),
            ..sel()
        };
        assert!(two.bindings().is_err());
    }

    /// Filters default to ANY for everything not named.
    #[test]
    fn filters_default_to_any() {
        let f = AclSelection {
            operation: vec![],
            principal: None,
            topic: None,
            ..sel()
        }
        .filters()
        .unwrap();
        assert_eq!(f, [AclFilter::any()]);
    }
}
