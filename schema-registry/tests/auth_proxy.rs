//! The registry client's credentials and TLS against a real server that
//! checks them: Debian's nginx (installed by
//! `testcontainers/install-nginx.sh`) as a reverse proxy in front of the
//! real registry, demanding HTTP basic credentials on one port, a bearer
//! token on another, and serving TLS with a test CA's certificate on a
//! third.

use kafka_client::Properties;
#[cfg(feature = "tls")]
use kafka_client::http::HttpError;
use kafka_schema_registry::{RegistryError, Schema, SchemaRegistryClient, SchemaType};
use kafka_testcontainers::SchemaRegistry;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The bearer token the proxy accepts.
const TOKEN: &str = "s3cret-token";

/// A private nginx in front of the registry; killed on drop.
struct Proxy {
    /// The nginx process (single process, `daemon off`).
    child: Child,
    /// Its configuration, certificates and logs.
    dir: PathBuf,
    /// Basic credentials required.
    basic_port: u16,
    /// A bearer token required.
    bearer_port: u16,
    /// TLS, no credentials.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    tls_port: u16,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn find_nginx() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("nginx is not installed: run `bash testcontainers/install-nginx.sh` (CI's .ci/run does)")
        })
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (installed with nginx by testcontainers/install-nginx.sh)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A test CA and a server certificate for 127.0.0.1 signed by it.
fn make_certificates(dir: &Path) {
    run(
        dir,
        &[
            "req",
            "-x509",
            "-nodes",
            "-days",
            "2",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-subj",
            "/CN=registry test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    run(
        dir,
        &[
            "req",
            "-new",
            "-nodes",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    )
    .unwrap();
    run(
        dir,
        &[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    );
}

impl Proxy {
    async fn start(upstream_port: u16) -> Proxy {
        static N: AtomicU32 = AtomicU32::new(0);
        let nginx = find_nginx();
        let dir = std::env::temp_dir().join(format!(
            "kafka-eos-sr-proxy-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        make_certificates(&dir);
        std::fs::write(dir.join("htpasswd"), "fred:{PLAIN}s3cret\n").unwrap();
        let (basic_port, bearer_port, tls_port) = (free_port(), free_port(), free_port());
        let d = dir.display();
        let proxy = format!(
            "proxy_pass http://127.0.0.1:{upstream_port}; proxy_http_version 1.1; proxy_set_header Connection \"\";"
        );
        let conf = format!(
            r#"
daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{basic_port};
        auth_basic "registry";
        auth_basic_user_file {d}/htpasswd;
        location / {{ {proxy} }}
    }}
    server {{
        listen 127.0.0.1:{bearer_port};
        location / {{
            if ($http_authorization != "Bearer {TOKEN}") {{
                return 401 '{{"error_code":40101,"message":"bad bearer token"}}';
            }}
            {proxy}
        }}
    }}
    server {{
        listen 127.0.0.1:{tls_port} ssl;
        ssl_certificate {d}/server.pem;
        ssl_certificate_key {d}/server.key;
        location / {{ {proxy} }}
    }}
}}
"#
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let mut proxy = Proxy {
            child,
            dir,
            basic_port,
            bearer_port,
            tls_port,
        };
        // Ready when all three ports accept connections.
        for port in [basic_port, bearer_port, tls_port] {
            loop {
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    break;
                }
                if let Ok(Some(status)) = proxy.child.try_wait() {
                    let log =
                        std::fs::read_to_string(proxy.dir.join("error.log")).unwrap_or_default();
                    panic!("nginx exited with {status}: {log}");
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        proxy
    }
}

async fn setup() -> Proxy {
    let registry = SchemaRegistry::shared()
        .await
        .expect("start the schema registry (testcontainers/fetch-apicurio.sh)");
    Proxy::start(registry.port()).await
}

fn client(pairs: &[(&str, &str)]) -> SchemaRegistryClient {
    let mut p = Properties::new(pairs.iter().copied());
    p.insert("max.retries", "0");
    let c = SchemaRegistryClient::from_properties(&mut p).expect("client settings");
    p.finish().expect("every key read");
    c
}

fn schema() -> Schema {
    Schema {
        schema_type: SchemaType::Avro,
        schema: r#"{"type":"record","name":"Auth","fields":[{"name":"a","type":"int"}]}"#.into(),
        references: vec![],
    }
}

/// Invariant: basic credentials from `basic.auth.user.info` or from the
/// URL reach the registry through a proxy that checks them; wrong or
/// missing ones are a typed 401, not retried.
#[tokio::test(flavor = "multi_thread")]
async fn basic_credentials_are_checked_by_a_real_server() {
    let proxy = setup().await;
    let url = format!("http://127.0.0.1:{}/apis/ccompat/v7", proxy.basic_port);
    let good = client(&[
        ("schema.registry.url", &url),
        ("basic.auth.credentials.source", "USER_INFO"),
        ("basic.auth.user.info", "fred:s3cret"),
    ]);
    let id = good
        .register("auth-basic-value", &schema(), false)
        .await
        .unwrap();
    let in_url = client(&[
        (
            "schema.registry.url",
            &format!(
                "http://fred:s3cret@127.0.0.1:{}/apis/ccompat/v7",
                proxy.basic_port
            ),
        ),
        ("basic.auth.credentials.source", "URL"),
    ]);
    assert_eq!(*in_url.schema_by_id(id).await.unwrap(), schema());
    for bad in [
        client(&[
            ("schema.registry.url", &url),
            ("basic.auth.credentials.source", "USER_INFO"),
            ("basic.auth.user.info", "fred:wrong"),
        ]),
        client(&[("schema.registry.url", &url)]),
    ] {
        let e = bad.subjects().await.unwrap_err();
        assert!(
            matches!(e, RegistryError::Unauthorized { status: 401, .. }),
            "{e}"
        );
        assert!(!e.is_retriable());
    }
}

/// Invariant: a static bearer token reaches the registry through a proxy
/// that checks it; a wrong one is a typed 401 with the proxy's code.
#[tokio::test(flavor = "multi_thread")]
async fn a_bearer_token_is_checked_by_a_real_server() {
    let proxy = setup().await;
    let url = format!("http://127.0.0.1:{}/apis/ccompat/v7", proxy.bearer_port);
    let good = client(&[
        ("schema.registry.url", &url),
        ("bearer.auth.credentials.source", "STATIC_TOKEN"),
        ("bearer.auth.token", TOKEN),
    ]);
    good.register("auth-bearer-value", &schema(), false)
        .await
        .unwrap();
    let bad = client(&[
        ("schema.registry.url", &url),
        ("bearer.auth.credentials.source", "STATIC_TOKEN"),
        ("bearer.auth.token", "guess"),
    ]);
    let e = bad.subjects().await.unwrap_err();
    assert!(
        matches!(
            e,
            RegistryError::Unauthorized {
                status: 401,
                code: 40101,
                ..
            }
        ),
        "{e}"
    );
}

/// Invariant: over https the client trusts the CA of
/// `schema.registry.ssl.truststore.location` and refuses a server its
/// trust does not cover, with a non-retriable settings error.
#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread")]
async fn https_with_the_registrys_ca() {
    let proxy = setup().await;
    let url = format!("https://127.0.0.1:{}/apis/ccompat/v7", proxy.tls_port);
    let ca = proxy.dir.join("ca.pem");
    let trusted = client(&[
        ("schema.registry.url", &url),
        (
            "schema.registry.ssl.truststore.location",
            ca.to_str().unwrap(),
        ),
        ("schema.registry.ssl.truststore.type", "PEM"),
    ]);
    let id = trusted
        .register("auth-tls-value", &schema(), false)
        .await
        .unwrap();
    assert_eq!(*trusted.schema_by_id(id).await.unwrap(), schema());
    let untrusted = client(&[("schema.registry.url", &url)]);
    let e = untrusted.subjects().await.unwrap_err();
    assert!(
        matches!(
            e,
            RegistryError::Connection {
                error: HttpError::Config(_),
                ..
            }
        ),
        "{e}"
    );
    assert!(!e.is_retriable());
}
