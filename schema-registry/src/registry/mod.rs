//! The registry client: Confluent's REST API with its retries, URL
//! failover and bounded caches.
//!
//! [`rest`] holds the protocol (paths, bodies, answers, errors) without IO;
//! [`SchemaRegistryClient`] is the driver over `kafka_client::http`.

mod cache;
mod config;
mod error;
mod rest;

pub(crate) use cache::SharedBounded;
pub(crate) use config::latest_cache_ttl;
pub use config::{RegistryAuth, RegistryConfig};
pub use error::RegistryError;

use crate::schema::{RegisteredSchema, ResolvedSchema, Schema, SchemaReference};
use crate::wire::SchemaId;
use cache::Caches;
use kafka_client::http::{HttpClient, HttpConfig, Method};
use kafka_client::{ConfigError, Properties, Secret};
use rest::{Exchange, segment};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A subject's compatibility level (`/config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompatibilityLevel {
    /// `NONE`: any change.
    None,
    /// `BACKWARD`: the new schema reads data of the previous version.
    Backward,
    /// `BACKWARD_TRANSITIVE`: ... of every earlier version.
    BackwardTransitive,
    /// `FORWARD`: the previous version reads data of the new one.
    Forward,
    /// `FORWARD_TRANSITIVE`: every earlier version reads the new data.
    ForwardTransitive,
    /// `FULL`: backward and forward with the previous version.
    Full,
    /// `FULL_TRANSITIVE`: backward and forward with every version.
    FullTransitive,
}

impl CompatibilityLevel {
    const NAMES: [(&'static str, CompatibilityLevel); 7] = [
        ("NONE", CompatibilityLevel::None),
        ("BACKWARD", CompatibilityLevel::Backward),
        (
            "BACKWARD_TRANSITIVE",
            CompatibilityLevel::BackwardTransitive,
        ),
        ("FORWARD", CompatibilityLevel::Forward),
        ("FORWARD_TRANSITIVE", CompatibilityLevel::ForwardTransitive),
        ("FULL", CompatibilityLevel::Full),
        ("FULL_TRANSITIVE", CompatibilityLevel::FullTransitive),
    ];

    /// The registry's name (`BACKWARD`).
    pub fn as_str(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, l)| *l == self)
            .map_or("NONE", |(n, _)| n)
    }

    /// Parses the registry's name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, l)| *l)
    }
}

/// The answer of a compatibility check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompatibilityCheck {
    /// Whether the schema may be registered.
    pub is_compatible: bool,
    /// The registry's reasons when it is not (`?verbose=true`).
    pub messages: Vec<String>,
}

/// The shared state behind a [`SchemaRegistryClient`].
#[derive(Debug)]
struct Inner {
    /// The settings.
    config: RegistryConfig,
    /// The HTTP client (keep-alive pool).
    http: HttpClient,
    /// The `Authorization` header's value for basic and static bearer
    /// credentials (redacted in `Debug`).
    authorization: Option<Secret>,
    /// The URL that answered last: where the next request starts.
    active: AtomicUsize,
    /// The caches.
    caches: Mutex<Caches>,
}

/// A client of a Confluent-compatible schema registry (Confluent Schema
/// Registry, Apicurio's `ccompat` API, Karapace), with bounded caches.
/// Cheap to clone: clones share the caches and connections.
///
/// Requests answered 5xx or 429, and those that reach no URL, are retried
/// `max.retries` times with exponential backoff; the next URL of
/// `schema.registry.url` is tried when one cannot be reached; a 4xx is
/// never retried.
#[derive(Debug, Clone)]
pub struct SchemaRegistryClient {
    inner: Arc<Inner>,
}

