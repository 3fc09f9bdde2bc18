//! Certificates laid out as Go's `crypto/x509.CreateCertificate` lays out Sprig's templates:
//! the same extensions in the same order (key usage, extended key usage, basic constraints,
//! subject key id for a CA, authority key id when signed by another subject, alternative
//! names), a positive 128-bit serial, UTCTime validity, `PrintableString` names where Go's
//! encoder picks them. Tools that compare certificates by structure see helm's.

use std::net::IpAddr;

use rcgen::{PublicKeyData, SigningKey};
use sha2::Digest;
use yasna::models::ObjectIdentifier;
use yasna::{DERWriter, Tag};

const OID_COMMON_NAME: &[u64] = &[2, 5, 4, 3];
const OID_KEY_USAGE: &[u64] = &[2, 5, 29, 15];
const OID_EXT_KEY_USAGE: &[u64] = &[2, 5, 29, 37];
const OID_BASIC_CONSTRAINTS: &[u64] = &[2, 5, 29, 19];
const OID_SUBJECT_KEY_ID: &[u64] = &[2, 5, 29, 14];
const OID_AUTHORITY_KEY_ID: &[u64] = &[2, 5, 29, 35];
const OID_SUBJECT_ALT_NAME: &[u64] = &[2, 5, 29, 17];
const OID_SERVER_AUTH: &[u64] = &[1, 3, 6, 1, 5, 5, 7, 3, 1];
const OID_CLIENT_AUTH: &[u64] = &[1, 3, 6, 1, 5, 5, 7, 3, 2];
const OID_SHA256_WITH_RSA: &[u64] = &[1, 2, 840, 113549, 1, 1, 11];
const OID_ECDSA_WITH_SHA256: &[u64] = &[1, 2, 840, 10045, 4, 3, 2];
const OID_ED25519: &[u64] = &[1, 3, 101, 112];

/// The fields of Sprig's certificate templates (`getBaseCertTemplate`, and `genCA`'s).
pub(super) struct Template<'a> {
    pub common_name: &'a str,
    pub dns_names: &'a [String],
    pub ip_addresses: &'a [IpAddr],
    pub days: i64,
    pub is_ca: bool,
}

/// The certificate a new one is signed with, as Go reads it back from its PEM.
pub(super) struct Parent {
    /// The parent's subject, byte for byte (the new certificate's issuer).
    pub subject: Vec<u8>,
    /// The parent's subject key id, when it has one (the new authority key id).
    pub subject_key_id: Option<Vec<u8>>,
    /// The parent's SubjectPublicKeyInfo, which the signing key must match.
    pub public_key_info: Vec<u8>,
}

impl Parent {
    /// Reads a PEM certificate as `x509.ParseCertificate` would be asked to.
    pub fn from_pem(cert_pem: &str) -> Result<Parent, String> {
        use x509_parser::prelude::*;
        let block =
            ::pem::parse(cert_pem).map_err(|_| "unable to decode certificate".to_string())?;
        let (_, cert) = X509Certificate::from_der(block.contents()).map_err(|e| {
            format!("error parsing certificate: decodedSignerCert.Bytes: x509: {e}")
        })?;
        let subject_key_id = cert
            .extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) => Some(id.0.to_vec()),
                _ => None,
            });
        Ok(Parent {
            subject: cert.tbs_certificate.subject.as_raw().to_vec(),
            subject_key_id,
            public_key_info: cert.public_key().raw.to_vec(),
        })
    }
}

