//! Test certificates for TLS clusters, made with the `openssl` command line
//! tool: a private CA, a broker certificate for `127.0.0.1` / `localhost`
//! (in a PKCS#12 key store for the broker) and a client certificate for
//! mutual TLS (PEM, in a PKCS#12 key store, and with its key encrypted),
//! all ECDSA P-256; the CA also in a PKCS#12 trust store.
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
    /// The broker's certificate alone (`CN=localhost`, valid for
    /// `127.0.0.1` and `localhost`), PEM: other test servers (an https
    /// token endpoint) present it too.
    pub broker_cert_path: PathBuf,
    /// Its unencrypted PKCS#8 private key, PEM.
    pub broker_key_path: PathBuf,
    /// A client certificate signed by the CA (extended key usage
    /// `clientAuth`), PEM.
    pub client_cert_path: PathBuf,
    /// Its unencrypted PKCS#8 private key, PEM.
    pub client_key_path: PathBuf,
    /// The client certificate's contents.
    pub client_cert_pem: Vec<u8>,
    /// The client key's contents.
    pub client_key_pem: Vec<u8>,
    /// The client key and certificate (with the CA) in a PKCS#12 key store
    /// (`ssl.keystore.type=PKCS12`), as `openssl pkcs12 -export` writes it.
    pub client_keystore_path: PathBuf,
    /// The password of [`Self::client_keystore_path`].
    pub client_keystore_password: String,
    /// The client key encrypted with [`Self::client_key_password`]
    /// (`ENCRYPTED PRIVATE KEY`: PKCS#8, PBES2 with AES-256-CBC), PEM.
    pub client_key_encrypted_path: PathBuf,
    /// The password of [`Self::client_key_encrypted_path`]
    /// (`ssl.key.password`).
    pub client_key_password: String,
    /// The CA certificate alone in a PKCS#12 trust store
    /// (`ssl.truststore.type=PKCS12`).
    pub truststore_path: PathBuf,
    /// The password of [`Self::truststore_path`].
    pub truststore_password: String,
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

    // The client's identity and the CA in the other forms Java's clients
    // take: a PKCS#12 key store, an encrypted PKCS#8 key, a PKCS#12 trust
    // store.
    let client_store_password = "kafka-eos-client-store";
    let mut p12 = openssl();
    p12.args(["pkcs12", "-export", "-name", "client", "-in"])
        .arg(p("client.pem"))
        .arg("-inkey")
        .arg(p("client.key"))
        .arg("-certfile")
        .arg(p("ca.pem"))
        .arg("-out")
        .arg(p("client.p12"))
        .args(["-passout", &format!("pass:{client_store_password}")]);
    run(p12, "export the client key store")?;
    let key_password = "kafka-eos-client-key";
    let mut enc = openssl();
    enc.args(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in"])
        .arg(p("client.key"))
        .arg("-out")
        .arg(p("client.enc.key"))
        .args(["-passout", &format!("pass:{key_password}")]);
    run(enc, "encrypt the client key")?;
    let trust_password = "kafka-eos-trust";
    let mut trust = openssl();
    trust
        .args(["pkcs12", "-export", "-nokeys", "-in"])
        .arg(p("ca.pem"))
        .arg("-out")
        .arg(p("truststore.p12"))
        .args(["-passout", &format!("pass:{trust_password}")]);
    run(trust, "export the trust store")?;

    let read = |name: &str| std::fs::read(p(name)).ctx(|| format!("reading {name}"));
    Ok(TlsFiles {
        ca_pem: read("ca.pem")?,
        client_cert_pem: read("client.pem")?,
        client_key_pem: read("client.key")?,
        ca_pem_path: p("ca.pem"),
        broker_keystore_path: p("broker.p12"),
        broker_keystore_password: password.into(),
        broker_cert_path: p("broker.pem"),
        broker_key_path: p("broker.key"),
        client_cert_path: p("client.pem"),
        client_key_path: p("client.key"),
        client_keystore_path: p("client.p12"),
        client_keystore_password: client_store_password.into(),
        client_key_encrypted_path: p("client.enc.key"),
        client_key_password: key_password.into(),
        truststore_path: p("truststore.p12"),
        truststore_password: trust_password.into(),
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
        assert!(f.client_keystore_path.is_file() && f.truststore_path.is_file());
        let enc = std::fs::read(&f.client_key_encrypted_path).unwrap();
        assert!(enc.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"));
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
