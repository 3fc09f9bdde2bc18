//! One encrypted value: `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`, AES-256-GCM with the
//! value's path as additional data and an IV of whatever length the value carries (sops writes
//! 32 bytes, so the GCM counter starts from a GHASH of the IV).

use std::sync::LazyLock;

use aes_gcm::AesGcm;
use aes_gcm::aead::consts::{U12, U32};
use aes_gcm::aead::generic_array::GenericArray;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::aes::Aes256;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use regex::Regex;

use crate::tree::{Comment, Value};

static FORMAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]").expect("valid regex")
});

/// Why one value could not be decrypted (sops' own wording).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CipherError {
    /// Not in sops' `ENC[…]` format; the value itself is kept out of messages.
    #[error("Input string {0} does not match sops' data format")]
    Format(String),
    /// A part is not valid base64.
    #[error("Error base64-decoding {part}: {message}")]
    Base64 {
        /// `data`, `iv` or `tag`.
        part: &'static str,
        /// The decoder's message.
        message: String,
    },
    /// Wrong key, wrong path or tampered value.
    #[error("Could not decrypt with AES_GCM: cipher: message authentication failed")]
    Authentication,
    /// An IV length AES-GCM cannot take.
    #[error("Could not decrypt with AES_GCM: cipher: unsupported nonce size {0}")]
    NonceSize(usize),
    /// The plaintext does not parse as its declared type.
    #[error("{0}")]
    Type(String),
    /// A type sops does not know.
    #[error("Unknown datatype: {0}")]
    UnknownType(String),
}

/// Whether `s` looks like an encrypted value at all.
pub fn is_encrypted(s: &str) -> bool {
    FORMAT.is_match(s)
}

/// Decrypts one value with the data key and `aad` (the value's path joined by `:`, plus `:`).
/// The empty string is the empty string: sops never encrypts it.
pub fn decrypt(value: &str, key: &[u8; 32], aad: &str) -> Result<Value, CipherError> {
    if value.is_empty() {
        return Ok(Value::Str(String::new()));
    }
    let caps = FORMAT
        .captures(value)
        .ok_or_else(|| CipherError::Format("<redacted>".into()))?;
    let part = |i: usize, name: &'static str| {
        STANDARD.decode(&caps[i]).map_err(|e| CipherError::Base64 {
            part: name,
            message: go_base64_error(&e),
        })
    };
    let mut data = part(1, "data")?;
    let iv = part(2, "iv")?;
    let tag = part(3, "tag")?;
    let kind = caps[4].to_string();
    if tag.len() != 16 {
        return Err(CipherError::Authentication);
    }
    let key = GenericArray::from_slice(key);
    let opened = match iv.len() {
        32 => AesGcm::<Aes256, U32>::new(key).decrypt_in_place_detached(
            GenericArray::from_slice(&iv),
            aad.as_bytes(),
            &mut data,
            GenericArray::from_slice(&tag[..16]),
        ),
        12 => AesGcm::<Aes256, U12>::new(key).decrypt_in_place_detached(
            GenericArray::from_slice(&iv),
            aad.as_bytes(),
            &mut data,
            GenericArray::from_slice(&tag[..16]),
        ),
        16 => AesGcm::<Aes256, aes_gcm::aead::consts::U16>::new(key).decrypt_in_place_detached(
            GenericArray::from_slice(&iv),
            aad.as_bytes(),
            &mut data,
            GenericArray::from_slice(&tag[..16]),
        ),
        n => return Err(CipherError::NonceSize(n)),
    };
    opened.map_err(|_| CipherError::Authentication)?;
    typed(data, &kind)
}

/// The plaintext as the type the value declares.
fn typed(data: Vec<u8>, kind: &str) -> Result<Value, CipherError> {
    let text = || String::from_utf8_lossy(&data).into_owned();
    match kind {
        "str" => Ok(Value::Str(text())),
        "bytes" => Ok(Value::Bytes(data)),
        "int" => {
            let t = text();
            t.parse::<i64>().map(Value::Int).map_err(|_| {
                CipherError::Type(format!("strconv.Atoi: parsing {t:?}: invalid syntax"))
            })
        }
        "float" => {
            let t = text();
            parse_go_float(&t).map(Value::Float).ok_or_else(|| {
                CipherError::Type(format!("strconv.ParseFloat: parsing {t:?}: invalid syntax"))
            })
        }
        "bool" => match text().as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Value::Bool(false)),
            t => Err(CipherError::Type(format!(
                "strconv.ParseBool: parsing {t:?}: invalid syntax"
            ))),
        },
        "time" => {
            let t = text();
            chrono::DateTime::parse_from_rfc3339(&t)
                .map(|_| Value::Time(t.clone()))
                .map_err(|_| {
                    CipherError::Type(format!(
                        "parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
                    ))
                })
        }
        "comment" => Ok(Value::Comment(Comment {
            text: text(),
            inline: false,
        })),
        other => Err(CipherError::UnknownType(other.to_string())),
    }
}

/// Go's `strconv.ParseFloat`: Rust's parser plus Go's spellings of infinity.
fn parse_go_float(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ => s.replace('_', "").parse().ok(),
    }
}

fn go_base64_error(e: &base64::DecodeError) -> String {
    match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            format!("illegal base64 data at input byte {at}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_string_is_never_encrypted() {
        assert_eq!(decrypt("", &[0; 32], "a:"), Ok(Value::Str(String::new())));
    }

    #[test]
    fn a_value_out_of_format_is_redacted() {
        assert_eq!(
            decrypt("1234567897", &[0; 32], "a:")
                .unwrap_err()
                .to_string(),
            "Input string <redacted> does not match sops' data format"
        );
    }
}
