//! What a checker needs of a cluster: its bootstrap servers and topic
//! creation. A real cluster (kafka-testcontainers) and a kafka-mock
//! cluster both provide it, so the same seeded schedules run on either.

use kafka_mock::MockCluster;
use kafka_testcontainers::KafkaCluster;
use std::future::Future;
use std::pin::Pin;

/// A cluster the exactly-once checkers can run a schedule on.
pub trait Brokers: Sync {
    /// `bootstrap.servers`.
    fn bootstrap(&self) -> String;
    /// Creates a topic (panics when it cannot).
    fn create_topic<'a>(
        &'a self,
        name: &'a str,
        partitions: i32,
        replication: i16,
    ) -> Pin<Box<dyn Future<Output = ()> + 'a>>;
}

impl Brokers for KafkaCluster {
    fn bootstrap(&self) -> String {
        KafkaCluster::bootstrap(self)
    }

    fn create_topic<'a>(
        &'a self,
        name: &'a str,
        partitions: i32,
        replication: i16,
    ) -> Pin<Box<dyn Future<Output = ()> + 'a>> {
        Box::pin(async move {
            KafkaCluster::create_topic(self, name, partitions, replication)
                .await
                .unwrap_or_else(|e| panic!("create topic {name}: {e}"))
        })
    }
}

impl Brokers for MockCluster {
    fn bootstrap(&self) -> String {
        MockCluster::bootstrap(self)
    }

    fn create_topic<'a>(
        &'a self,
        name: &'a str,
        partitions: i32,
        _replication: i16,
    ) -> Pin<Box<dyn Future<Output = ()> + 'a>> {
        Box::pin(async move {
            MockCluster::create_topic(self, name, partitions)
                .unwrap_or_else(|e| panic!("create topic {name}: {e}"))
        })
    }
}
