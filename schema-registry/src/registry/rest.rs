//! Confluent's REST API on the wire, sans-IO: request paths and bodies,
//! answers parsed into the crate's types, error answers into
//! [`RegistryError`]s.

use super::error::RegistryError;
use crate::schema::{RegisteredSchema, Schema, SchemaReference, SchemaType};
use crate::wire::{SchemaId, uuid_text};
use serde::{Deserialize, Serialize};

/// The content type of Confluent's API.
pub(crate) const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// The `Accept` header Confluent's Java client sends.
pub(crate) const ACCEPT: &str = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5";

/// `s` as one path segment: everything but RFC 3986's unreserved
/// characters percent-encoded (a subject may hold `/`, `:` or spaces).
pub(crate) fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a schema by registry id (`/schemas/ids/{id}`) or by GUID
/// (`/schemas/guids/{guid}`, the GUID in its 8-4-4-4-12 text form).
pub(crate) fn schema_path(id: SchemaId) -> String {
    match id {
        SchemaId::Id(id) => format!("/schemas/ids/{id}"),
        SchemaId::Guid(guid) => format!("/schemas/guids/{}", uuid_text(&guid)),
    }
}

/// A reference as the API writes it.
#[derive(Debug, Serialize, Deserialize)]
struct WireReference {
    name: String,
    subject: String,
    version: i32,
}

/// A schema as the API writes it (register and lookup bodies, answers).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSchema {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    schema_type: Option<String>,
    schema: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    references: Vec<WireReference>,
}

/// The body of a register or lookup request: `schemaType` only when not
/// Avro, `references` only when there are some (as Confluent's client
/// writes them).
pub(crate) fn schema_body(schema: &Schema) -> Vec<u8> {
    let wire = WireSchema {
        subject: None,
        id: None,
        version: None,
        schema_type: (schema.schema_type != SchemaType::Avro)
            .then(|| schema.schema_type.as_str().to_string()),
        schema: schema.schema.clone(),
        references: schema
            .references
            .iter()
            .map(|r| WireReference {
                name: r.name.clone(),
                subject: r.subject.clone(),
                version: r.version,
            })
            .collect(),
    };
    serde_json::to_vec(&wire).unwrap_or_default()
}

/// What an answer is parsed for: names the request in errors.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// `GET /schemas/ids/1`, for messages.
    pub(crate) request: String,
    /// The subject the request is about, if any.
    pub(crate) subject: Option<String>,
    /// The version the request is about, if any.
    pub(crate) version: Option<i32>,
}

impl Exchange {
    fn malformed(&self, reason: impl ToString) -> RegistryError {
        RegistryError::Malformed {
            request: self.request.clone(),
            reason: reason.to_string(),
        }
    }

    /// Parses a 2xx answer's JSON as `T`.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(
        &self,
        body: &[u8],
    ) -> Result<T, RegistryError> {
        serde_json::from_slice(body).map_err(|e| self.malformed(e))
    }

    /// `{"id": N}`.
    pub(crate) fn id(&self, body: &[u8]) -> Result<i32, RegistryError> {
        #[derive(Deserialize)]
        struct Id {
            id: i32,
        }
        Ok(self.json::<Id>(body)?.id)
    }

    /// A schema (by id): `{"schema", "schemaType"?, "references"?}`.
    pub(crate) fn schema(&self, body: &[u8]) -> Result<Schema, RegistryError> {
        let w: WireSchema = self.json(body)?;
        self.to_schema(w.schema_type.as_deref(), w.schema, w.references)
    }

    /// A registered schema (a version, a lookup's answer).
    pub(crate) fn registered(&self, body: &[u8]) -> Result<RegisteredSchema, RegistryError> {
        let w: WireSchema = self.json(body)?;
        let (Some(id), Some(version)) = (w.id, w.version) else {
            return Err(self.malformed("no id or version"));
        };
        let subject = w
            .subject
            .or_else(|| self.subject.clone())
            .unwrap_or_default();
        let schema = self.to_schema(w.schema_type.as_deref(), w.schema, w.references)?;
        Ok(RegisteredSchema {
            id,
            subject,
            version,
            schema,
        })
    }

    fn to_schema(
        &self,
        schema_type: Option<&str>,
        schema: String,
        references: Vec<WireReference>,
    ) -> Result<Schema, RegistryError> {
        let schema_type = match schema_type {
            None => SchemaType::Avro,
            Some(t) => SchemaType::parse(t)
                .ok_or_else(|| self.malformed(format!("unknown schemaType {t:?}")))?,
        };
        Ok(Schema {
            schema_type,
            schema,
            references: references
                .into_iter()
                .map(|r| SchemaReference {
                    name: r.name,
                    subject: r.subject,
                    version: r.version,
                })
                .collect(),
        })
    }

    /// The error a non-2xx answer means, by Confluent's `error_code`
    /// (falling back on the HTTP status).
    pub(crate) fn error(&self, status: u16, body: &[u8], attempts: u32) -> RegistryError {
        #[derive(Deserialize)]
        struct ErrorBody {
            error_code: Option<i32>,
            message: Option<String>,
        }
        let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
        let code = parsed
            .as_ref()
            .and_then(|e| e.error_code)
            .unwrap_or(i32::from(status));
        let message = parsed
            .and_then(|e| e.message)
            .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(512)]).into());
        let subject = self.subject.clone().unwrap_or_default();
        match (status, code) {
            (_, 40401) => RegistryError::SubjectNotFound(subject),
            (_, 40402) => RegistryError::VersionNotFound {
                subject,
                version: self.version.unwrap_or(-1),
            },
            (_, 40403) => RegistryError::SchemaNotFound(message),
            (_, 42201) => RegistryError::InvalidSchema(message),
            (_, 42202) => RegistryError::InvalidVersion(message),
            (409, _) | (_, 40901) => RegistryError::Incompatible {
                subject,
                code,
                message,
            },
            (401 | 403, _) => RegistryError::Unauthorized {
                status,
                code,
                message,
            },
            (429, _) | (500.., _) => RegistryError::Unavailable {
                status,
                code,
                message,
                attempts,
            },
            // A 404 without Confluent's code: the path is unknown to the
            // server (not a registry, or an unsupported call).
            _ => RegistryError::Refused {
                status,
                code,
                message,
            },
        }
    }
}

