//! The operating system's trust store in tests: a test CA installed into it
//! for the test's duration, and the check that the client reads it.

use kafka_testcontainers::unique_name;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fails unless the client reads the system trust store: `SSL_CERT_FILE` /
/// `SSL_CERT_DIR`, when set elsewhere, replace the store that
/// update-ca-certificates maintains.
pub fn assert_system_store_is_read() {
    for (var, system) in [
        ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
        ("SSL_CERT_DIR", "/etc/ssl/certs"),
    ] {
        if let Some(v) = std::env::var_os(var) {
            assert_eq!(
                Path::new(&v),
                Path::new(system),
                "{var} points away from the system trust store; unset it for this test"
            );
        }
    }
}

/// A CA installed into the operating system's trust store
/// (`/usr/local/share/ca-certificates` + `update-ca-certificates`) until
/// dropped, also when the test fails.
pub struct InstalledCa {
    /// The certificate file added.
    path: PathBuf,
}

impl InstalledCa {
    /// Installs `ca_pem` (the test runs as root).
    pub fn install(ca_pem: &[u8]) -> InstalledCa {
        let path = PathBuf::from(format!(
            "/usr/local/share/ca-certificates/{}.crt",
            unique_name("kafka-eos-test-ca")
        ));
        std::fs::write(&path, ca_pem).unwrap_or_else(|e| {
            panic!(
                "installing the test CA at {} (the test runs as root): {e}",
                path.display()
            )
        });
        let installed = InstalledCa { path };
        update_ca_certificates();
        installed
    }
}

impl Drop for InstalledCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        update_ca_certificates();
    }
}

fn update_ca_certificates() {
    let out = Command::new("update-ca-certificates")
        .output()
        .expect("run update-ca-certificates (package ca-certificates)");
    assert!(out.status.success(), "update-ca-certificates: {out:?}");
}
