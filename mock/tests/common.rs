//! What several test modules share: a cluster of some brokers, and a
//! producer's config for it.

use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::ProducerConfig;

/// A cluster of `brokers` brokers, configured by default otherwise.
pub async fn cluster(brokers: usize) -> MockCluster {
    MockCluster::start(MockConfig {
        brokers,
        ..MockConfig::default()
    })
    .await
    .unwrap()
}

/// A producer's config for `mock`: its bootstrap servers, then
/// `properties`.
pub fn producer_config(mock: &MockCluster, properties: &[(&str, &str)]) -> ProducerConfig {
    let bootstrap = mock.bootstrap();
    let mut all = vec![("bootstrap.servers", bootstrap.as_str())];
    all.extend_from_slice(properties);
    ProducerConfig::from_properties(all).unwrap()
}
