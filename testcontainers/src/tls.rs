//! Test certificates for TLS clusters, made with the `openssl` command line
//! tool: a private CA, a broker certificate for `127.0.0.1` / `localhost`
//! (in a PKCS#12 key store for the broker) and a client certificate for
//! mutual TLS, all ECDSA P-256.
//!
//! ```no_run
//! # fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
//! let dir = tempfile::tempdir().unwrap();
//! let files = kafka_testcontainers::tls::generate(dir.path())?;
//! assert!(files.ca_pem.starts_with(b"-----BEGIN CERTIFICATE-----"));
//! # Ok(()) }
//! ```

use crate::Result;
use crate::error::{HarnessError, IoContext};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The files [`generate`] writes.
#[derive(Clone)]
pub struct TlsFiles {
    /// The CA certificate, PEM (what clients trust).
    pub ca_pem_path: PathBuf,
    /// The CA certificate's contents.
    pub ca_pem: Vec<u8>,
    /// The broker's key and certificate chain, PKCS#12.
    pub broker_keystore_path: PathBuf,
    /// The password of [`Self::broker_keystore_path`] and of its key.
    pub broker_keystore_password: String,
    /// A client certificate signed by the CA (extended key usage
    /// `clientAuth`), PEM.
    pub client_cert_path: PathBuf,
    /// Its unencrypted PKCS#8 private key, PEM.
    pub client_key_path: PathBuf,
    /// The client certificate's contents.
    pub client_cert_pem: Vec<u8>,
    /// The client key's contents.
    pub client_key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles")
            .field("ca_pem_path", &self.ca_pem_path)
            .field("broker_keystore_path", &self.broker_keystore_path)
            .field("client_cert_path", &self.client_cert_path)
            .field("client_key_path", &self.client_key_path)
            .finish_non_exhaustive()
    }
}

const OPENSSL_CNF: &str = "\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = kafka-eos test CA
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
";

/// Generates a fresh CA, broker and client certificates (valid 10 years)
/// into `dir`, which must exist. Needs `openssl` on the `PATH`.
///
/// ```no_run
/// # fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let files = kafka_testcontainers::tls::generate(dir.path())?; // runs `openssl`
/// assert!(files.broker_keystore_path.starts_with(dir.path()));
/// # Ok(()) }
/// ```
pub fn generate(dir: &Path) -> Result<TlsFiles> {
    let p = |name: &str| dir.join(name);
    std::fs::write(p("openssl.cnf"), OPENSSL_CNF)
        .ctx(|| format!("writing {}", p("openssl.cnf").display()))?;
    let cnf = p("openssl.cnf");
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let password = "kafka-eos-test";

    let mut ca = openssl();
    ca.args(["req", "-x509", "-config"])
        .arg(&cnf)
        .args(["-extensions", "ca", "-nodes", "-days", "3650"])
        .args(ec)
        .arg("-keyout")
        .arg(p("ca.key"))
        .arg("-out")
        .arg(p("ca.pem"));
    run(ca, "create the CA")?;

    for (who, cn) in [("broker", "localhost"), ("client", "kafka-eos-client")] {
        let mut csr = openssl();
        csr.args(["req", "-new", "-config"])
            .arg(&cnf)
            .args(["-nodes", "-subj", &format!("/CN={cn}")])
            .args(ec)
            .arg("-keyout")
            .arg(p(&format!("{who}.key")))
            .arg("-out")
            .arg(p(&format!("{who}.csr")));
        run(csr, &format!("create the {who} key"))?;
        let mut sign = openssl();
        sign.args(["x509", "-req", "-days", "3650", "-set_serial"])
            .arg(random_serial()?)
            .arg("-in")
            .arg(p(&format!("{who}.csr")))
            .arg("-CA")
            .arg(p("ca.pem"))
            .arg("-CAkey")
            .arg(p("ca.key"))
            .arg("-extfile")
            .arg(&cnf)
            .args([
                "-extensions",
                if who == "broker" { "server" } else { "client" },
            ])
            .arg("-out")
            .arg(p(&format!("{who}.pem")));
        run(sign, &format!("sign the {who} certificate"))?;
    }

    let mut p12 = openssl();
    p12.args(["pkcs12", "-export", "-name", "broker", "-in"])
        .arg(p("broker.pem"))
        .arg("-inkey")
        .arg(p("broker.key"))
        .arg("-certfile")
        .arg(p("ca.pem"))
        .arg("-out")
        .arg(p("broker.p12"))
        .args(["-passout", &format!("pass:{password}")]);
    run(p12, "export the broker key store")?;

    let read = |name: &str| std::fs::read(p(name)).ctx(|| format!("reading {name}"));
    Ok(TlsFiles {
        ca_pem: read("ca.pem")?,
        client_cert_pem: read("client.pem")?,
        client_key_pem: read("client.key")?,
        ca_pem_path: p("ca.pem"),
        broker_keystore_path: p("broker.p12"),
        broker_keystore_password: password.into(),
        client_cert_path: p("client.pem"),
        client_key_path: p("client.key"),
    })
}

fn openssl() -> Command {
    let mut cmd = Command::new("openssl");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("OPENSSL_CONF");
    cmd
}

fn run(mut cmd: Command, what: &str) -> Result<()> {
    let out = cmd.output().map_err(|e| HarnessError::Process {
        what: format!("openssl ({what})"),
        message: format!("cannot run openssl (is it installed and on the PATH?): {e}"),
    })?;
    if !out.status.success() {
        return Err(HarnessError::Process {
            what: format!("openssl ({what})"),
            message: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(())
}

/// A random positive 64-bit serial number in hex.
fn random_serial() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ctx(|| "reading /dev/urandom".into())?;
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    Ok(format!("0x{}", hex(&bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_pem_files() {
        if Command::new("openssl").arg("version").output().is_err() {
            eprintln!("openssl not installed; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = generate(dir.path()).unwrap();
        assert!(f.ca_pem.starts_with(b"-----BEGIN CERTIFICATE-----"));
        assert!(f.client_key_pem.starts_with(b"-----BEGIN PRIVATE KEY-----"));
        assert!(f.broker_keystore_path.is_file());
        // The broker certificate verifies against the CA.
        let out = Command::new("openssl")
            .args(["verify", "-CAfile"])
            .arg(&f.ca_pem_path)
            .arg(dir.path().join("broker.pem"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}
