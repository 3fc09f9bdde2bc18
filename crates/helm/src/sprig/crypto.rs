//! Sprig's cryptographic functions: digests (`sha256sum` …), `bcrypt` and `htpasswd`,
//! `derivePassword` (Master Password's algorithm), `randBytes`, `uuidv4`, private keys
//! (`genPrivateKey`), certificates (`genCA`, `genSelfSignedCert`, `genSignedCert`, their
//! `WithKey` forms, `buildCustomCert`) and `encryptAES`/`decryptAES`.

use std::any::Any;
use std::rc::Rc;

use base64::Engine;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use sha2::Digest;

use super::{i, s};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::{Object, Value};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Sprig's `certificate` struct: PEM certificate and key.
#[derive(Debug, Clone)]
pub struct Certificate {
    pub cert: String,
    pub key: String,
}

impl Object for Certificate {
    fn type_name(&self) -> String {
        "sprig.certificate".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::str(&self.cert)),
            "Key" => Some(Value::str(&self.key)),
            _ => None,
        }
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("Cert", Value::str(&self.cert)),
            ("Key", Value::str(&self.key)),
        ]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

const CERT: Ty = Ty::Named("sprig.certificate");

fn cert_of(v: &Value) -> Certificate {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<Certificate>().cloned(),
        _ => None,
    }
    .unwrap_or(Certificate {
        cert: String::new(),
        key: String::new(),
    })
}

fn cert_value(c: Certificate) -> Value {
    Value::Object(Rc::new(c))
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Int, List, String as Str};
    m.insert(Func::new("sha1sum", &[Str], None, |_, a| {
        Ok(Value::str(&hex(&sha1::Sha1::digest(s(&a[0]).as_bytes()))))
    }));
    m.insert(Func::new("sha256sum", &[Str], None, |_, a| {
        Ok(Value::str(&hex(&sha2::Sha256::digest(s(&a[0]).as_bytes()))))
    }));
    m.insert(Func::new("sha512sum", &[Str], None, |_, a| {
        Ok(Value::str(&hex(&sha2::Sha512::digest(s(&a[0]).as_bytes()))))
    }));
    m.insert(Func::new("adler32sum", &[Str], None, |_, a| {
        Ok(Value::str(&adler32(s(&a[0]).as_bytes()).to_string()))
    }));
    m.insert(Func::new("bcrypt", &[Str], None, |_, a| {
        Ok(Value::str(&bcrypt_hash(s(&a[0]))))
    }));
    m.insert(Func::new("htpasswd", &[Str, Str], None, |_, a| {
        let user = s(&a[0]);
        if user.contains(':') {
            return Ok(Value::str(&format!("invalid username: {user}")));
        }
        Ok(Value::str(&format!("{user}:{}", bcrypt_hash(s(&a[1])))))
    }));
    m.insert(Func::new("randBytes", &[Int], None, |_, a| {
        let n = i(&a[0]);
        if n < 0 {
            return Err("runtime error: makeslice: len out of range".into());
        }
        let bytes: Vec<u8> = (0..n).map(|_| rand::random::<u8>()).collect();
        Ok(Value::str(&B64.encode(bytes)))
    }));
    m.insert(Func::new("uuidv4", &[], None, |_, _| {
        Ok(Value::str(&uuid::Uuid::new_v4().to_string()))
    }));
    m.insert(Func::new(
        "derivePassword",
        &[Ty::Named("uint32"), Str, Str, Str, Str],
        None,
        |_, a| {
            let counter = match &a[0] {
                Value::Uint(u, _) => *u as u32,
                _ => 0,
            };
            Ok(Value::str(&derive_password(
                counter,
                s(&a[1]),
                s(&a[2]),
                s(&a[3]),
                s(&a[4]),
            )))
        },
    ));
    m.insert(Func::new("genPrivateKey", &[Str], None, |_, a| {
        Ok(Value::str(&gen_private_key(s(&a[0]))))
    }));
    m.insert(Func::new("buildCustomCert", &[Str, Str], None, |_, a| {
        let cert = B64
            .decode(s(&a[0]))
            .map_err(|_| "unable to decode base64 certificate")?;
        let key = B64
            .decode(s(&a[1]))
            .map_err(|_| "unable to decode base64 private key")?;
        let cert = String::from_utf8_lossy(&cert).into_owned();
        let key = String::from_utf8_lossy(&key).into_owned();
        if pem::parse(&cert).is_err() {
            return Err("unable to decode certificate".into());
        }
        parse_private_key(&key).map_err(|e| format!("error parsing private key: {e}"))?;
        Ok(cert_value(Certificate { cert, key }))
    }));
    m.insert(Func::new("genCA", &[Str, Int], None, |_, a| {
        let key = Key::rsa(2048)?;
        Ok(cert_value(make_cert(
            s(&a[0]),
            &[],
            &[],
            i(&a[1]),
            true,
            &key,
            None,
        )?))
    }));
    m.insert(Func::new("genCAWithKey", &[Str, Int, Str], None, |_, a| {
        let key = parse_private_key(s(&a[2])).map_err(|e| format!("parsing private key: {e}"))?;
        Ok(cert_value(make_cert(
            s(&a[0]),
            &[],
            &[],
            i(&a[1]),
            true,
            &key,
            None,
        )?))
    }));
    m.insert(Func::new(
        "genSelfSignedCert",
        &[Str, List, List, Int],
        None,
        |_, a| self_signed(&a, &Key::rsa(2048)?),
    ));
    m.insert(Func::new(
        "genSelfSignedCertWithKey",
        &[Str, List, List, Int, Str],
        None,
        |_, a| {
            let key =
                parse_private_key(s(&a[4])).map_err(|e| format!("parsing private key: {e}"))?;
            self_signed(&a, &key)
        },
    ));
    m.insert(Func::new(
        "genSignedCert",
        &[Str, List, List, Int, CERT],
        None,
        |_, a| {
            let key = Key::rsa(2048)?;
            let ca = cert_of(&a[4]);
            Ok(cert_value(make_cert(
                s(&a[0]),
                &strings(&a[1]),
                &strings(&a[2]),
                i(&a[3]),
                false,
                &key,
                Some(&ca),
            )?))
        },
    ));
    m.insert(Func::new(
        "genSignedCertWithKey",
        &[Str, List, List, Int, CERT, Str],
        None,
        |_, a| {
            let key =
                parse_private_key(s(&a[5])).map_err(|e| format!("parsing private key: {e}"))?;
            let ca = cert_of(&a[4]);
            Ok(cert_value(make_cert(
                s(&a[0]),
                &strings(&a[1]),
                &strings(&a[2]),
                i(&a[3]),
                false,
                &key,
                Some(&ca),
            )?))
        },
    ));
    m.insert(Func::new("encryptAES", &[Str, Str], None, |_, a| {
        encrypt_aes(s(&a[0]), s(&a[1])).map(|v| Value::str(&v))
    }));
    m.insert(Func::new("decryptAES", &[Str, Str], None, |_, a| {
        decrypt_aes(s(&a[0]), s(&a[1])).map(|v| Value::str(&v))
    }));
}

