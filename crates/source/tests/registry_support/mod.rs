//! Debian's `docker-registry` on loopback, for the OCI tests: plain HTTP, behind htpasswd basic
//! auth, or behind TLS with a test CA. A test that cannot start one fails.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How the registry is reached.
pub enum Mode {
    /// Plain HTTP, anonymous.
    Plain,
    /// Plain HTTP with basic auth for this user and password.
    Htpasswd(&'static str, &'static str),
    /// HTTPS with a certificate from a test CA.
    Tls,
}

/// A running registry, stopped when dropped.
pub struct Registry {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub host: String,
    /// The test CA (PEM), for [`Mode::Tls`].
    pub ca_pem: Option<String>,
    /// A directory holding `ca.crt` (skopeo's `--cert-dir`), for [`Mode::Tls`].
    pub cert_dir: Option<PathBuf>,
    dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log =
                std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default();
            eprintln!("--- docker-registry log:\n{log}");
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}

impl Registry {
    /// Starts a registry and waits until it answers.
    pub fn start(mode: Mode) -> Registry {
        let dir = tempfile::tempdir().expect("temporary directory");
        let port = free_port();
        let host = format!("127.0.0.1:{port}");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
            dir.path().join("data").display()
        );
        let mut ca_pem = None;
        let mut cert_dir = None;
        match mode {
            Mode::Plain => {}
            Mode::Htpasswd(user, password) => {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("htpasswd (apache2-utils) must be installed");
                assert!(out.status.success(), "htpasswd failed");
                let file = dir.path().join("htpasswd");
                std::fs::write(&file, out.stdout).unwrap();
                config.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: tidegate-test\n    path: {}\n",
                    file.display()
                ));
            }
            Mode::Tls => {
                let (ca, cert, key) = test_certificates();
                let certs = dir.path().join("certs");
                std::fs::create_dir_all(&certs).unwrap();
                std::fs::write(certs.join("ca.crt"), &ca).unwrap();
                std::fs::write(dir.path().join("tls.crt"), &cert).unwrap();
                std::fs::write(dir.path().join("tls.key"), &key).unwrap();
                config.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    dir.path().join("tls.crt").display(),
                    dir.path().join("tls.key").display()
                ));
                ca_pem = Some(ca);
                cert_dir = Some(certs);
            }
        }
        let cfg = dir.path().join("config.yml");
        std::fs::write(&cfg, config).unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("docker-registry (Debian's package) must be installed");
        let registry = Registry {
            child,
            host,
            ca_pem,
            cert_dir,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&registry.host).is_err() {
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `oci://<host>/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.host)
    }
}

/// A CA and a server certificate for 127.0.0.1 and localhost it signed (PEM: CA, cert, key).
fn test_certificates() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "tidegate test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// Runs skopeo with `args`, returning stdout; fails the test with its stderr otherwise.
pub fn skopeo(args: &[&str]) -> String {
    let out = Command::new("skopeo")
        .args(args)
        .output()
        .expect("skopeo (Debian's package) must be installed");
    assert!(
        out.status.success(),
        "skopeo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
