//! AWS credentials as the AWS SDKs find them, without an SDK: the
//! environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`), then the shared credentials file
//! (`~/.aws/credentials`, or `AWS_SHARED_CREDENTIALS_FILE`), then the shared
//! config file (`~/.aws/config`, or `AWS_CONFIG_FILE`), in the profile
//! `AWS_PROFILE` (default `default`).

use super::MskIamError;
use crate::Secret;
use std::path::PathBuf;

/// AWS credentials: an access key and, for temporary credentials, a session
/// token.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    /// The access key id (`AKIA…`, `ASIA…` for temporary credentials).
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Secret,
    /// The session token of temporary credentials.
    pub session_token: Option<Secret>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key)
            .field("session_token", &self.session_token)
            .finish()
    }
}

impl AwsCredentials {
    /// Static credentials.
    ///
    /// ```
    /// use kafka_client::AwsCredentials;
    /// let creds = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    /// assert!(!format!("{creds:?}").contains("EXAMPLEKEY"), "the secret never prints");
    /// ```
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            secret_access_key: Secret::new(secret_access_key),
            session_token: None,
        }
    }

    /// With the session token of temporary credentials.
    pub fn session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(Secret::new(token));
        self
    }

    /// The credentials of this process's environment and shared files, in
    /// the SDKs' order (see the module documentation). Read on each call,
    /// so rotated credentials are picked up.
    pub fn from_environment() -> Result<Self, MskIamError> {
        Self::resolve(&|name| std::env::var(name).ok())
    }

    /// [`Self::from_environment`] over the variables `var` gives (`HOME`
    /// included): testable without touching the process environment.
    pub(crate) fn resolve(var: &dyn Fn(&str) -> Option<String>) -> Result<Self, MskIamError> {
        let non_empty = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        match (
            non_empty("AWS_ACCESS_KEY_ID"),
            non_empty("AWS_SECRET_ACCESS_KEY"),
        ) {
            (Some(id), Some(secret)) => {
                let mut c = Self::new(id.trim(), secret.trim());
                c.session_token = non_empty("AWS_SESSION_TOKEN").map(|t| Secret::new(t.trim()));
                return Ok(c);
            }
            (Some(_), None) => {
                return Err(MskIamError::IncompleteCredentials {
                    found_in: "the environment".into(),
                    missing: "AWS_SECRET_ACCESS_KEY",
                });
            }
            (None, Some(_)) => {
                return Err(MskIamError::IncompleteCredentials {
                    found_in: "the environment".into(),
                    missing: "AWS_ACCESS_KEY_ID",
                });
            }
            (None, None) => {}
        }
        let profile = non_empty("AWS_PROFILE")
            .or_else(|| non_empty("AWS_DEFAULT_PROFILE"))
            .unwrap_or_else(|| "default".into());
        let home = non_empty("HOME").map(PathBuf::from);
        let file = |override_var: &str, name: &str| {
            non_empty(override_var)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".aws").join(name)))
        };
        let mut searched = Vec::new();
        for (path, is_config) in [
            (file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), false),
            (file("AWS_CONFIG_FILE", "config"), true),
        ] {
            let Some(path) = path else { continue };
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(MskIamError::Unreadable {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    });
                }
            };
            searched.push(path.display().to_string());
            if let Some(c) = from_profile(&text, &profile, is_config, &path)? {
                return Ok(c);
            }
        }
        Err(MskIamError::NoCredentials {
            profile,
            searched: if searched.is_empty() {
                "no shared credentials or config file exists".into()
            } else {
                format!("profile not in {}", searched.join(", "))
            },
        })
    }
}

