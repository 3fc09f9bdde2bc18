//! Debian's `docker-registry` on loopback, for the OCI tests: plain HTTP, behind htpasswd basic
//! auth, behind TLS with a test CA (optionally requiring client certificates), or behind a
//! token service (`auth: token`, the scheme ghcr.io and Docker Hub use) that this module runs.
//! A test that cannot start one fails.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the registry is reached.
pub enum Mode {
    /// Plain HTTP, anonymous.
    Plain,
    /// Plain HTTP with basic auth for this user and password.
    Htpasswd(&'static str, &'static str),
    /// HTTPS with a certificate from a test CA.
    Tls,
    /// HTTPS that also requires a client certificate from the test CA.
    MutualTls,
    /// Plain HTTP behind a token service: this user and password get every action they ask
    /// for; anonymous callers get `pull` on repositories under `public/` only.
    Token(&'static str, &'static str),
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
    /// A client certificate and its key (PEM) the registry accepts, for [`Mode::MutualTls`].
    pub client: Option<(String, String)>,
    /// The `scope` parameters of every token asked for, for [`Mode::Token`].
    pub token_requests: Arc<Mutex<Vec<String>>>,
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
        let mut client = None;
        let token_requests: Arc<Mutex<Vec<String>>> = Default::default();
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
            Mode::Tls | Mode::MutualTls => {
                let ca = TestCa::new("tidegate test CA");
                let (cert, key) = ca.server();
                let certs = dir.path().join("certs");
                std::fs::create_dir_all(&certs).unwrap();
                std::fs::write(certs.join("ca.crt"), ca.pem()).unwrap();
                std::fs::write(dir.path().join("tls.crt"), &cert).unwrap();
                std::fs::write(dir.path().join("tls.key"), &key).unwrap();
                config.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    dir.path().join("tls.crt").display(),
                    dir.path().join("tls.key").display()
                ));
                if matches!(mode, Mode::MutualTls) {
                    config.push_str(&format!(
                        "    clientcas:\n      - {}\n",
                        certs.join("ca.crt").display()
                    ));
                    client = Some(ca.client("tidegate-client"));
                }
                ca_pem = Some(ca.pem());
                cert_dir = Some(certs);
            }
            Mode::Token(user, password) => {
                let signer = rcgen::KeyPair::generate().unwrap();
                let cert = rcgen::CertificateParams::new(vec!["token-signer".to_string()])
                    .unwrap()
                    .self_signed(&signer)
                    .unwrap();
                std::fs::write(dir.path().join("token.crt"), cert.pem()).unwrap();
                let listener =
                    TcpListener::bind("127.0.0.1:0").expect("a port for the token service");
                let realm = format!("http://{}/token", listener.local_addr().unwrap());
                let service = TokenService {
                    user,
                    password,
                    signer: Arc::new(signer),
                    cert_der: cert.der().to_vec(),
                    requests: token_requests.clone(),
                };
                std::thread::spawn(move || {
                    for conn in listener.incoming().flatten() {
                        service.answer(conn);
                    }
                });
                config.push_str(&format!(
                    "auth:\n  token:\n    realm: {realm}\n    service: tidegate-registry\n    issuer: tidegate-test\n    rootcertbundle: {}\n",
                    dir.path().join("token.crt").display()
                ));
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
            client,
            token_requests,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&registry.host).is_err() {
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// The client certificate and key as one PEM bundle, for [`Mode::MutualTls`].
    pub fn client_pem(&self) -> Option<String> {
        self.client.as_ref().map(|(c, k)| format!("{c}{k}"))
    }

    /// `oci://<host>/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.host)
    }
}

/// A test certificate authority.
pub struct TestCa {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
    cert: rcgen::Certificate,
}

impl TestCa {
    /// A new CA called `name`.
    pub fn new(name: &str) -> TestCa {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        TestCa { params, key, cert }
    }