impl SchemaRegistryClient {
    /// A client for `schema.registry.url` and the other `schema.registry.*`,
    /// `basic.auth.*` and `bearer.auth.*` keys it takes from `props`.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::SchemaRegistryClient;
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props).unwrap();
    /// assert_eq!(client.config().max_retries, 3);
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        Ok(Self::new(RegistryConfig::from_properties(props)?))
    }

    /// A client with these settings.
    ///
    /// ```
    /// use kafka_client::http::HttpUrl;
    /// use kafka_schema_registry::{RegistryConfig, SchemaRegistryClient};
    /// let url = HttpUrl::parse("http://127.0.0.1:8081").unwrap();
    /// let client = SchemaRegistryClient::new(RegistryConfig::new(vec![url]));
    /// assert_eq!(client.config().urls.len(), 1);
    /// ```
    pub fn new(config: RegistryConfig) -> Self {
        use base64::Engine as _;
        let authorization = match &config.auth {
            RegistryAuth::None => None,
            RegistryAuth::Basic(info) => Some(Secret::new(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(info.expose())
            ))),
            RegistryAuth::Bearer(token) => Some(Secret::new(format!("Bearer {}", token.expose()))),
            // Fetched per request from the refreshing provider's cache.
            RegistryAuth::OAuthBearer(_) => None,
        };
        let http = HttpClient::new(HttpConfig {
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
            tls: config.tls.clone(),
            ..HttpConfig::default()
        });
        let caches = Caches::new(
            config.max_schemas_per_subject,
            config.latest_cache_size,
            config.latest_cache_ttl,
        );
        Self {
            inner: Arc::new(Inner {
                config,
                http,
                authorization,
                active: AtomicUsize::new(0),
                caches: Mutex::new(caches),
            }),
        }
    }

    /// The settings.
    pub fn config(&self) -> &RegistryConfig {
        &self.inner.config
    }

    fn caches(&self) -> std::sync::MutexGuard<'_, Caches> {
        self.inner.caches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `schema` under `subject` (or finds it registered); its id.
    /// Cached per (subject, schema, normalize).
    pub async fn register(
        &self,
        subject: &str,
        schema: &Schema,
        normalize: bool,
    ) -> Result<i32, RegistryError> {
        let key = (schema.clone(), normalize);
        if let Some(id) = self
            .caches()
            .peek_subject(subject)
            .and_then(|c| c.ids.get(&key))
        {
            return Ok(*id);
        }
        let path = format!(
            "/subjects/{}/versions?normalize={normalize}",
            segment(subject)
        );
        let ex = self.exchange(Method::Post, &path, Some(subject), None);
        let body = self
            .call(Method::Post, &path, Some(rest::schema_body(schema)), &ex)
            .await?;
        let id = ex.id(&body)?;
        let mut caches = self.caches();
        caches.subject(subject).ids.insert(key, id);
        caches
            .by_id
            .insert(SchemaId::Id(id), Arc::new(schema.clone()));
        Ok(id)
    }

    /// Finds `schema` registered under `subject`: its id and version.
    /// Cached per (subject, schema, normalize).
    pub async fn lookup(
        &self,
        subject: &str,
        schema: &Schema,
        normalize: bool,
    ) -> Result<RegisteredSchema, RegistryError> {
        let key = (schema.clone(), normalize);
        if let Some(s) = self
            .caches()
            .peek_subject(subject)
            .and_then(|c| c.lookups.get(&key))
        {
            return Ok(s.clone());
        }
        let path = format!("/subjects/{}?normalize={normalize}", segment(subject));
        let ex = self.exchange(Method::Post, &path, Some(subject), None);
        let body = self
            .call(Method::Post, &path, Some(rest::schema_body(schema)), &ex)
            .await
            .map_err(|e| match e {
                // Confluent answers an unknown schema under a known subject
                // with 40403, Apicurio with 40401 for both.
                RegistryError::SubjectNotFound(_) => RegistryError::SchemaNotFound(format!(
                    "no such schema under subject {subject:?}"
                )),
                e => e,
            })?;
        let found = ex.registered(&body)?;
        let mut caches = self.caches();
        caches.subject(subject).lookups.insert(key, found.clone());
        caches
            .by_id
            .insert(SchemaId::Id(found.id), Arc::new(found.schema.clone()));
        Ok(found)
    }

    /// The schema with this id. Cached.
    pub async fn schema_by_id(&self, id: i32) -> Result<Arc<Schema>, RegistryError> {
        self.schema(SchemaId::Id(id)).await
    }

    /// The schema a record's frame names: by registry id
    /// (`GET /schemas/ids/{id}`) or by GUID (`GET /schemas/guids/{guid}`,
    /// the header form of Confluent's newer serializers). Cached.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{SchemaRegistryClient, wire};
    /// # async fn run(record_value: &[u8], header: Option<&[u8]>) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let frame = wire::read_frame(record_value, header, false)?;
    /// let schema = client.schema(frame.id).await?;
    /// println!("{} schema: {}", schema.schema_type.as_str(), schema.schema);
    /// # Ok(()) }
    /// ```
    pub async fn schema(&self, id: SchemaId) -> Result<Arc<Schema>, RegistryError> {
        if let Some(s) = self.caches().by_id.get(&id) {
            return Ok(s.clone());
        }
        self.fetch_schema(id, rest::schema_path(id)).await
    }

    /// The schema with this id, asked for as registered under `subject`
    /// (`?subject=`, for registries with schema contexts). Cached by id.
    pub async fn schema_by_id_in_subject(
        &self,
        id: i32,
        subject: &str,
    ) -> Result<Arc<Schema>, RegistryError> {
        if let Some(s) = self.caches().by_id.get(&SchemaId::Id(id)) {
            return Ok(s.clone());
        }
        let path = format!("/schemas/ids/{id}?subject={}", segment(subject));
        self.fetch_schema(SchemaId::Id(id), path).await
    }

    async fn fetch_schema(&self, id: SchemaId, path: String) -> Result<Arc<Schema>, RegistryError> {
        let ex = self.exchange(Method::Get, &path, None, None);
        let body = self.call(Method::Get, &path, None, &ex).await?;
        let schema = Arc::new(ex.schema(&body)?);
        self.caches().by_id.insert(id, schema.clone());
        Ok(schema)
    }

    /// The schema with this id and everything it refers to, transitively
    /// (each reference fetched by subject and version), dependencies
    /// first. Cached.
    pub async fn resolved_by_id(&self, id: i32) -> Result<Arc<ResolvedSchema>, RegistryError> {
        self.resolved(SchemaId::Id(id)).await
    }

    /// The schema a frame names (by id or by GUID, as [`schema`](Self::schema)
    /// fetches it) and everything it refers to, transitively, dependencies
    /// first. Cached.
    pub async fn resolved(&self, id: SchemaId) -> Result<Arc<ResolvedSchema>, RegistryError> {
        if let Some(r) = self.caches().resolved.get(&id) {
            return Ok(r.clone());
        }
        let schema = self.schema(id).await?;
        let resolved = Arc::new(self.resolve((*schema).clone()).await?);
        self.caches().resolved.insert(id, resolved.clone());
        Ok(resolved)
    }

    /// `schema` with every schema it refers to, transitively.
    pub(crate) async fn resolve(&self, schema: Schema) -> Result<ResolvedSchema, RegistryError> {
        let mut references = Vec::new();
        let mut seen = HashSet::new();
        self.resolve_references(&schema.references, &mut references, &mut seen)
            .await?;
        Ok(ResolvedSchema { schema, references })
    }

    /// Appends `refs` and their references to `out`, dependencies first,
    /// each name once.
    fn resolve_references<'a>(
        &'a self,
        refs: &'a [SchemaReference],
        out: &'a mut Vec<(String, Schema)>,
        seen: &'a mut HashSet<String>,
    ) -> Pin<Box<dyn Future<Output = Result<(), RegistryError>> + Send + 'a>> {
        Box::pin(async move {
            for r in refs {
                if !seen.insert(r.name.clone()) {
                    continue;
                }
                let dep = self.version(&r.subject, r.version).await?;
                self.resolve_references(&dep.schema.references, out, seen)
                    .await?;
                out.push((r.name.clone(), dep.schema));
            }
            Ok(())
        })
    }

    /// The latest version under `subject` (cached for
    /// `latest.cache.ttl.sec`, forever by default).
    pub async fn latest_version(&self, subject: &str) -> Result<RegisteredSchema, RegistryError> {
        if let Some(s) = self.caches().latest(subject) {
            return Ok(s);
        }
        let path = format!("/subjects/{}/versions/latest", segment(subject));
        let ex = self.exchange(Method::Get, &path, Some(subject), Some(-1));
        let body = self.call(Method::Get, &path, None, &ex).await?;
        let s = ex.registered(&body)?;
        self.caches().set_latest(s.clone());
        Ok(s)
    }

    /// Version `version` of `subject` (cached).
    pub async fn version(
        &self,
        subject: &str,
        version: i32,
    ) -> Result<RegisteredSchema, RegistryError> {
        if let Some(s) = self
            .caches()
            .peek_subject(subject)
            .and_then(|c| c.versions.get(&version))
        {
            return Ok(s.clone());
        }
        let path = format!("/subjects/{}/versions/{version}", segment(subject));
        let ex = self.exchange(Method::Get, &path, Some(subject), Some(version));
        let body = self.call(Method::Get, &path, None, &ex).await?;
        let s = ex.registered(&body)?;
        self.caches()
            .subject(subject)
            .versions
            .insert(version, s.clone());
        Ok(s)
    }

    /// The versions registered under `subject` (not cached).
    pub async fn versions(&self, subject: &str) -> Result<Vec<i32>, RegistryError> {
        let path = format!("/subjects/{}/versions", segment(subject));
        let ex = self.exchange(Method::Get, &path, Some(subject), None);
        ex.json(&self.call(Method::Get, &path, None, &ex).await?)
    }

    /// Every subject (not cached).
    pub async fn subjects(&self) -> Result<Vec<String>, RegistryError> {
        let path = "/subjects";
        let ex = self.exchange(Method::Get, path, None, None);
        ex.json(&self.call(Method::Get, path, None, &ex).await?)
    }

    /// The ids of the schemas that refer to version `version` of
    /// `subject` (not cached).
    pub async fn referenced_by(
        &self,
        subject: &str,
        version: i32,
    ) -> Result<Vec<i32>, RegistryError> {
        let path = format!(
            "/subjects/{}/versions/{version}/referencedby",
            segment(subject)
        );
        let ex = self.exchange(Method::Get, &path, Some(subject), Some(version));
        ex.json(&self.call(Method::Get, &path, None, &ex).await?)
    }

    /// Deletes `subject`: soft (its versions can be listed as deleted), or
    /// `permanent` (after a soft delete). The versions deleted.
    pub async fn delete_subject(
        &self,
        subject: &str,
        permanent: bool,
    ) -> Result<Vec<i32>, RegistryError> {
        let path = format!("/subjects/{}?permanent={permanent}", segment(subject));
        let ex = self.exchange(Method::Delete, &path, Some(subject), None);
        let versions = ex.json(&self.call(Method::Delete, &path, None, &ex).await?)?;
        self.caches().forget_subject(subject);
        Ok(versions)
    }

    /// Deletes version `version` of `subject` (soft, or `permanent` after a
    /// soft delete); the version deleted.
    pub async fn delete_version(
        &self,
        subject: &str,
        version: i32,
        permanent: bool,
    ) -> Result<i32, RegistryError> {
        let path = format!(
            "/subjects/{}/versions/{version}?permanent={permanent}",
            segment(subject)
        );
        let ex = self.exchange(Method::Delete, &path, Some(subject), Some(version));
        let deleted = ex.json(&self.call(Method::Delete, &path, None, &ex).await?)?;
        self.caches().forget_subject(subject);
        Ok(deleted)
    }

    /// Whether `schema` could be registered under `subject` as the next
    /// version after `version` (`None`: the latest), with the registry's
    /// reasons when not.
    pub async fn test_compatibility(
        &self,
        subject: &str,
        version: Option<i32>,
        schema: &Schema,
    ) -> Result<CompatibilityCheck, RegistryError> {
        let v = version.map_or("latest".to_string(), |v| v.to_string());
        let path = format!(
            "/compatibility/subjects/{}/versions/{v}?verbose=true",
            segment(subject)
        );
        let ex = self.exchange(Method::Post, &path, Some(subject), version);
        let body = self
            .call(Method::Post, &path, Some(rest::schema_body(schema)), &ex)
            .await?;
        let c: rest::WireCompatibility = ex.json(&body)?;
        Ok(CompatibilityCheck {
            is_compatible: c.is_compatible,
            messages: c.messages,
        })
    }

    /// The compatibility level of `subject` (falling back on the global
    /// one), or the global level for `None`.
    pub async fn compatibility_level(
        &self,
        subject: Option<&str>,
    ) -> Result<CompatibilityLevel, RegistryError> {
        let path = match subject {
            Some(s) => format!("/config/{}?defaultToGlobal=true", segment(s)),
            None => "/config".to_string(),
        };
        let ex = self.exchange(Method::Get, &path, subject, None);
        let v: serde_json::Value = ex.json(&self.call(Method::Get, &path, None, &ex).await?)?;
        let name = v["compatibilityLevel"]
            .as_str()
            .or(v["compatibility"].as_str())
            .unwrap_or_default();
        CompatibilityLevel::parse(name).ok_or_else(|| RegistryError::Malformed {
            request: ex.request.clone(),
            reason: format!("unknown compatibility level {name:?}"),
        })
    }

    /// Sets the compatibility level of `subject`, or the global one for
    /// `None`.
    pub async fn set_compatibility_level(
        &self,
        subject: Option<&str>,
        level: CompatibilityLevel,
    ) -> Result<(), RegistryError> {
        let path = match subject {
            Some(s) => format!("/config/{}", segment(s)),
            None => "/config".to_string(),
        };
        let ex = self.exchange(Method::Put, &path, subject, None);
        let body = serde_json::json!({ "compatibility": level.as_str() }).to_string();
        self.call(Method::Put, &path, Some(body.into_bytes()), &ex)
            .await?;
        Ok(())
    }

    /// The registry's mode (`READWRITE`, `READONLY`, `IMPORT`) for
    /// `subject`, or the global one for `None`.
    pub async fn mode(&self, subject: Option<&str>) -> Result<String, RegistryError> {
        let path = match subject {
            Some(s) => format!("/mode/{}?defaultToGlobal=true", segment(s)),
            None => "/mode".to_string(),
        };
        let ex = self.exchange(Method::Get, &path, subject, None);
        let v: serde_json::Value = ex.json(&self.call(Method::Get, &path, None, &ex).await?)?;
        v["mode"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| RegistryError::Malformed {
                request: ex.request.clone(),
                reason: "no mode in the answer".into(),
            })
    }

    fn exchange(
        &self,
        method: Method,
        path: &str,
        subject: Option<&str>,
        version: Option<i32>,
    ) -> Exchange {
        Exchange {
            request: format!("{} {path}", method.as_str()),
            subject: subject.map(str::to_string),
            version,
        }
    }

    /// Sends one request with the retries and failover; the body of a 2xx
    /// answer.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        ex: &Exchange,
    ) -> Result<Vec<u8>, RegistryError> {
        let config = &self.inner.config;
        let mut headers = vec![("Accept", rest::ACCEPT)];
        if body.is_some() {
            headers.push(("Content-Type", rest::CONTENT_TYPE));
        }
        let bearer;
        if let RegistryAuth::OAuthBearer(tokens) = &config.auth {
            use kafka_client::oauth::TokenProvider as _;
            let token = tokens
                .token()
                .await
                .map_err(|e| RegistryError::Credentials {
                    retriable: e.is_retriable(),
                    message: e.to_string(),
                })?;
            bearer = format!("Bearer {}", token.value());
            headers.push(("Authorization", bearer.as_str()));
        } else if let Some(a) = &self.inner.authorization {
            headers.push(("Authorization", a.expose()));
        }
        for (k, v) in &config.extra_headers {
            headers.push((k.as_str(), v.as_str()));
        }
        let body = body.unwrap_or_default();
        let urls = config.urls.len().max(1);
        let mut attempts = 0u32;
        for retry in 0..=config.max_retries {
            let start = self.inner.active.load(Ordering::Relaxed);
            let mut last: Option<RegistryError> = None;
            for i in 0..urls {
                let index = (start + i) % urls;
                let Some(base) = config.urls.get(index) else {
                    break;
                };
                attempts += 1;
                let url = base.join(path);
                match self.inner.http.request(method, &url, &headers, &body).await {
                    Ok(r) if (200..300).contains(&r.status) => {
                        self.inner.active.store(index, Ordering::Relaxed);
                        return Ok(r.body);
                    }
                    Ok(r) => {
                        self.inner.active.store(index, Ordering::Relaxed);
                        let e = ex.error(r.status, &r.body, attempts);
                        if !rest::is_retriable_status(r.status) {
                            return Err(e);
                        }
                        last = Some(e);
                        // The registry answered: wait before asking again.
                        break;
                    }
                    Err(error) if error.is_retriable() => {
                        tracing::debug!(%url, %error, "schema registry unreachable; trying the next URL");
                        last = Some(RegistryError::Connection { error, attempts });
                    }
                    Err(error) => return Err(RegistryError::Connection { error, attempts }),
                }
            }
            let Some(e) = last else {
                break;
            };
            if retry == config.max_retries {
                return Err(with_attempts(e, attempts));
            }
            let wait = backoff(config.retries_wait, config.retries_max_wait, retry);
            tracing::debug!(request = %ex.request, error = %e, ?wait, "schema registry request failed; retrying");
            tokio::time::sleep(wait).await;
        }
        Err(RegistryError::Malformed {
            request: ex.request.clone(),
            reason: "no schema.registry.url to ask".into(),
        })
    }
}