fn strings(v: &Value) -> Vec<Value> {
    super::items(v).unwrap_or_default()
}

/// Go's `hash/adler32`.
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for byte in chunk {
            a += u32::from(*byte);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

/// Go's `bcrypt.DefaultCost`, which Sprig uses (the Rust crate's default is 12).
const GO_BCRYPT_COST: u32 = 10;

fn bcrypt_hash(password: &str) -> String {
    match bcrypt::hash_with_result(password, GO_BCRYPT_COST) {
        Ok(h) => h.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

const MASTER_PASSWORD_SEED: &str = "com.lyndir.masterpassword";

fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_characters(c: u8) -> &'static [u8] {
    match c {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

/// Master Password's site password, as Sprig's `derivePassword` computes it.
fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    use hmac::Mac;
    let Some(templates) = password_templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = match scrypt::Params::new(15, 8, 2, 64) {
        Ok(p) => p,
        Err(e) => return format!("failed to derive password: {e}"),
    };
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return format!("failed to derive password: {e}");
    }
    let mut message = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key) else {
        return "failed to derive password".into();
    };
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[seed[0] as usize % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(i, c)| {
            let chars = template_characters(c);
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect()
}

/// A private key Sprig can make or read.
enum Key {
    Rsa(Box<rsa::RsaPrivateKey>),
    Ecdsa(Box<p256::SecretKey>),
    Ed25519(Box<ed25519_dalek::SigningKey>),
}

impl Key {
    /// A new RSA key. AWS-LC generates it (several times faster than the pure-Rust prime
    /// search, and faster than Go's); the `rsa` crate holds it for encoding.
    fn rsa(bits: usize) -> Result<Key, String> {
        use aws_lc_rs::encoding::AsDer;
        let size = match bits {
            2048 => aws_lc_rs::rsa::KeySize::Rsa2048,
            3072 => aws_lc_rs::rsa::KeySize::Rsa3072,
            4096 => aws_lc_rs::rsa::KeySize::Rsa4096,
            _ => aws_lc_rs::rsa::KeySize::Rsa8192,
        };
        let pair = aws_lc_rs::rsa::KeyPair::generate(size)
            .map_err(|e| format!("error generating rsa key: {e}"))?;
        let der = pair
            .as_der()
            .map_err(|e| format!("error generating rsa key: {e}"))?;
        rsa::RsaPrivateKey::from_pkcs8_der(der.as_ref())
            .map(|k| Key::Rsa(Box::new(k)))
            .map_err(|e| format!("error generating rsa key: {e}"))
    }

    /// The key as Sprig writes it: PKCS#1 for RSA, SEC 1 for ECDSA, PKCS#8 for Ed25519.
    fn pem(&self) -> String {
        let result = match self {
            Key::Rsa(k) => k
                .to_pkcs1_pem(rsa::pkcs8::LineEnding::LF)
                .map(|p| p.to_string())
                .map_err(|e| e.to_string()),
            Key::Ecdsa(k) => Ok(ec_sec1_pem(k)),
            Key::Ed25519(k) => Ok(ed25519_pkcs8_v1_pem(k)),
        };
        result.unwrap_or_default()
    }

    fn pkcs8_der(&self) -> Result<Vec<u8>, String> {
        let doc = match self {
            Key::Rsa(k) => k.to_pkcs8_der(),
            Key::Ecdsa(k) => k.to_pkcs8_der(),
            Key::Ed25519(k) => k.to_pkcs8_der(),
        };
        doc.map(|d| d.as_bytes().to_vec())
            .map_err(|e| e.to_string())
    }

    fn rcgen(&self) -> Result<rcgen::KeyPair, String> {
        let der = self.pkcs8_der()?;
        let der = rustls_pki_types::PrivatePkcs8KeyDer::from(der);
        let alg = match self {
            Key::Rsa(_) => &rcgen::PKCS_RSA_SHA256,
            Key::Ecdsa(_) => &rcgen::PKCS_ECDSA_P256_SHA256,
            Key::Ed25519(_) => &rcgen::PKCS_ED25519,
        };
        rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, alg).map_err(|e| e.to_string())
    }
}

/// An Ed25519 key as Go's `x509.MarshalPKCS8PrivateKey` writes it: PKCS#8 version 1, the
/// seed alone (no public key, which OpenSSL 3.0 and pyca cannot read in version 2).
fn ed25519_pkcs8_v1_pem(key: &ed25519_dalek::SigningKey) -> String {
    // SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING seed } }
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(key.as_bytes());
    pem::encode_config(
        &pem::Pem::new("PRIVATE KEY", der),
        pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
    )
}

/// A P-256 key as Go's `x509.MarshalECPrivateKey` writes it: SEC 1 with the curve named in
/// the parameters (the `p256` crate leaves them out) and the public point.
fn ec_sec1_pem(key: &p256::SecretKey) -> String {
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    let point = key.public_key().to_encoded_point(false);
    let der = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_u8(1);
            w.next().write_bytes(&key.to_bytes());
            w.next().write_tagged(yasna::Tag::context(0), |w| {
                w.write_oid(&yasna::models::ObjectIdentifier::from_slice(&[
                    1, 2, 840, 10045, 3, 1, 7,
                ]))
            });
            w.next().write_tagged(yasna::Tag::context(1), |w| {
                w.write_bitvec_bytes(point.as_bytes(), point.len() * 8)
            });
        })
    });
    pem::encode_config(
        &pem::Pem::new("EC PRIVATE KEY", der),
        pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
    )
}