    /// The CA certificate (PEM).
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A server certificate for 127.0.0.1 and localhost (PEM certificate, PEM key).
    pub fn server(&self) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap()));
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// A client certificate for `name` (PEM certificate, PEM key: a Secret's `tls.crt` and
    /// `tls.key`).
    pub fn client(&self, name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// The token service of [`Mode::Token`]: Docker's token protocol (`GET /token?service=…&scope=…`,
/// basic credentials optional), answering JWTs signed with ES256 whose `x5c` header carries
/// the certificate the registry trusts.
struct TokenService {
    user: &'static str,
    password: &'static str,
    signer: Arc<rcgen::KeyPair>,
    cert_der: Vec<u8>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl TokenService {
    fn answer(&self, mut conn: std::net::TcpStream) {
        use base64::Engine;
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            return;
        }
        let mut authorization = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("authorization")
            {
                authorization = Some(v.trim().to_string());
            }
        }
        let target = request_line.split(' ').nth(1).unwrap_or("");
        let query = target.split_once('?').map(|(_, q)| q).unwrap_or("");
        let scopes: Vec<String> = query
            .split('&')
            .filter_map(|kv| kv.strip_prefix("scope="))
            .map(query_decode)
            .collect();
        self.requests.lock().unwrap().push(scopes.join(" "));
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", self.user, self.password))
        );
        let user = match &authorization {
            Some(a) if *a == expected => Some(self.user),
            Some(_) => {
                let body = r#"{"details":"invalid username or password"}"#;
                let _ = write!(
                    conn,
                    "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                return;
            }
            None => None,
        };
        let access: Vec<serde_json::Value> = scopes
            .iter()
            .filter_map(|s| {
                let mut parts = s.splitn(3, ':');
                let (kind, name, actions) = (parts.next()?, parts.next()?, parts.next()?);
                let granted: Vec<&str> = actions
                    .split(',')
                    .filter(|a| user.is_some() || (*a == "pull" && name.starts_with("public/")))
                    .collect();
                Some(serde_json::json!({"type": kind, "name": name, "actions": granted}))
            })
            .collect();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let header = serde_json::json!({
            "typ": "JWT",
            "alg": "ES256",
            "x5c": [base64::engine::general_purpose::STANDARD.encode(&self.cert_der)],
        });
        let claims = serde_json::json!({
            "iss": "tidegate-test",
            "sub": user.unwrap_or(""),
            "aud": "tidegate-registry",
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": format!("{now}-{}", self.requests.lock().unwrap().len()),
            "access": access,
        });
        let signing_input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let der = rcgen::SigningKey::sign(self.signer.as_ref(), signing_input.as_bytes()).unwrap();
        let token = format!("{signing_input}.{}", b64(&ecdsa_der_to_raw(&der)));
        let body = serde_json::json!({"token": token, "expires_in": 300}).to_string();
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
}

/// A query value decoded (`+` and `%XX`).
fn query_decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).expect("a %XX escape"));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).expect("UTF-8 query")
}

/// An ECDSA P-256 signature from ASN.1 DER (`SEQUENCE { r INTEGER, s INTEGER }`) to JWS's
/// fixed 64-byte `r || s`.
fn ecdsa_der_to_raw(der: &[u8]) -> Vec<u8> {
    fn integer(data: &[u8]) -> (&[u8], &[u8]) {
        assert_eq!(data[0], 0x02, "an ASN.1 INTEGER");
        let len = data[1] as usize;
        (&data[2..2 + len], &data[2 + len..])
    }
    assert_eq!(der[0], 0x30, "an ASN.1 SEQUENCE");
    let body = &der[2..];
    let (r, rest) = integer(body);
    let (s, _) = integer(rest);
    let mut out = vec![0u8; 64];
    let r = &r[r.len().saturating_sub(32)..];
    let s = &s[s.len().saturating_sub(32)..];
    out[32 - r.len()..32].copy_from_slice(r);
    out[64 - s.len()..].copy_from_slice(s);
    out
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
