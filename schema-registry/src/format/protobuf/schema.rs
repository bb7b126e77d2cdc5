//! A Protobuf schema: a root `.proto` file with its imports compiled into a
//! descriptor pool, the form a serializer registers, and Confluent's message
//! indexes.

use crate::error::SerdeError;
use crate::schema::{LocalReference, LocalSchema, ResolvedSchema, SchemaType};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost::Message as _;
use prost_reflect::prost_types;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FileDescriptor, MessageDescriptor, ReflectMessage,
};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
use std::collections::HashMap;
use std::fmt;

/// The name the root file of a schema text gets while compiling: the
/// registry stores a schema without a file name, and Confluent's readers
/// name it `default` likewise. Chosen so that no import path collides.
const ROOT_FILE_NAME: &str = "schema-registry-root.proto";

/// The `FileDescriptorProto` field numbers a message's descriptor path is
/// made of: `message_type` in a file, `nested_type` in a message.
const FILE_MESSAGE_TYPE: i32 = 4;
const MESSAGE_NESTED_TYPE: i32 = 3;

/// A Protobuf schema: one root `.proto` file and every file it imports,
/// compiled at run time (no `protoc`).
///
/// Built from `.proto` text ([`from_proto`](Self::from_proto)), from a
/// prost-generated type ([`from_message`](Self::from_message)), or from a
/// schema fetched from the registry
/// ([`from_resolved`](Self::from_resolved)), whose text may be `.proto`
/// source or a base64 `FileDescriptorProto` (both are what Confluent's and
/// Apicurio's registries store).
///
/// ```
/// use kafka_schema_registry::ProtobufSchema;
///
/// let schema = ProtobufSchema::from_proto(
///     r#"syntax = "proto3";
///        package shop;
///        import "money.proto";
///        message Order { message Line { Money price = 1; } repeated Line lines = 1; }"#,
///     &[("money.proto", r#"syntax = "proto3"; package shop; message Money { int64 cents = 1; }"#)],
/// )?;
/// assert_eq!(schema.message_indexes("shop.Order.Line"), Some(vec![0, 0]));
/// let local = schema.local_schema(true);
/// assert_eq!(local.references[0].name, "money.proto");
/// # Ok::<(), kafka_schema_registry::SerdeError>(())
/// ```
#[derive(Clone)]
pub struct ProtobufSchema {
    /// Every file the root imports, transitively, and the root itself.
    pool: DescriptorPool,
    /// The root file: the one whose messages the message indexes count.
    root: FileDescriptor,
    /// The `.proto` text of the files given as text, by file name: these
    /// are registered as text, every other file as a base64 descriptor.
    texts: HashMap<String, String>,
}

impl fmt::Debug for ProtobufSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtobufSchema")
            .field("root", &self.root.name())
            .field("package", &self.root.package_name())
            .field(
                "messages",
                &self
                    .root
                    .messages()
                    .map(|m| m.full_name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Why a message-index path names no message of a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageIndexError {
    /// An empty path (Confluent writes `[0]` for the first message, never
    /// an empty one).
    #[error("empty message-index path")]
    Empty,
    /// An index beyond the messages at its level.
    #[error(
        "message index {index} at depth {depth} of {indexes:?} is out of range: {within} has {available} message type(s) there"
    )]
    OutOfRange {
        /// The whole path.
        indexes: Vec<i32>,
        /// The position in the path of the failing index.
        depth: usize,
        /// The failing index.
        index: i32,
        /// The file or message searched.
        within: String,
        /// How many message types it has at that level.
        available: usize,
    },
}

impl ProtobufSchema {
    /// Compiles `.proto` text whose imports are given as (import path,
    /// text) pairs; the well-known `google/protobuf/*.proto` files are
    /// available without being given. An import given as a base64
    /// `FileDescriptorProto` is accepted too.
    ///
    /// ```
    /// use kafka_schema_registry::ProtobufSchema;
    ///
    /// let schema = ProtobufSchema::from_proto(
    ///     r#"syntax = "proto3";
    ///        import "google/protobuf/timestamp.proto";
    ///        message Event { google.protobuf.Timestamp at = 1; }"#,
    ///     &[],
    /// )?;
    /// assert!(schema.message("Event").is_some());
    /// // Well-known types are not registered by default (`skip.known.types`).
    /// assert!(schema.local_schema(true).references.is_empty());
    /// # Ok::<(), kafka_schema_registry::SerdeError>(())
    /// ```
    pub fn from_proto(text: &str, imports: &[(&str, &str)]) -> Result<Self, SerdeError> {
        let mut sources = HashMap::with_capacity(imports.len() + 1);
        for &(name, source) in imports {
            sources.insert(name.to_owned(), source.to_owned());
        }
        sources.insert(ROOT_FILE_NAME.to_owned(), text.to_owned());
        Self::compile(sources)
    }