/// The credentials of `profile` in an INI file: `[name]` in the credentials
/// file, `[profile name]` (or `[default]`) in the config file. `None`
/// when the profile is absent or has no access key.
fn from_profile(
    text: &str,
    profile: &str,
    is_config: bool,
    path: &std::path::Path,
) -> Result<Option<AwsCredentials>, MskIamError> {
    let wanted = |section: &str| {
        let section = section.trim();
        if is_config {
            section
                .strip_prefix("profile ")
                .map(str::trim)
                .is_some_and(|s| s == profile)
                || (profile == "default" && section == "default")
        } else {
            section == profile
        }
    };
    let mut in_profile = false;
    let (mut id, mut secret, mut token) = (None, None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_profile = wanted(section);
            continue;
        }
        if !in_profile {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().to_string();
        match key.trim().to_ascii_lowercase().as_str() {
            "aws_access_key_id" => id = Some(value),
            "aws_secret_access_key" => secret = Some(value),
            "aws_session_token" => token = Some(value),
            _ => {}
        }
    }
    match (id, secret) {
        (Some(id), Some(secret)) => {
            let mut c = AwsCredentials::new(id, secret);
            c.session_token = token.filter(|t| !t.is_empty()).map(Secret::new);
            Ok(Some(c))
        }
        (None, None) => Ok(None),
        (id, _) => Err(MskIamError::IncompleteCredentials {
            found_in: format!("profile {profile:?} of {}", path.display()),
            missing: if id.is_none() {
                "aws_access_key_id"
            } else {
                "aws_secret_access_key"
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A fresh scratch directory in the system temp directory with an empty `.aws`.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kafka-eos-aws-credentials-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".aws")).unwrap();
        dir
    }

    /// A [`scratch`] directory whose `.aws/credentials` holds `credentials`.
    fn scratch_with_credentials(name: &str, credentials: &str) -> PathBuf {
        let dir = scratch(name);
        std::fs::write(dir.join(".aws/credentials"), credentials).unwrap();
        dir
    }

    fn resolve(vars: &[(&str, &str)]) -> Result<AwsCredentials, MskIamError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AwsCredentials::resolve(&|name| vars.get(name).cloned())
    }

    /// The environment's keys come first, with the session token.
    #[test]
    fn environment_credentials_win() {
        let home = scratch_with_credentials(
            "env",
            "[default]\naws_access_key_id = FROMFILE\naws_secret_access_key = s\n",
        );
        let c = resolve(&[
            ("HOME", home.to_str().unwrap()),
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "env-secret"),
            ("AWS_SESSION_TOKEN", "env-token"),
        ])
        .unwrap();
        assert_eq!(c.access_key_id, "AKIDENV");
        assert_eq!(c.secret_access_key.expose(), "env-secret");
        assert_eq!(
            c.session_token.as_ref().map(Secret::expose),
            Some("env-token")
        );
        // Half of a key pair in the environment is an error, not a fallback.
        let e = resolve(&[("AWS_ACCESS_KEY_ID", "AKIDENV")]).unwrap_err();
        assert!(matches!(
            e,
            MskIamError::IncompleteCredentials {
                missing: "AWS_SECRET_ACCESS_KEY",
                ..
            }
        ));
        let _ = std::fs::remove_dir_all(home);
    }

    /// `AWS_PROFILE` selects a section of the credentials file; the config
    /// file's `[profile name]` is read when the credentials file lacks it.
    #[test]
    fn shared_files_by_profile() {
        let home = scratch_with_credentials(
            "files",
            "# comment\n[default]\naws_access_key_id=AKIDDEFAULT\naws_secret_access_key=d\n\n[prod]\naws_access_key_id = AKIDPROD\naws_secret_access_key = p\naws_session_token = tok\n",
        );
        std::fs::write(
            home.join(".aws/config"),
            "[default]\nregion = us-east-1\n[profile staging]\naws_access_key_id = AKIDSTAGING\naws_secret_access_key = s\n",
        )
        .unwrap();
        let h = home.to_str().unwrap();
        let c = resolve(&[("HOME", h)]).unwrap();
        assert_eq!(c.access_key_id, "AKIDDEFAULT");
        assert!(c.session_token.is_none());
        let c = resolve(&[("HOME", h), ("AWS_PROFILE", "prod")]).unwrap();
        assert_eq!(
            (
                c.access_key_id.as_str(),
                c.session_token.as_ref().map(Secret::expose)
            ),
            ("AKIDPROD", Some("tok"))
        );
        let c = resolve(&[("HOME", h), ("AWS_PROFILE", "staging")]).unwrap();
        assert_eq!(c.access_key_id, "AKIDSTAGING");
        let e = resolve(&[("HOME", h), ("AWS_PROFILE", "nope")]).unwrap_err();
        assert!(
            matches!(&e, MskIamError::NoCredentials { profile, .. } if profile == "nope"),
            "{e}"
        );
        // The file locations can be overridden.
        let other = home.join("elsewhere");
        std::fs::write(
            &other,
            "[default]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = o\n",
        )
        .unwrap();
        let c = resolve(&[
            ("HOME", h),
            ("AWS_SHARED_CREDENTIALS_FILE", other.to_str().unwrap()),
        ])
        .unwrap();
        assert_eq!(c.access_key_id, "AKIDOTHER");
        let _ = std::fs::remove_dir_all(home);
    }

    /// No credentials anywhere: an error that says where it looked.
    #[test]
    fn nothing_found_says_so() {
        let home = scratch("none");
        let e = resolve(&[("HOME", home.to_str().unwrap())]).unwrap_err();
        assert!(matches!(e, MskIamError::NoCredentials { .. }), "{e}");
        assert!(e.to_string().contains("AWS_ACCESS_KEY_ID"), "{e}");
        let _ = std::fs::remove_dir_all(home);
    }
}
