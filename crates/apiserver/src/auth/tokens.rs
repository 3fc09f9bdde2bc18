//! Service account tokens: ES256-signed JWTs as kube-apiserver issues them for
//! `serviceaccounts/<name>/token` (`kubectl create token`), checked when they come back as
//! bearer tokens, and the OIDC discovery document and JWKS that let others verify them.

use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde_json::{Value, json};
use std::path::Path;

/// The issuer kube-apiserver names by default.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Why the signing key could not be loaded or made.
#[derive(Debug, thiserror::Error)]
pub enum IssuerError {
    /// Reading or writing the key file failed.
    #[error("service account signing key {path}: {message}")]
    Key {
        /// The key file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Signs and verifies service account tokens with one P-256 key.
pub struct Issuer {
    key: EcdsaKeyPair,
    kid: String,
    /// Tokens already verified, so that a client's every request does not
    /// pay a signature check; bounded, emptied when full.
    verified: std::sync::RwLock<std::collections::HashMap<String, Claims>>,
}

/// How many verified tokens are remembered.
const VERIFIED_MAX: usize = 4096;

/// The object a token is bound to (`boundObjectRef`): the token stops working when it is gone.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundObject {
    /// `Pod`, `Secret` or `Node`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq)]
pub struct Claims {
    /// Namespace of the service account.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid when the token was issued.
    pub uid: String,
    /// The token's audiences.
    pub audiences: Vec<String>,
    /// When it expires (Unix seconds).
    pub expires: i64,
    /// The object it is bound to, if any.
    pub bound: Option<BoundObject>,
    /// The legacy token Secret it was issued into (`kubernetes/serviceaccount` tokens).
    pub legacy_secret: Option<String>,
}

/// The issuer of legacy service account tokens (those kept in Secrets).
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

impl Issuer {
    /// Loads the key kept in `dir` (`sa-signer.key`), creating it on first use; an in-memory
    /// server gets a fresh key.
    pub fn load_or_create(dir: Option<&Path>) -> Result<Issuer, IssuerError> {
        let rng = SystemRandom::new();
        let path = dir.map(|d| d.join("sa-signer.key"));
        let err = |message: String| IssuerError::Key {
            path: path
                .as_ref()
                .map_or("(memory)".into(), |p| p.display().to_string()),
            message,
        };
        let pkcs8 = match path.as_ref().filter(|p| p.exists()) {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| err(e.to_string()))?;
                base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .map_err(|e| err(e.to_string()))?
            }
            None => {
                let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|e| err(e.to_string()))?;
                if let Some(p) = &path {
                    let text = base64::engine::general_purpose::STANDARD.encode(doc.as_ref());
                    crate::tls::write_private(p, &text).map_err(|e| err(e.to_string()))?;
                }
                doc.as_ref().to_vec()
            }
        };
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng)
            .map_err(|e| err(e.to_string()))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, key.public_key().as_ref());
        let kid = B64.encode(&digest.as_ref()[..16]);
        Ok(Issuer {
            key,
            kid,
            verified: Default::default(),
        })
    }

    /// A token for the service account `namespace/name` (uid `uid`), valid for `seconds`
    /// from `now` (Unix seconds), for `audiences` (the issuer when empty), bound to `bound`.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: &[String],
        now: i64,
        seconds: i64,
        bound: Option<&BoundObject>,
    ) -> Option<String> {
        let audiences = if audiences.is_empty() {
            vec![ISSUER.to_string()]
        } else {
            audiences.to_vec()
        };
        let mut claims = json!({
            "aud": audiences,
            "exp": now + seconds,
            "iat": now,
            "iss": ISSUER,
            "jti": uuid::Uuid::new_v4().to_string(),
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
            "nbf": now,
            "sub": format!("system:serviceaccount:{namespace}:{name}"),
        });
        if let Some(b) = bound {
            claims["kubernetes.io"][b.kind.to_ascii_lowercase()] =
                json!({"name": b.name, "uid": b.uid});
        }
        self.sign(&claims)
    }

    /// A legacy, non-expiring token for the service account `namespace/name` (uid `uid`) kept
    /// in the Secret `secret`, with kube's legacy claims.
    pub fn issue_legacy(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        secret: &str,
    ) -> Option<String> {
        let claims = json!({
            "iss": LEGACY_ISSUER,
            "kubernetes.io/serviceaccount/namespace": namespace,
            "kubernetes.io/serviceaccount/secret.name": secret,
            "kubernetes.io/serviceaccount/service-account.name": name,
            "kubernetes.io/serviceaccount/service-account.uid": uid,
            "sub": format!("system:serviceaccount:{namespace}:{name}"),
        });
        self.sign(&claims)
    }

    /// A JWT of `claims`, signed.
    fn sign(&self, claims: &Value) -> Option<String> {
        let header = json!({"alg": "ES256", "kid": self.kid});
        let signing_input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let sig = self
            .key
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .ok()?;
        Some(format!("{signing_input}.{}", B64.encode(sig.as_ref())))
    }

    /// The claims of a token this issuer signed that is valid at `now`.
    pub fn verify(&self, token: &str, now: i64) -> Option<Claims> {
        if let Some(c) = self
            .verified
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
        {
            return (c.expires > now).then(|| c.clone());
        }
        let claims = self.verify_signed(token, now)?;
        let mut verified = self.verified.write().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.clear();
        }
        verified.insert(token.to_string(), claims.clone());
        Some(claims)
    }

    fn verify_signed(&self, token: &str, now: i64) -> Option<Claims> {
        let mut parts = token.split('.');
        let (h, c, s) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let header: Value = serde_json::from_slice(&B64.decode(h).ok()?).ok()?;
        if header["alg"] != "ES256" {
            return None;
        }
        let public =
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, self.key.public_key().as_ref());
        public
            .verify(format!("{h}.{c}").as_bytes(), &B64.decode(s).ok()?)
            .ok()?;
        let claims: Value = serde_json::from_slice(&B64.decode(c).ok()?).ok()?;
        if claims["iss"] == LEGACY_ISSUER {
            let s = |k: &str| {
                claims[format!("kubernetes.io/serviceaccount/{k}")]
                    .as_str()
                    .map(str::to_string)
            };
            return Some(Claims {
                namespace: s("namespace")?,
                name: s("service-account.name")?,
                uid: s("service-account.uid").unwrap_or_default(),
                audiences: Vec::new(),
                expires: i64::MAX,
                bound: None,
                legacy_secret: Some(s("secret.name")?),
            });
        }
        if claims["iss"] != ISSUER
            || claims["exp"].as_i64()? <= now
            || claims["nbf"].as_i64().unwrap_or(0) > now + 60
        {
            return None;
        }
        let sa = &claims["kubernetes.io"];
        let bound = ["pod", "secret", "node"].iter().find_map(|k| {
            let b = sa.get(*k)?;
            Some(BoundObject {
                kind: match *k {
                    "pod" => "Pod",
                    "secret" => "Secret",
                    _ => "Node",
                }
                .into(),
                name: b["name"].as_str()?.to_string(),
                uid: b["uid"].as_str().unwrap_or_default().to_string(),
            })
        });
        Some(Claims {
            expires: claims["exp"].as_i64()?,
            bound,
            legacy_secret: None,
            namespace: sa["namespace"].as_str()?.to_string(),
            name: sa["serviceaccount"]["name"].as_str()?.to_string(),
            uid: sa["serviceaccount"]["uid"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            audiences: claims["aud"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The JWKS document (`/openid/v1/jwks`).
    pub fn jwks(&self) -> Value {
        let point = self.key.public_key().as_ref();
        // An uncompressed P-256 point: 0x04, then X and Y (32 bytes each).
        let (x, y) = point
            .get(1..)
            .map_or((&[][..], &[][..]), |p| p.split_at(p.len() / 2));
        json!({"keys": [{"use": "sig", "kty": "EC", "kid": self.kid, "crv": "P-256", "alg": "ES256",
            "x": B64.encode(x), "y": B64.encode(y)}]})
    }

    /// The OIDC discovery document (`/.well-known/openid-configuration`).
    pub fn discovery(&self) -> Value {
        json!({
            "issuer": ISSUER,
            "jwks_uri": format!("{ISSUER}/openid/v1/jwks"),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_until_they_expire_and_not_when_altered() {
        let issuer = Issuer::load_or_create(None).expect("key");
        let t = issuer
            .issue("default", "robot", "u-1", &[], 1_000, 3_600, None)
            .expect("token");
        let claims = issuer.verify(&t, 2_000).expect("valid");
        assert_eq!(
            (claims.namespace.as_str(), claims.name.as_str()),
            ("default", "robot")
        );
        assert_eq!(claims.audiences, vec![ISSUER.to_string()]);
        assert!(issuer.verify(&t, 4_601).is_none(), "expired");
        let mut forged = t.clone();
        forged.insert(t.find('.').expect("dot") + 2, 'x');
        assert!(issuer.verify(&forged, 2_000).is_none(), "altered");
        let other = Issuer::load_or_create(None).expect("key");
        assert!(other.verify(&t, 2_000).is_none(), "another key");
        assert_eq!(issuer.jwks()["keys"][0]["crv"], "P-256");
        let pod = BoundObject {
            kind: "Pod".into(),
            name: "web-0".into(),
            uid: "p-1".into(),
        };
        let bound = issuer
            .issue("default", "robot", "u-1", &[], 1_000, 3_600, Some(&pod))
            .expect("token");
        assert_eq!(
            issuer.verify(&bound, 1_500).expect("valid").bound,
            Some(pod)
        );
    }

    #[test]
    fn the_key_is_kept_in_the_data_directory() {
        let dir = tempfile::tempdir().expect("dir");
        let a = Issuer::load_or_create(Some(dir.path())).expect("key");
        let t = a.issue("ns", "sa", "u", &[], 0, 100, None).expect("token");
        let b = Issuer::load_or_create(Some(dir.path())).expect("key again");
        assert!(
            b.verify(&t, 10).is_some(),
            "a restarted server accepts its tokens"
        );
    }
}