/// The wait before retry `retry` (0-based): `first * 2^retry`, at most
/// `max`.
fn backoff(first: Duration, max: Duration, retry: u32) -> Duration {
    first
        .checked_mul(1u32 << retry.min(20))
        .unwrap_or(max)
        .min(max)
}

/// `e` with the final number of attempts.
fn with_attempts(e: RegistryError, n: u32) -> RegistryError {
    match e {
        RegistryError::Connection { error, .. } => RegistryError::Connection { error, attempts: n },
        RegistryError::Unavailable {
            status,
            code,
            message,
            ..
        } => RegistryError::Unavailable {
            status,
            code,
            message,
            attempts: n,
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_print() {
        let mut props = Properties::new([
            ("schema.registry.url", "http://sr"),
            ("basic.auth.credentials.source", "USER_INFO"),
            ("basic.auth.user.info", "fred:hunter2"),
        ]);
        let client = SchemaRegistryClient::from_properties(&mut props).unwrap();
        let shown = format!("{client:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("ZnJlZDpodW50ZXIy"),
            "{shown}"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let (first, max) = (Duration::from_millis(100), Duration::from_millis(1000));
        let waits: Vec<_> = (0..6).map(|r| backoff(first, max, r).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(backoff(first, max, 63), max);
    }

    #[test]
    fn compatibility_levels_by_name() {
        for (name, level) in CompatibilityLevel::NAMES {
            assert_eq!(CompatibilityLevel::parse(name), Some(level));
            assert_eq!(level.as_str(), name);
        }
        assert_eq!(
            CompatibilityLevel::parse("backward"),
            Some(CompatibilityLevel::Backward)
        );
        assert_eq!(CompatibilityLevel::parse("SOMETIMES"), None);
    }
}