fn gen_private_key(kind: &str) -> String {
    let key = match kind {
        "" | "rsa" => Key::rsa(4096),
        "ecdsa" => Ok(Key::Ecdsa(Box::new(p256::SecretKey::random(
            &mut rand08::thread_rng(),
        )))),
        "ed25519" => Ok(Key::Ed25519(Box::new(ed25519_dalek::SigningKey::generate(
            &mut rand08::thread_rng(),
        )))),
        "dsa" => {
            return "failed to generate private key: DSA keys are not supported by Tidegate".into();
        }
        other => return format!("Unknown type {other}"),
    };
    match key {
        Ok(k) => k.pem(),
        Err(e) => format!("failed to generate private key: {e}"),
    }
}

/// `genSelfSignedCert*`: a certificate for `(cn, ips, alternate names, days)` signed by `key`.
fn self_signed(a: &[Value], key: &Key) -> Result<Value, String> {
    Ok(cert_value(make_cert(
        s(&a[0]),
        &strings(&a[1]),
        &strings(&a[2]),
        i(&a[3]),
        false,
        key,
        None,
    )?))
}

fn parse_private_key(text: &str) -> Result<Key, String> {
    let block = pem::parse(text).map_err(|_| "no PEM data in input".to_string())?;
    let tag = block.tag();
    let der = block.contents();
    if tag == "PRIVATE KEY" {
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            return Ok(Key::Rsa(Box::new(k)));
        }
        if let Ok(k) = p256::SecretKey::from_pkcs8_der(der) {
            return Ok(Key::Ecdsa(Box::new(k)));
        }
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_der(der) {
            return Ok(Key::Ed25519(Box::new(k)));
        }
        return Err("decoding PEM as PKCS#8: x509: PKCS#8 wrapping contained private key with unknown algorithm".into());
    }
    let Some(kind) = tag.strip_suffix(" PRIVATE KEY") else {
        return Err(format!("no private key data in PEM block of type {tag}"));
    };
    match kind {
        "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(der)
            .map(|k| Key::Rsa(Box::new(k)))
            .map_err(|e| format!("parsing RSA private key from PEM: {e}")),
        "EC" => p256::SecretKey::from_sec1_der(der)
            .map(|k| Key::Ecdsa(Box::new(k)))
            .map_err(|e| format!("parsing EC private key from PEM: {e}")),
        _ => Err(format!("invalid private key type {tag}")),
    }
}

