//! AWS Signature Version 4 in the `Authorization` header, as minio-go (Flux's S3 client)
//! signs requests: every S3-compatible server accepts it, including the ones that refuse
//! presigned query strings when authentication is on. Requests carry no body (GETs and
//! HEADs), so the payload hash is the hash of nothing.

use hmac::{Hmac, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use sha2::{Digest, Sha256};

/// SigV4's URI encoding: everything but `A-Z a-z 0-9 - _ . ~`.
const URI_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The SHA-256 of an empty payload.
pub const EMPTY_PAYLOAD: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A query string in SigV4's canonical form: pairs sorted by name then value, both
/// URI-encoded. Send it as it is so the server sees what was signed.
pub fn canonical_query(pairs: &[(&str, &str)]) -> String {
    let mut encoded: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| {
            (
                utf8_percent_encode(k, URI_ENCODE).to_string(),
                utf8_percent_encode(v, URI_ENCODE).to_string(),
            )
        })
        .collect();
    encoded.sort();
    encoded
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// What a signed request must send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `x-amz-date`.
    pub amz_date: String,
    /// `x-amz-content-sha256`.
    pub content_sha256: String,
    /// `authorization`.
    pub authorization: String,
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Signs `method` `host` `path` (already percent-encoded, as sent) with `query` (from
/// [`canonical_query`]) at `amz_date` (`YYYYMMDDTHHMMSSZ`), for the `s3` service in `region`.
#[allow(clippy::too_many_arguments)]
pub fn sign(
    method: &str,
    host: &str,
    path: &str,
    query: &str,
    amz_date: &str,
    region: &str,
    access_key: &str,
    secret_key: &str,
) -> SignedHeaders {
    let day = &amz_date[..amz_date.len().min(8)];
    let canonical = format!(
        "{method}\n{path}\n{query}\nhost:{host}\nx-amz-content-sha256:{EMPTY_PAYLOAD}\nx-amz-date:{amz_date}\n\nhost;x-amz-content-sha256;x-amz-date\n{EMPTY_PAYLOAD}"
    );
    let scope = format!("{day}/{region}/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let key = hmac(format!("AWS4{secret_key}").as_bytes(), day.as_bytes());
    let key = hmac(&key, region.as_bytes());
    let key = hmac(&key, b"s3");
    let key = hmac(&key, b"aws4_request");
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    SignedHeaders {
        amz_date: amz_date.to_string(),
        content_sha256: EMPTY_PAYLOAD.to_string(),
        authorization: format!(
            "AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={signature}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "GET Object" and "GET Bucket (List Objects)" examples of the S3 documentation
    /// ("Signature Calculations for the Authorization Header"), less the Range header the
    /// first one signs: the list example's signature is the documented one.
    #[test]
    fn aws_documented_list_example() {
        let query = canonical_query(&[("max-keys", "2"), ("prefix", "J")]);
        assert_eq!(query, "max-keys=2&prefix=J");
        let signed = sign(
            "GET",
            "examplebucket.s3.amazonaws.com",
            "/",
            &query,
            "20130524T000000Z",
            "us-east-1",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        );
        assert_eq!(
            signed.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        );
    }

    #[test]
    fn query_encoding_is_sigv4_s() {
        assert_eq!(
            canonical_query(&[("prefix", "a b+c/d~e"), ("list-type", "2")]),
            "list-type=2&prefix=a%20b%2Bc%2Fd~e"
        );
    }
}
