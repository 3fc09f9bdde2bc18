//! The registry client against Debian's `docker-registry`: mutual TLS, the token protocol
//! (anonymous and with credentials), and errors worded as go-containerregistry words them.

#[path = "registry_support/mod.rs"]
mod registry_support;

use std::collections::BTreeMap;

use bytes::Bytes;
use registry_support::{Mode, Registry, TestCa};
use tidegate_source::oci::{self, Credentials, RegistryError, Repository};

fn repository(reg: &Registry, name: &str) -> Repository {
    Repository {
        registry: reg.host.clone(),
        repository: name.to_string(),
    }
}

async fn connect(
    reg: &Registry,
    name: &str,
    options: oci::Options,
) -> Result<oci::Registry, RegistryError> {
    oci::Registry::connect(&repository(reg, name), &options).await
}

/// Pushes a one-layer artifact tagged `tag`, reads it back whole and returns its digest.
async fn round_trip(registry: &oci::Registry, tag: &str) -> String {
    let layer = Bytes::from_static(b"layer bytes");
    let digest = registry
        .push_artifact(
            tag,
            layer.clone(),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        )
        .await
        .expect("push");
    assert_eq!(
        registry
            .digest(&registry.repository().tag(tag))
            .await
            .unwrap(),
        digest
    );
    let manifest = registry
        .manifest(&registry.repository().tag(tag))
        .await
        .unwrap();
    assert_eq!(manifest.digest, digest);
    let got = registry
        .blob(&manifest.image.layers[0], 1 << 20)
        .await
        .unwrap();
    assert_eq!(got, layer);
    assert!(
        registry
            .list_tags()
            .await
            .unwrap()
            .contains(&tag.to_string())
    );
    digest
}

#[tokio::test]
async fn mutual_tls_needs_a_client_certificate_the_registry_trusts() {
    let reg = Registry::start(Mode::MutualTls);
    let options = |client_pem: Option<String>| oci::Options {
        ca_pem: reg.ca_pem.clone().map(String::into_bytes),
        client_pem: client_pem.map(String::into_bytes),
        ..Default::default()
    };
    let registry = connect(&reg, "fleet/app", options(reg.client_pem()))
        .await
        .expect("connects with the client certificate");
    round_trip(&registry, "v1").await;

    // Without a certificate, or with one from another CA, the handshake is refused: no
    // plain-HTTP fallback hides it (loopback would allow one).
    let (cert, key) = TestCa::new("someone else").client("stranger");
    let stranger = format!("{cert}{key}");
    for (what, pem) in [("none", None), ("untrusted", Some(stranger))] {
        let err = match connect(&reg, "fleet/app", options(pem)).await {
            Ok(r) => r.list_tags().await.expect_err(what),
            Err(e) => e,
        };
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("GET https://{}/v2/", reg.host)),
            "{what}: {text}"
        );
    }

    // A key that does not parse is named, not sent.
    let err = connect(&reg, "fleet/app", options(Some("not a pem".into())))
        .await
        .err()
        .expect("refused");
    assert!(
        err.to_string()
            .starts_with("invalid client certificate (tls.crt, tls.key)"),
        "{err}"
    );
}

#[tokio::test]
async fn token_service_grants_what_the_credentials_allow() {
    let reg = Registry::start(Mode::Token("fleet", "pa55word"));
    let creds = Credentials::Basic {
        username: "fleet".into(),
        password: "pa55word".into(),
    };
    let with = |c: &Credentials| oci::Options {
        credentials: c.clone(),
        ..Default::default()
    };

    let registry = connect(&reg, "private/app", with(&creds)).await.unwrap();
    round_trip(&registry, "v1").await;
    // One token per scope for the whole exchange: the push's, then the reads'.
    assert_eq!(
        *reg.token_requests.lock().unwrap(),
        [
            "repository:private/app:push,pull",
            "repository:private/app:pull"
        ]
    );

    // Anonymous: the token service grants nothing on `private/`, the registry refuses.
    let anonymous = connect(&reg, "private/app", with(&Credentials::Anonymous))
        .await
        .unwrap();
    let err = anonymous
        .manifest(&anonymous.repository().tag("v1"))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Unauthorized(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "GET http://{}/v2/private/app/manifests/v1: UNAUTHORIZED: authentication required; [map[Action:pull Class: Name:private/app Type:repository]]",
            reg.host
        )
    );

    // Wrong credentials: the token service's refusal, without the password.
    let wrong = Credentials::Basic {
        username: "fleet".into(),
        password: "wrong-one".into(),
    };
    let registry = connect(&reg, "private/app", with(&wrong)).await.unwrap();
    let err = registry.list_tags().await.unwrap_err();
    assert!(matches!(err, RegistryError::Unauthorized(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("/token?scope=repository%3Aprivate%2Fapp%3Apull&service=tidegate-registry: unexpected status code 401 Unauthorized"),
        "{text}"
    );
    assert!(!text.contains("wrong-one"), "{text}");

    // Anonymous reads of a public repository work, as on ghcr.io or Docker Hub.
    let registry = connect(&reg, "public/app", with(&creds)).await.unwrap();
    let digest = registry
        .push_artifact(
            "v1",
            Bytes::from_static(b"x"),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        )
        .await
        .unwrap();
    let anonymous = connect(&reg, "public/app", with(&Credentials::Anonymous))
        .await
        .unwrap();
    assert_eq!(
        anonymous
            .digest(&anonymous.repository().tag("v1"))
            .await
            .unwrap(),
        digest
    );
    // … but not writes.
    let err = anonymous
        .push_artifact(
            "v2",
            Bytes::from_static(b"y"),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Unauthorized(_)), "{err:?}");
}

#[tokio::test]
async fn errors_are_worded_as_flux_prints_them() {
    let reg = Registry::start(Mode::Plain);
    let registry = connect(&reg, "fleet/app", Default::default())
        .await
        .unwrap();
    let err = registry.list_tags().await.unwrap_err();
    assert!(matches!(err, RegistryError::NotFound(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "GET http://{}/v2/fleet/app/tags/list?n=1000: NAME_UNKNOWN: repository name not known to registry; map[name:fleet/app]",
            reg.host
        )
    );
    round_trip(&registry, "v1").await;
    let err = registry
        .digest(&registry.repository().tag("nope"))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::NotFound(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "GET http://{}/v2/fleet/app/manifests/nope: MANIFEST_UNKNOWN: manifest unknown; map[Tag:nope]",
            reg.host
        )
    );
    // Nothing listens: the connection error, naming the address.
    let closed = Repository {
        registry: "127.0.0.1:9".into(),
        repository: "app".into(),
    };
    let err = oci::Registry::connect(&closed, &Default::default())
        .await
        .err()
        .expect("refused");
    assert!(
        err.to_string().starts_with("GET https://127.0.0.1:9/v2/: "),
        "{err}"
    );
}