    /// The schema of a fetched schema: its text and every schema it refers
    /// to, each `.proto` text or a base64 `FileDescriptorProto`.
    pub fn from_resolved(resolved: &ResolvedSchema) -> Result<Self, SerdeError> {
        if resolved.schema.schema_type != SchemaType::Protobuf {
            return Err(SerdeError::Schema {
                reason: format!(
                    "expected a PROTOBUF schema, the registry holds {}",
                    resolved.schema.schema_type
                ),
            });
        }
        let mut sources = HashMap::with_capacity(resolved.references.len() + 1);
        for (name, schema) in &resolved.references {
            sources.insert(name.clone(), schema.schema.clone());
        }
        sources.insert(ROOT_FILE_NAME.to_owned(), resolved.schema.schema.clone());
        Self::compile(sources)
    }

    /// The schema of a prost-generated message type (its file and the
    /// files that file imports), registered as base64 descriptors.
    pub fn from_message<T: ReflectMessage + Default>() -> Self {
        Self::from_file(T::default().descriptor().parent_file())
    }

    /// The schema whose root is `file` (of any descriptor pool), registered
    /// as base64 descriptors.
    pub fn from_file(file: FileDescriptor) -> Self {
        Self {
            pool: file.parent_pool().clone(),
            root: file,
            texts: HashMap::new(),
        }
    }

    fn compile(sources: HashMap<String, String>) -> Result<Self, SerdeError> {
        let texts = sources
            .iter()
            .filter(|(_, text)| !looks_like_base64(text))
            .map(|(name, text)| (name.clone(), text.clone()))
            .collect();
        let mut resolver = ChainFileResolver::new();
        resolver.add(SourceResolver { sources });
        resolver.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        compiler
            .open_file(ROOT_FILE_NAME)
            .map_err(|e| SerdeError::Schema {
                reason: format!("the .proto schema does not compile: {e}"),
            })?;
        let pool = compiler.descriptor_pool();
        let root = pool
            .get_file_by_name(ROOT_FILE_NAME)
            .ok_or_else(|| SerdeError::Schema {
                reason: "the compiled schema lost its root file".into(),
            })?;
        Ok(Self { pool, root, texts })
    }

    /// The descriptor pool: the root file and everything it imports.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// The root file, whose messages the message indexes count.
    pub fn root_file(&self) -> &FileDescriptor {
        &self.root
    }

    /// A message type of this schema (or of a file it imports) by its full
    /// name (`package.Outer.Inner`).
    pub fn message(&self, full_name: &str) -> Option<MessageDescriptor> {
        self.pool.get_message_by_name(full_name)
    }

    /// Confluent's message indexes of a message type of the root file (its
    /// `toMessageIndexes`): at each nesting level, the message's index among
    /// the message types declared there, in file order (map entries count,
    /// as in Confluent's serializers without `normalize.schemas`). `None`
    /// when the root file declares no message of that name.
    ///
    /// Map entries sit where `protoc` puts them: among the nested types,
    /// at the map field's declaration. Confluent's Python, Go and Rust
    /// serializers, and its Java one with a generated class, count them the
    /// same way; its Java serializer given a schema as `.proto` text does
    /// not (it walks the parsed text, where a map is a field), so a message
    /// declared after a map field in the same message gets another index
    /// there. Declaring nested messages before map fields avoids the
    /// difference.
    pub fn message_indexes(&self, full_name: &str) -> Option<Vec<i32>> {
        let message = self.pool.get_message_by_name(full_name)?;
        if message.parent_file() != self.root {
            return None;
        }
        Some(indexes_of(&message))
    }

    /// The message type an index path names in the root file, the reverse
    /// of [`message_indexes`](Self::message_indexes).
    pub fn message_by_indexes(
        &self,
        indexes: &[i32],
    ) -> Result<MessageDescriptor, MessageIndexError> {
        let (&first, rest) = indexes.split_first().ok_or(MessageIndexError::Empty)?;
        let out_of_range = |depth: usize, index: i32, within: &str, available: usize| {
            MessageIndexError::OutOfRange {
                indexes: indexes.to_vec(),
                depth,
                index,
                within: within.to_owned(),
                available,
            }
        };
        let top = self.root.messages().len();
        let mut message = usize::try_from(first)
            .ok()
            .and_then(|i| self.root.messages().nth(i))
            .ok_or_else(|| out_of_range(0, first, "the schema's file", top))?;
        for (depth, &index) in rest.iter().enumerate() {
            let available = message.child_messages().len();
            message = usize::try_from(index)
                .ok()
                .and_then(|i| message.child_messages().nth(i))
                .ok_or_else(|| out_of_range(depth + 1, index, message.full_name(), available))?;
        }
        Ok(message)
    }

