//! The schema formats, one module each behind its feature.

#[cfg(feature = "json")]
pub(crate) mod json;