/// Builds and signs a certificate for `subject_key`: self-signed without a parent, else
/// signed by the parent's key. Returns its DER.
pub(super) fn create(
    t: &Template<'_>,
    subject_key: &rcgen::KeyPair,
    parent: Option<(&Parent, &rcgen::KeyPair)>,
) -> Result<Vec<u8>, String> {
    let subject = name(t.common_name);
    let signer = parent.map_or(subject_key, |(_, key)| key);
    let parent = parent.map(|(p, _)| p);
    if let Some(p) = parent
        && p.public_key_info != signer.subject_public_key_info()
    {
        return Err("x509: provided PrivateKey doesn't match parent's PublicKey".into());
    }
    let issuer = parent.map_or_else(|| subject.clone(), |p| p.subject.clone());
    for dns in t.dns_names {
        if !dns.is_ascii() {
            return Err(format!("x509: {dns:?} cannot be encoded as an IA5String"));
        }
    }
    let now = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let not_after = t
        .days
        .checked_mul(86_400)
        .and_then(|secs| now.checked_add(time::Duration::seconds(secs)))
        .ok_or_else(|| format!("x509: validity of {} days is out of range", t.days))?;
    // Go: the leftmost 160 bits of the SHA-256 of the public key, for CAs only.
    let subject_key_id = t
        .is_ca
        .then(|| sha2::Sha256::digest(subject_key.der_bytes())[..20].to_vec());
    // Go: the parent's key id, unless the certificate is its own issuer.
    let authority_key_id = parent
        .filter(|p| p.subject != subject)
        .and_then(|p| p.subject_key_id.clone());
    let serial: [u8; 16] = rand::random();
    let algorithm = SignatureAlgorithm::of(signer)?;
    let tbs = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_tagged(Tag::context(0), |w| w.write_u8(2));
            w.next().write_bigint_bytes(&serial, true);
            algorithm.write(w.next());
            w.next().write_der(&issuer);
            w.next().write_sequence(|w| {
                write_time(w.next(), now);
                write_time(w.next(), not_after);
            });
            w.next().write_der(&subject);
            w.next().write_der(&subject_key.subject_public_key_info());
            w.next().write_tagged(Tag::context(3), |w| {
                w.write_sequence(|w| {
                    extensions(w, t, subject_key_id.as_deref(), authority_key_id.as_deref())
                })
            });
        })
    });
    let signature = signer.sign(&tbs).map_err(|e| format!("x509: {e}"))?;
    Ok(yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_der(&tbs);
            algorithm.write(w.next());
            w.next().write_bitvec_bytes(&signature, signature.len() * 8);
        })
    }))
}

/// The signature algorithm Go picks for a signing key.
#[derive(Clone, Copy)]
enum SignatureAlgorithm {
    Sha256WithRsa,
    EcdsaWithSha256,
    Ed25519,
}

impl SignatureAlgorithm {
    fn of(key: &rcgen::KeyPair) -> Result<SignatureAlgorithm, String> {
        let alg = key.algorithm();
        if alg == &rcgen::PKCS_RSA_SHA256 {
            Ok(SignatureAlgorithm::Sha256WithRsa)
        } else if alg == &rcgen::PKCS_ECDSA_P256_SHA256 {
            Ok(SignatureAlgorithm::EcdsaWithSha256)
        } else if alg == &rcgen::PKCS_ED25519 {
            Ok(SignatureAlgorithm::Ed25519)
        } else {
            Err("x509: unsupported key type".into())
        }
    }

    fn write(self, w: DERWriter<'_>) {
        w.write_sequence(|w| match self {
            SignatureAlgorithm::Sha256WithRsa => {
                w.next()
                    .write_oid(&ObjectIdentifier::from_slice(OID_SHA256_WITH_RSA));
                w.next().write_null();
            }
            SignatureAlgorithm::EcdsaWithSha256 => {
                w.next()
                    .write_oid(&ObjectIdentifier::from_slice(OID_ECDSA_WITH_SHA256));
            }
            SignatureAlgorithm::Ed25519 => {
                w.next()
                    .write_oid(&ObjectIdentifier::from_slice(OID_ED25519));
            }
        })
    }
}

fn extensions(
    w: &mut yasna::DERWriterSeq<'_>,
    t: &Template<'_>,
    subject_key_id: Option<&[u8]>,
    authority_key_id: Option<&[u8]>,
) {
    // Key encipherment and digital signature, and certificate signing for a CA: Go writes
    // the bits reversed in one byte, up to the last one set.
    let key_usage: &[u8] = if t.is_ca {
        &[0x03, 0x02, 0x02, 0xa4]
    } else {
        &[0x03, 0x02, 0x05, 0xa0]
    };
    extension(w, OID_KEY_USAGE, true, key_usage);
    let ext_key_usage = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next()
                .write_oid(&ObjectIdentifier::from_slice(OID_SERVER_AUTH));
            w.next()
                .write_oid(&ObjectIdentifier::from_slice(OID_CLIENT_AUTH));
        })
    });
    extension(w, OID_EXT_KEY_USAGE, false, &ext_key_usage);
    // `cA` is DEFAULT FALSE, so a leaf's basic constraints are an empty sequence.
    let basic = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            if t.is_ca {
                w.next().write_bool(true);
            }
        })
    });
    extension(w, OID_BASIC_CONSTRAINTS, true, &basic);
    if let Some(id) = subject_key_id {
        extension(
            w,
            OID_SUBJECT_KEY_ID,
            false,
            &yasna::construct_der(|w| w.write_bytes(id)),
        );
    }
    if let Some(id) = authority_key_id {
        let value = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next()
                    .write_tagged_implicit(Tag::context(0), |w| w.write_bytes(id))
            })
        });
        extension(w, OID_AUTHORITY_KEY_ID, false, &value);
    }
    if !t.dns_names.is_empty() || !t.ip_addresses.is_empty() {
        let value = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                for dns in t.dns_names {
                    w.next()
                        .write_tagged_implicit(Tag::context(2), |w| w.write_bytes(dns.as_bytes()));
                }
                for ip in t.ip_addresses {
                    // IPv4 (and IPv4-mapped IPv6) in four bytes, as Go's `To4`.
                    let bytes = match ip {
                        IpAddr::V4(v4) => v4.octets().to_vec(),
                        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                            Some(v4) => v4.octets().to_vec(),
                            None => v6.octets().to_vec(),
                        },
                    };
                    w.next()
                        .write_tagged_implicit(Tag::context(7), |w| w.write_bytes(&bytes));
                }
            })
        });
        extension(w, OID_SUBJECT_ALT_NAME, false, &value);
    }
}