    /// What a serializer registers: the root file and, as references under
    /// their import paths (Confluent's `DefaultReferenceSubjectNameStrategy`),
    /// the files it imports, depth first. With `skip_known_types`
    /// (Confluent's `skip.known.types`, default true) the well-known
    /// `google/protobuf/*`, `google/type/*` and Confluent's own `confluent/*`
    /// files are left out: every reader has them built in.
    ///
    /// A file given as `.proto` text is registered as that text; any other
    /// (a generated type's, a fetched descriptor's) as its base64
    /// `FileDescriptorProto`, source info left out, as Confluent's Python,
    /// Go and Rust serializers do.
    pub fn local_schema(&self, skip_known_types: bool) -> LocalSchema {
        self.local_file(&self.root, skip_known_types)
    }

    fn local_file(&self, file: &FileDescriptor, skip_known_types: bool) -> LocalSchema {
        let references = file
            .dependencies()
            .filter(|dep| !(skip_known_types && is_known_type_file(dep.name())))
            .map(|dep| LocalReference {
                name: dep.name().to_owned(),
                schema: self.local_file(&dep, skip_known_types),
            })
            .collect();
        let schema = match self.texts.get(file.name()) {
            Some(text) => text.clone(),
            None => descriptor_base64(file),
        };
        LocalSchema {
            schema_type: SchemaType::Protobuf,
            schema,
            references,
        }
    }

    /// Decodes a payload written with the message type `indexes` name.
    pub(crate) fn decode(
        &self,
        indexes: &[i32],
        payload: &[u8],
    ) -> Result<DynamicMessage, DecodeFailure> {
        let message = self
            .message_by_indexes(indexes)
            .map_err(DecodeFailure::Index)?;
        DynamicMessage::decode(message, payload).map_err(DecodeFailure::Payload)
    }
}

/// Why [`ProtobufSchema::decode`] failed.
#[derive(Debug)]
pub(crate) enum DecodeFailure {
    /// The frame's indexes name no message of the writer schema.
    Index(MessageIndexError),
    /// The payload is not a valid encoding of that message.
    Payload(prost::DecodeError),
}

impl fmt::Display for DecodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeFailure::Index(e) => e.fmt(f),
            DecodeFailure::Payload(e) => write!(f, "malformed Protobuf payload: {e}"),
        }
    }
}

/// The message indexes of a message within its own file, from its
/// descriptor path (`[4, i, 3, j, 3, k, ...]`: `message_type[i]`, then
/// `nested_type[j]`, ...).
pub(crate) fn indexes_of(message: &MessageDescriptor) -> Vec<i32> {
    message
        .path()
        .chunks_exact(2)
        .map(|step| {
            debug_assert!(matches!(step[0], FILE_MESSAGE_TYPE | MESSAGE_NESTED_TYPE));
            step[1]
        })
        .collect()
}

/// Whether an import is one of the files every Confluent reader has built
/// in (Confluent's `skip.known.types`).
fn is_known_type_file(name: &str) -> bool {
    name.starts_with("google/protobuf/")
        || name.starts_with("google/type/")
        || name.starts_with("confluent/")
}

/// A file's descriptor as Confluent's non-Java serializers register it:
/// base64 of the serialized `FileDescriptorProto`, without source info, with
/// option extensions kept.
fn descriptor_base64(file: &FileDescriptor) -> String {
    let mut proto = DynamicMessage::decode(
        prost_types::FileDescriptorProto::default().descriptor(),
        file.encode_to_vec().as_slice(),
    );
    let bytes = match proto.as_mut() {
        Ok(proto) => {
            proto.clear_field_by_name("source_code_info");
            proto.encode_to_vec()
        }
        // A descriptor the pool itself encoded always decodes; keep the
        // typed form (without option extensions) should that ever change.
        Err(_) => prost_types::FileDescriptorProto {
            source_code_info: None,
            ..file.file_descriptor_proto().clone()
        }
        .encode_to_vec(),
    };
    BASE64.encode(bytes)
}

/// Whether a schema string is a base64 descriptor rather than `.proto`
/// text: `.proto` text always has a space, `;`, `=` in the middle or a
/// quote, none of which base64 allows.
fn looks_like_base64(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty() && BASE64.decode(text).is_ok()
}

/// Opens schema texts by file name: `.proto` text, or a base64
/// `FileDescriptorProto` (renamed to the name it is imported by).
struct SourceResolver {
    /// The texts by file name.
    sources: HashMap<String, String>,
}

impl FileResolver for SourceResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let text = self
            .sources
            .get(name)
            .ok_or_else(|| protox::Error::file_not_found(name))?;
        if looks_like_base64(text) {
            let bytes = BASE64.decode(text.trim()).map_err(protox::Error::new)?;
            let mut proto = prost_types::FileDescriptorProto::decode(bytes.as_slice())
                .map_err(protox::Error::new)?;
            proto.name = Some(name.to_owned());
            return Ok(File::from_file_descriptor_proto(proto));
        }
        File::from_source(name, text)
    }
}
