//! Users' client certificates: made for `tidegate kubeconfig`, read back by the x509
//! authenticator. kube-apiserver reads the subject's common name as the user and every
//! organization (`O`) as a group, so a certificate carries one `O` attribute per group. rcgen
//! keeps one value per attribute type, so the to-be-signed certificate is written here (DER,
//! with yasna) and signed with the client CA's key through rcgen.

use rcgen::{KeyPair, PublicKeyData as _, SigningKey as _};
use yasna::models::ObjectIdentifier;

use crate::tls::{Credentials, TlsError};

const OID_CN: &[u64] = &[2, 5, 4, 3];
const OID_O: &[u64] = &[2, 5, 4, 10];
const OID_ECDSA_SHA256: &[u64] = &[1, 2, 840, 10045, 4, 3, 2];
const OID_KEY_USAGE: &[u64] = &[2, 5, 29, 15];
const OID_EXT_KEY_USAGE: &[u64] = &[2, 5, 29, 37];
const OID_BASIC_CONSTRAINTS: &[u64] = &[2, 5, 29, 19];
const OID_CLIENT_AUTH: &[u64] = &[1, 3, 6, 1, 5, 5, 7, 3, 2];

/// An X.509 `Time` as UTCTime (`YYMMDDHHMMSSZ`; years 1950–2049).
fn utc_time(t: time::OffsetDateTime) -> Vec<u8> {
    let text = format!(
        "{:02}{:02}{:02}{:02}{:02}{:02}Z",
        t.year().rem_euclid(100),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let mut out = vec![0x17, text.len() as u8];
    out.extend_from_slice(text.as_bytes());
    out
}

fn oid(parts: &[u64]) -> ObjectIdentifier {
    ObjectIdentifier::from_slice(parts)
}

/// A client certificate and key (PEM) for `user` in `groups`, signed by the client CA and
/// valid for `days`.
pub fn client_certificate(
    creds: &Credentials,
    user: &str,
    groups: &[String],
    days: u32,
) -> Result<(String, String), TlsError> {
    if user.is_empty() {
        return Err(TlsError::Client("the user name is empty".into()));
    }
    let ca_key = KeyPair::from_pem(&creds.client_ca_key_pem)?;
    let ca_der = rustls_pemfile::certs(&mut creds.client_ca_pem.as_bytes())
        .next()
        .ok_or_else(|| TlsError::Client("no client CA certificate".into()))?
        .map_err(|e| TlsError::Client(e.to_string()))?;
    let (_, ca) = x509_parser::parse_x509_certificate(ca_der.as_ref())
        .map_err(|e| TlsError::Client(format!("the client CA certificate: {e}")))?;
    let issuer = ca.subject().as_raw().to_vec();
    let key = KeyPair::generate()?;
    let now = time::OffsetDateTime::now_utc();
    let (not_before, not_after) = (
        now - time::Duration::minutes(5),
        now + time::Duration::days(i64::from(days)),
    );
    let serial: [u8; 16] = rand::random();
    let tbs = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next()
                .write_tagged(yasna::Tag::context(0), |w| w.write_u8(2));
            w.next().write_bigint_bytes(&serial, true);
            w.next()
                .write_sequence(|w| w.next().write_oid(&oid(OID_ECDSA_SHA256)));
            w.next().write_der(&issuer);
            w.next().write_sequence(|w| {
                w.next().write_der(&utc_time(not_before));
                w.next().write_der(&utc_time(not_after));
            });
            w.next().write_sequence(|w| {
                let attributes = groups
                    .iter()
                    .map(|g| (OID_O, g.as_str()))
                    .chain([(OID_CN, user)]);
                for (ty, value) in attributes {
                    w.next().write_set(|w| {
                        w.next().write_sequence(|w| {
                            w.next().write_oid(&oid(ty));
                            w.next().write_utf8_string(value);
                        })
                    });
                }
            });
            w.next().write_der(&key.subject_public_key_info());
            w.next().write_tagged(yasna::Tag::context(3), |w| {
                w.write_sequence(|w| {
                    // keyUsage (critical): digitalSignature, keyEncipherment.
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&oid(OID_KEY_USAGE));
                        w.next().write_bool(true);
                        w.next().write_bytes(&yasna::construct_der(|w| {
                            w.write_bitvec_bytes(&[0b1010_0000], 3)
                        }));
                    });
                    // extKeyUsage: clientAuth.
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&oid(OID_EXT_KEY_USAGE));
                        w.next().write_bytes(&yasna::construct_der(|w| {
                            w.write_sequence(|w| w.next().write_oid(&oid(OID_CLIENT_AUTH)))
                        }));
                    });
                    // basicConstraints (critical): not a CA.
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&oid(OID_BASIC_CONSTRAINTS));
                        w.next().write_bool(true);
                        w.next()
                            .write_bytes(&yasna::construct_der(|w| w.write_sequence(|_| {})));
                    });
                })
            });
        })
    });
    let signature = ca_key.sign(&tbs)?;
    let cert = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_der(&tbs);
            w.next()
                .write_sequence(|w| w.next().write_oid(&oid(OID_ECDSA_SHA256)));
            w.next().write_bitvec_bytes(&signature, signature.len() * 8);
        })
    });
    Ok((pem("CERTIFICATE", &cert), key.serialize_pem()))
}

fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The user a verified client certificate (DER) names: the subject's common name and its
/// organizations, as kube-apiserver's `CommonNameUserConversion`. `None` without a common name.
pub fn client_identity(der: &[u8]) -> Option<(String, Vec<String>)> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let user = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())?
        .to_string();
    if user.is_empty() {
        return None;
    }
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    Some((user, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_names_its_user_and_every_group_and_chains_to_the_ca() {
        let creds = crate::tls::load_or_create(None).expect("credentials");
        let groups = vec!["devs".to_string(), "ops".into(), "system:masters".into()];
        let (cert, _key) = client_certificate(&creds, "jane", &groups, 30).expect("certificate");
        let der = rustls_pemfile::certs(&mut cert.as_bytes())
            .next()
            .expect("one")
            .expect("pem");
        assert_eq!(
            client_identity(der.as_ref()),
            Some(("jane".to_string(), groups))
        );
        let (_, parsed) = x509_parser::parse_x509_certificate(der.as_ref()).expect("x509");
        let ca = rustls_pemfile::certs(&mut creds.client_ca_pem.as_bytes())
            .next()
            .expect("ca")
            .expect("pem");
        let (_, ca) = x509_parser::parse_x509_certificate(ca.as_ref()).expect("ca x509");
        assert!(parsed.verify_signature(Some(ca.public_key())).is_ok());
        assert!(parsed.validity().is_valid());
        assert!(client_certificate(&creds, "", &[], 1).is_err());
    }
}
