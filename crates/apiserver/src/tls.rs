//! Serving credentials: a CA and server certificate (SANs 127.0.0.1, ::1 and localhost), a
//! bearer token, and the admin kubeconfig that names them; the client CA that signs users'
//! certificates (the cluster CA; a separate `client-ca` in data directories made before the
//! CA key was kept). Kept in the data directory so a restarted server keeps its identity and
//! old kubeconfigs stay valid.

use rand::Rng;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

pub use crate::client_cert::{client_certificate, client_identity};
use std::path::Path;
use std::sync::Arc;

/// PEM-encoded serving credentials.
#[derive(Clone)]
pub struct Credentials {
    /// The CA certificate clients trust.
    pub ca_pem: String,
    /// The server certificate.
    pub cert_pem: String,
    /// The server's private key.
    pub key_pem: String,
    /// The admin bearer token.
    pub token: String,
    /// The CA whose client certificates authenticate users (PEM).
    pub client_ca_pem: String,
    /// Its private key (PEM), to sign users' certificates.
    pub client_ca_key_pem: String,
}

/// Credentials could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Certificate generation failed.
    #[error("certificate generation failed: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The certificate or key did not load into rustls.
    #[error("invalid serving certificate or key: {0}")]
    Rustls(String),
    /// A user's certificate was asked for with an unusable name.
    #[error("client certificate: {0}")]
    Client(String),
}

/// A self-signed CA named `name`: its certificate and key (PEM), and its parameters.
fn new_ca(name: &str) -> Result<(String, KeyPair, CertificateParams), TlsError> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, name);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca_params.self_signed(&ca_key)?;
    Ok((ca_cert.pem(), ca_key, ca_params))
}

fn generate() -> Result<Credentials, TlsError> {
    let (ca_pem, ca_key, ca_params) = new_ca("tidegate-ca")?;
    let mut params = CertificateParams::new(vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ])?;
    params
        .distinguished_name
        .push(DnType::CommonName, "tidegate-apiserver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let key = KeyPair::generate()?;
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer)?;
    let token: String = {
        let mut rng = rand::rng();
        (0..32)
            .map(|_| format!("{:02x}", rng.random::<u8>()))
            .collect()
    };
    Ok(Credentials {
        client_ca_pem: ca_pem.clone(),
        client_ca_key_pem: ca_key.serialize_pem(),
        ca_pem,
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        token,
    })
}

fn read(path: &Path) -> Result<Option<String>, TlsError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TlsError::Io {
            path: path.display().to_string(),
            source: e,
        }),
    }
}

/// Writes `contents` to `path` readable by its owner only, by renaming a complete file over
/// it (a reader never sees half of it).
pub fn write_private(path: &Path, contents: &str) -> Result<(), TlsError> {
    let io = |e| TlsError::Io {
        path: path.display().to_string(),
        source: e,
    };
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}

/// Loads the credentials kept in `dir`, creating them on first use; in-memory servers
/// (`dir` = `None`) get fresh ones.
pub fn load_or_create(dir: Option<&Path>) -> Result<Credentials, TlsError> {
    let Some(dir) = dir else {
        return generate();
    };
    let files = ["ca.crt", "server.crt", "server.key", "token"].map(|f| dir.join(f));
    let existing: Vec<Option<String>> = files.iter().map(|p| read(p)).collect::<Result<_, _>>()?;
    if let [Some(ca), Some(cert), Some(key), Some(token)] = existing.as_slice() {
        let (client_ca_pem, client_ca_key_pem) = match read(&dir.join("ca.key"))? {
            Some(ca_key) => (ca.clone(), ca_key),
            // Made before the CA key was kept: users' certificates get a CA of their own.
            None => client_ca(dir)?,
        };
        return Ok(Credentials {
            ca_pem: ca.clone(),
            cert_pem: cert.clone(),
            key_pem: key.clone(),
            token: token.trim().to_string(),
            client_ca_pem,
            client_ca_key_pem,
        });
    }
    let creds = generate()?;
    write_private(&dir.join("ca.key"), &creds.client_ca_key_pem)?;
    write_private(&files[0], &creds.ca_pem)?;
    write_private(&files[1], &creds.cert_pem)?;
    write_private(&files[2], &creds.key_pem)?;
    write_private(&files[3], &creds.token)?;
    Ok(creds)
}

/// The separate client CA of an older data directory (`client-ca.crt`, `client-ca.key`),
/// made on first use.
fn client_ca(dir: &Path) -> Result<(String, String), TlsError> {
    let (crt, key) = (dir.join("client-ca.crt"), dir.join("client-ca.key"));
    if let (Some(c), Some(k)) = (read(&crt)?, read(&key)?) {
        return Ok((c, k));
    }
    let (pem, key_pair, _) = new_ca("tidegate-client-ca")?;
    let key_pem = key_pair.serialize_pem();
    write_private(&key, &key_pem)?;
    write_private(&crt, &pem)?;
    Ok((pem, key_pem))
}

/// A rustls server configuration offering HTTP/2 and HTTP/1.1.
pub fn server_config(creds: &Credentials) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    server_config_with(creds, false)
}

/// As [`server_config`]; with `require_client_certificate`, a client without a certificate
/// from the client CA fails the handshake (mutual TLS).
pub fn server_config_with(
    creds: &Credentials,
    require_client_certificate: bool,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let certs = rustls_pemfile::certs(&mut creds.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let key = rustls_pemfile::private_key(&mut creds.key_pem.as_bytes())
        .map_err(|e| TlsError::Rustls(e.to_string()))?
        .ok_or_else(|| TlsError::Rustls("no private key in server.key".into()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // Client certificates are optional (`VerifyClientCertIfGiven`): one that does not chain
    // to the client CA fails the handshake.
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pemfile::certs(&mut creds.client_ca_pem.as_bytes()) {
        let c = c.map_err(|e| TlsError::Rustls(e.to_string()))?;
        roots.add(c).map_err(|e| TlsError::Rustls(e.to_string()))?;
    }
    let builder = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    );
    let builder = if require_client_certificate {
        builder
    } else {
        builder.allow_unauthenticated()
    };
    let verifier = builder
        .build()
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Rustls(e.to_string()))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// An admin kubeconfig for `server` (an `https://` or `http://` URL).
pub fn kubeconfig(server: &str, creds: &Credentials, tls: bool) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(&creds.ca_pem);
    let ca_line = if tls {
        format!("    certificate-authority-data: {ca}\n")
    } else {
        String::new()
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: tidegate\n  cluster:\n    server: {server}\n{ca_line}contexts:\n- name: tidegate\n  context:\n    cluster: tidegate\n    user: tidegate-admin\n    namespace: default\ncurrent-context: tidegate\nusers:\n- name: tidegate-admin\n  user:\n    token: {}\npreferences: {{}}\n",
        creds.token
    )
}

/// Writes the kubeconfig atomically with mode 0600.
pub fn write_kubeconfig(path: &Path, contents: &str) -> Result<(), TlsError> {
    write_private(path, contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_persist_and_load_into_rustls() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = load_or_create(Some(dir.path())).expect("create");
        let b = load_or_create(Some(dir.path())).expect("load");
        assert_eq!(a.token, b.token);
        assert_eq!(a.ca_pem, b.ca_pem);
        assert_eq!(a.token.len(), 64);
        server_config(&b).expect("rustls accepts the pair");
        let kc = kubeconfig("https://127.0.0.1:6443", &a, true);
        assert!(kc.contains("certificate-authority-data"));
        assert!(kc.contains(&a.token));
    }
}