fn extension(w: &mut yasna::DERWriterSeq<'_>, oid: &[u64], critical: bool, value: &[u8]) {
    w.next().write_sequence(|w| {
        w.next().write_oid(&ObjectIdentifier::from_slice(oid));
        if critical {
            w.next().write_bool(true);
        }
        w.next().write_bytes(value);
    });
}

/// A subject holding only a common name (none when it is empty), as `pkix.Name` marshals it.
fn name(common_name: &str) -> Vec<u8> {
    yasna::construct_der(|w| {
        w.write_sequence(|w| {
            if common_name.is_empty() {
                return;
            }
            w.next().write_set(|w| {
                w.next().write_sequence(|w| {
                    w.next()
                        .write_oid(&ObjectIdentifier::from_slice(OID_COMMON_NAME));
                    if common_name.bytes().all(go_printable) {
                        w.next().write_printable_string(common_name);
                    } else {
                        w.next().write_utf8_string(common_name);
                    }
                })
            })
        })
    })
}

/// Go's `encoding/asn1` PrintableString alphabet when marshalling (no `*`, no `&`).
fn go_printable(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b' ' | b'\'' | b'(' | b')' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b'=' | b'?'
        )
}

/// UTCTime from 1950 to 2049, GeneralizedTime outside, to the second, as Go writes them.
fn write_time(w: DERWriter<'_>, t: time::OffsetDateTime) {
    let (year, month, day) = (t.year(), u8::from(t.month()), t.day());
    let (hour, minute, second) = (t.hour(), t.minute(), t.second());
    if (1950..2050).contains(&year) {
        let text = format!(
            "{:02}{month:02}{day:02}{hour:02}{minute:02}{second:02}Z",
            year % 100
        );
        w.write_tagged_implicit(yasna::tags::TAG_UTCTIME, |w| w.write_bytes(text.as_bytes()));
    } else {
        let text = format!("{year:04}{month:02}{day:02}{hour:02}{minute:02}{second:02}Z");
        w.write_tagged_implicit(yasna::tags::TAG_GENERALIZEDTIME, |w| {
            w.write_bytes(text.as_bytes())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use x509_parser::prelude::*;

    fn key() -> rcgen::KeyPair {
        rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key")
    }

    fn extension_oids(der: &[u8]) -> Vec<String> {
        let (_, cert) = X509Certificate::from_der(der).expect("parses");
        cert.extensions()
            .iter()
            .map(|e| format!("{}{}", e.oid, if e.critical { "!" } else { "" }))
            .collect()
    }

    #[test]
    fn a_ca_has_go_s_extensions_in_go_s_order() {
        let k = key();
        let t = Template {
            common_name: "my-ca",
            dns_names: &[],
            ip_addresses: &[],
            days: 365,
            is_ca: true,
        };
        let der = create(&t, &k, None).expect("created");
        assert_eq!(
            extension_oids(&der),
            ["2.5.29.15!", "2.5.29.37", "2.5.29.19!", "2.5.29.14"]
        );
        let (_, cert) = X509Certificate::from_der(&der).expect("parses");
        assert!(cert.is_ca());
        assert_eq!(cert.version(), X509Version::V3);
        assert_eq!(cert.subject().to_string(), "CN=my-ca");
        assert_eq!(cert.issuer().to_string(), "CN=my-ca");
        let ku = cert.key_usage().expect("ok").expect("present").value;
        assert!(ku.digital_signature() && ku.key_encipherment() && ku.key_cert_sign());
        assert!(!ku.non_repudiation() && !ku.crl_sign());
        let skid = sha2::Sha256::digest(k.der_bytes());
        let id = cert
            .extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) => Some(id.0.to_vec()),
                _ => None,
            })
            .expect("a subject key id");
        assert_eq!(id, &skid[..20]);
        let days = cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
        assert_eq!(days, 365 * 86_400);
        // Self-signed: the signature verifies with its own key.
        cert.verify_signature(None).expect("signature verifies");
    }

    #[test]
    fn a_signed_leaf_names_its_authority_and_has_no_key_id() {
        let ca_key = key();
        let ca_t = Template {
            common_name: "ca",
            dns_names: &[],
            ip_addresses: &[],
            days: 10,
            is_ca: true,
        };
        let ca_der = create(&ca_t, &ca_key, None).expect("ca");
        let ca_pem = ::pem::encode(&::pem::Pem::new("CERTIFICATE", ca_der.clone()));
        let parent = Parent::from_pem(&ca_pem).expect("parent");
        let leaf_key = key();
        let dns = ["web.example".to_string(), "*.web.example".to_string()];
        let ips: [IpAddr; 2] = [
            "10.0.0.1".parse().expect("ip"),
            "::ffff:1.2.3.4".parse().expect("ip"),
        ];
        let t = Template {
            common_name: "*.web.example",
            dns_names: &dns,
            ip_addresses: &ips,
            days: 10,
            is_ca: false,
        };
        let der = create(&t, &leaf_key, Some((&parent, &ca_key))).expect("leaf");
        assert_eq!(
            extension_oids(&der),
            [
                "2.5.29.15!",
                "2.5.29.37",
                "2.5.29.19!",
                "2.5.29.35",
                "2.5.29.17"
            ]
        );
        let (_, cert) = X509Certificate::from_der(&der).expect("parses");
        assert!(!cert.is_ca());
        let (_, ca) = X509Certificate::from_der(&ca_der).expect("ca parses");
        cert.verify_signature(Some(ca.public_key()))
            .expect("signed by the CA");
        assert_eq!(cert.issuer().as_raw(), ca.subject().as_raw());
        // `*` is outside PrintableString: Go writes the name as a UTF8String (tag 12).
        let cn = cert.subject().iter_common_name().next().expect("cn");
        assert_eq!(cn.attr_value().header.tag().0, 12);
        let san = cert
            .subject_alternative_name()
            .expect("ok")
            .expect("present");
        let names: Vec<String> = san
            .value
            .general_names
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "DNSName(web.example)",
                "DNSName(*.web.example)",
                "IPAddress(0a:00:00:01)",
                "IPAddress(01:02:03:04)"
            ]
        );
        // The serial is a positive integer of at most 128 bits.
        let serial = cert.raw_serial();
        assert!(serial.len() <= 17 && serial[0] & 0x80 == 0);
    }

    #[test]
    fn a_key_that_is_not_the_parent_s_is_refused() {
        let ca_key = key();
        let t = Template {
            common_name: "ca",
            dns_names: &[],
            ip_addresses: &[],
            days: 1,
            is_ca: true,
        };
        let ca_pem = ::pem::encode(&::pem::Pem::new(
            "CERTIFICATE",
            create(&t, &ca_key, None).expect("ca"),
        ));
        let other = key();
        let parent = Parent::from_pem(&ca_pem).expect("parent");
        let err = create(&t, &key(), Some((&parent, &other))).expect_err("refused");
        assert_eq!(
            err,
            "x509: provided PrivateKey doesn't match parent's PublicKey"
        );
    }

    #[test]
    fn a_leaf_with_no_names_has_no_alternative_names_and_a_printable_subject() {
        let t = Template {
            common_name: "plain name",
            dns_names: &[],
            ip_addresses: &[],
            days: 1,
            is_ca: false,
        };
        let der = create(&t, &key(), None).expect("leaf");
        assert_eq!(
            extension_oids(&der),
            ["2.5.29.15!", "2.5.29.37", "2.5.29.19!"]
        );
        let (_, cert) = X509Certificate::from_der(&der).expect("parses");
        let cn = cert.subject().iter_common_name().next().expect("cn");
        assert_eq!(cn.attr_value().header.tag().0, 19);
    }
}