fn make_cert(
    cn: &str,
    ips: &[Value],
    dns: &[Value],
    days: i64,
    is_ca: bool,
    key: &Key,
    ca: Option<&Certificate>,
) -> Result<Certificate, String> {
    // Parsed in Sprig's order (addresses first); written in Go's (names, then addresses).
    let mut ip_addresses = Vec::new();
    for ip in ips {
        let Value::String(text) = ip else {
            return Err(format!(
                "error parsing ip: {} is not a string",
                super::strval(ip)
            ));
        };
        let addr: std::net::IpAddr = text
            .parse()
            .map_err(|_| format!("error parsing ip: {text}"))?;
        ip_addresses.push(addr);
    }
    let mut dns_names = Vec::new();
    for name in dns {
        let Value::String(text) = name else {
            return Err(format!(
                "error processing alternate dns name: {} is not a string",
                super::strval(name)
            ));
        };
        dns_names.push(text.to_string());
    }
    let template = super::x509::Template {
        common_name: cn,
        dns_names: &dns_names,
        ip_addresses: &ip_addresses,
        days,
        is_ca,
    };
    let pair = key.rcgen()?;
    let der = match ca {
        None => super::x509::create(&template, &pair, None),
        Some(ca) => {
            // Sprig's order: the certificate is decoded and parsed before the key.
            let parent = super::x509::Parent::from_pem(&ca.cert)?;
            let ca_key = parse_private_key(&ca.key)
                .map_err(|e| format!("error parsing private key: {e}"))?;
            let ca_pair = ca_key.rcgen()?;
            super::x509::create(&template, &pair, Some((&parent, &ca_pair)))
        }
    }
    .map_err(|e| format!("error creating certificate: {e}"))?;
    Ok(Certificate {
        cert: pem::encode_config(
            &pem::Pem::new("CERTIFICATE", der),
            pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
        ),
        key: key.pem(),
    })
}

/// Sprig's AES key: the password's bytes in 32 zeroed bytes.
fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password.as_bytes()[..n]);
    key
}

/// Sprig's `encryptAES`: AES-256-CBC, a random IV written first, PKCS#7 padding, base64.
fn encrypt_aes(password: &str, plaintext: &str) -> Result<String, String> {
    use cbc::cipher::{BlockEncryptMut, KeyIvInit, block_padding::Pkcs7};
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let iv: [u8; 16] = rand::random();
    let enc = cbc::Encryptor::<aes::Aes256>::new_from_slices(&aes_key(password), &iv)
        .map_err(|e| e.to_string())?;
    let ct = enc.encrypt_padded_vec_mut::<Pkcs7>(plaintext.as_bytes());
    let mut out = iv.to_vec();
    out.extend_from_slice(&ct);
    Ok(B64.encode(out))
}

/// Sprig's `decryptAES`: the padding length read from the last byte, unchecked as Go does.
fn decrypt_aes(password: &str, crypt64: &str) -> Result<String, String> {
    use cbc::cipher::{BlockDecryptMut, KeyIvInit, block_padding::NoPadding};
    if crypt64.is_empty() {
        return Ok(String::new());
    }
    let data = super::encoding::base64_decode(crypt64)?;
    if data.len() < 16 {
        return Err(format!(
            "runtime error: slice bounds out of range [:16] with capacity {}",
            data.len()
        ));
    }
    if (data.len() - 16) % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let dec = cbc::Decryptor::<aes::Aes256>::new_from_slices(&aes_key(password), &data[..16])
        .map_err(|e| e.to_string())?;
    let pt = dec
        .decrypt_padded_vec_mut::<NoPadding>(&data[16..])
        .map_err(|e| e.to_string())?;
    let pad = pt.last().copied().unwrap_or(0) as usize;
    if pad > pt.len() {
        return Err(format!(
            "runtime error: slice bounds out of range [:{}]",
            pt.len() as i64 - pad as i64
        ));
    }
    Ok(String::from_utf8_lossy(&pt[..pt.len() - pad]).into_owned())
}