/// Whether a status is worth retrying: 5xx and 429 (never another 4xx).
pub(crate) fn is_retriable_status(status: u16) -> bool {
    status == 429 || status >= 500
}

/// A compatibility check's answer (`?verbose=true`).
#[derive(Debug, Deserialize)]
pub(crate) struct WireCompatibility {
    pub(crate) is_compatible: bool,
    #[serde(default)]
    pub(crate) messages: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange() -> Exchange {
        Exchange {
            request: "POST /subjects/s".into(),
            subject: Some("orders-value".into()),
            version: Some(3),
        }
    }

    #[test]
    fn subjects_are_percent_encoded_as_one_segment() {
        assert_eq!(segment("orders-value"), "orders-value");
        assert_eq!(segment("a/b c:d"), "a%2Fb%20c%3Ad");
        assert_eq!(segment("ü"), "%C3%BC");
    }

    #[test]
    fn bodies_omit_avro_type_and_empty_references() {
        let avro = Schema {
            schema_type: SchemaType::Avro,
            schema: "\"string\"".into(),
            references: vec![],
        };
        assert_eq!(schema_body(&avro), br#"{"schema":"\"string\""}"#);
        let proto = Schema {
            schema_type: SchemaType::Protobuf,
            schema: "syntax = \"proto3\";".into(),
            references: vec![SchemaReference {
                name: "other.proto".into(),
                subject: "other.proto".into(),
                version: 2,
            }],
        };
        assert_eq!(
            String::from_utf8(schema_body(&proto)).unwrap(),
            r#"{"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";","references":[{"name":"other.proto","subject":"other.proto","version":2}]}"#
        );
    }

    #[test]
    fn answers_parse_into_schemas() {
        let e = exchange();
        assert_eq!(e.id(br#"{"id":7}"#).unwrap(), 7);
        let s = e
            .registered(br#"{"subject":"x","id":7,"version":2,"schema":"\"int\"","schemaType":"AVRO","references":[]}"#)
            .unwrap();
        assert_eq!((s.id, s.version, s.subject.as_str()), (7, 2, "x"));
        let s = e.schema(br#"{"schema":"{}","schemaType":"JSON"}"#).unwrap();
        assert_eq!(s.schema_type, SchemaType::Json);
        assert!(matches!(
            e.schema(br#"{"schema":"{}","schemaType":"XML"}"#),
            Err(RegistryError::Malformed { .. })
        ));
        assert!(matches!(
            e.id(b"<html>"),
            Err(RegistryError::Malformed { .. })
        ));
    }

    #[test]
    fn schemas_are_asked_for_by_id_or_by_guid_text() {
        assert_eq!(schema_path(SchemaId::Id(7)), "/schemas/ids/7");
        let mut guid = [0u8; 16];
        for (i, b) in guid.iter_mut().enumerate() {
            *b = 0x10 * (i as u8 % 16) + 0x0f;
        }
        assert_eq!(
            schema_path(SchemaId::Guid(guid)),
            "/schemas/guids/0f1f2f3f-4f5f-6f7f-8f9f-afbfcfdfefff"
        );
    }

    #[test]
    fn error_answers_map_by_code_then_status() {
        let e = exchange();
        let err = |status, body: &str| e.error(status, body.as_bytes(), 1);
        assert_eq!(
            err(404, r#"{"error_code":40401,"message":"Subject not found"}"#),
            RegistryError::SubjectNotFound("orders-value".into())
        );
        assert_eq!(
            err(404, r#"{"error_code":40402,"message":"v"}"#),
            RegistryError::VersionNotFound {
                subject: "orders-value".into(),
                version: 3
            }
        );
        assert!(matches!(
            err(404, r#"{"error_code":40403,"message":"Schema not found"}"#),
            RegistryError::SchemaNotFound(_)
        ));
        assert!(matches!(
            err(422, r#"{"error_code":42201,"message":"bad"}"#),
            RegistryError::InvalidSchema(m) if m == "bad"
        ));
        let incompatible = err(409, r#"{"error_code":409,"message":"nope"}"#);
        assert!(matches!(
            incompatible,
            RegistryError::Incompatible { code: 409, .. }
        ));
        assert!(!incompatible.is_retriable());
        assert!(matches!(
            err(401, "Unauthorized"),
            RegistryError::Unauthorized {
                status: 401,
                code: 401,
                ..
            }
        ));
        let unavailable = err(503, r#"{"error_code":50003,"message":"down"}"#);
        assert!(unavailable.is_retriable());
        assert_eq!(unavailable.error_code(), Some(50003));
        assert!(matches!(
            err(404, "<html>"),
            RegistryError::Refused { status: 404, .. }
        ));
        assert!(is_retriable_status(429) && is_retriable_status(502));
        assert!(!is_retriable_status(404) && !is_retriable_status(409));
    }
}
