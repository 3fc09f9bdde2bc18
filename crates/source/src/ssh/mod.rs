//! What `create secret git` needs for Git over SSH, as Flux's CLI does it: a deploy key pair
//! ([`KeyPair::generate`] or [`KeyPair::load`]) and the server's host key as a `known_hosts`
//! line ([`scan_host_key`]).

mod host_key;
mod key_pair;

pub use host_key::{known_hosts_host, scan_host_key};
pub use key_pair::{KeyAlgorithm, KeyPair};

/// Why a key could not be made, read or scanned.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    /// Key generation failed or the parameters are refused.
    #[error("key pair generation failed, error: {0}")]
    Generate(String),
    /// A private key file that cannot be used.
    #[error("{0}")]
    Load(String),
    /// The host key scan failed (connection, protocol, or no common algorithm).
    #[error("SSH key scan for host {host} failed, error: {message}")]
    Scan {
        /// `host:port` as dialled.
        host: String,
        /// What went wrong.
        message: String,
    },
}
