//! The host key scan: enough of an SSH handshake (RFC 4253: version exchange, KEXINIT, an ECDH
//! init) for the server to send its host key, written as a `known_hosts` line.
//!
//! Like Flux's CLI (Go's `ssh.Dial` with a collecting host key callback) it takes the key of
//! the first algorithm in Go's preference order that the server offers. The exchange is not
//! completed and the server's signature is not checked: trust in a scanned key comes from the
//! user confirming it (trust on first use), not from the handshake. A full SSH client library
//! was rejected for this one message; see docs/cli.md.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use ring::agreement::{ECDH_P256, ECDH_P384, EphemeralPrivateKey, X25519};
use ring::rand::{SecureRandom, SystemRandom};

use super::SshError;

/// Key exchanges offered, in preference order (each needs only an ephemeral public key here).
const KEX: &[&str] = &[
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
];

/// Host key algorithms in Go's `x/crypto/ssh` preference order (certificates left out).
const HOST_KEY: &[&str] = &[
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-256",
    "rsa-sha2-512",
    "ssh-rsa",
    "ssh-ed25519",
];

const CIPHERS: &str = "aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com";
const MACS: &str = "hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1";

const MSG_DISCONNECT: u8 = 1;
const MSG_IGNORE: u8 = 2;
const MSG_UNIMPLEMENTED: u8 = 3;
const MSG_DEBUG: u8 = 4;
const MSG_KEXINIT: u8 = 20;
const MSG_KEX_ECDH_INIT: u8 = 30;
const MSG_KEX_ECDH_REPLY: u8 = 31;

/// The largest packet accepted (RFC 4253 asks for at least 35,000 bytes).
const MAX_PACKET: usize = 256 * 1024;

/// How `known_hosts` names `host:port` (Go's `knownhosts.Normalize`): the bare host for port
/// 22, `[host]:port` otherwise.
pub fn known_hosts_host(address: &str) -> String {
    let (host, port) = split_host_port(address).unwrap_or((address, "22"));
    if port == "22" {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// `host:port`, `[v6]:port`; `None` when there is no port.
fn split_host_port(address: &str) -> Option<(&str, &str)> {
    if let Some(rest) = address.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return Some((host, after.strip_prefix(':')?));
    }
    let (host, port) = address.rsplit_once(':')?;
    (!host.contains(':')).then_some((host, port))
}

/// Connects to `host` (`host[:port]`, port 22 when none is given, as Flux does), reads its host
/// key and returns the `known_hosts` line for it, without a trailing newline.
pub fn scan_host_key(host: &str, timeout: Duration) -> Result<String, SshError> {
    let address = match split_host_port(host) {
        Some(_) => host.to_string(),
        None if host.contains(':') => format!("[{host}]:22"),
        None => format!("{host}:22"),
    };
    let fail = |message: String| SshError::Scan {
        host: address.clone(),
        message,
    };
    let key = exchange(&address, timeout).map_err(fail)?;
    Ok(format!("{} {}", known_hosts_host(&address), key))
}

/// The handshake up to the server's ECDH reply; gives `<type> <base64>` of its host key.
fn exchange(address: &str, timeout: Duration) -> Result<String, String> {
    let addrs = address
        .to_socket_addrs()
        .map_err(|e| format!("dial tcp {address}: {e}"))?;
    let mut last = format!("dial tcp {address}: no address");
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("dial tcp {addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let io = |e: std::io::Error| format!("ssh: handshake failed: {e}");
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let rng = SystemRandom::new();

    stream
        .write_all(format!("SSH-2.0-Tidegate_{}\r\n", env!("CARGO_PKG_VERSION")).as_bytes())
        .map_err(io)?;
    read_version(&mut stream)?;

    let mut cookie = [0u8; 16];
    rng.fill(&mut cookie)
        .map_err(|_| "no randomness for the key exchange".to_string())?;
    let mut kexinit = vec![MSG_KEXINIT];
    kexinit.extend_from_slice(&cookie);
    for list in [
        KEX.join(","),
        HOST_KEY.join(","),
        CIPHERS.into(),
        CIPHERS.into(),
        MACS.into(),
        MACS.into(),
        "none".into(),
        "none".into(),
        String::new(),
        String::new(),
    ] {
        put_string(&mut kexinit, list.as_bytes());
    }
    kexinit.push(0); // first_kex_packet_follows
    kexinit.extend_from_slice(&[0, 0, 0, 0]);
    write_packet(&mut stream, &kexinit, &rng).map_err(io)?;

    let server = read_message(&mut stream, MSG_KEXINIT)?;
    // After the message type and the 16-byte cookie come the name-lists.
    let mut r = Reader(
        server
            .get(17..)
            .ok_or("ssh: handshake failed: truncated KEXINIT")?,
    );
    let server_kex = r.name_list()?;
    let server_host_keys = r.name_list()?;
    let kex = choose(KEX, &server_kex)
        .ok_or_else(|| format!("ssh: no common algorithm for key exchange; we offered: {KEX:?}, peer offered: {server_kex:?}"))?;
    choose(HOST_KEY, &server_host_keys).ok_or_else(|| {
        format!("ssh: no common algorithm for host key; we offered: {HOST_KEY:?}, peer offered: {server_host_keys:?}")
    })?;

    let alg = match kex {
        "ecdh-sha2-nistp256" => &ECDH_P256,
        "ecdh-sha2-nistp384" => &ECDH_P384,
        _ => &X25519,
    };
    let ephemeral = EphemeralPrivateKey::generate(alg, &rng)
        .map_err(|_| "ephemeral key generation failed".to_string())?;
    let public = ephemeral
        .compute_public_key()
        .map_err(|_| "ephemeral key generation failed".to_string())?;
    let mut init = vec![MSG_KEX_ECDH_INIT];
    put_string(&mut init, public.as_ref());
    write_packet(&mut stream, &init, &rng).map_err(io)?;

    let reply = read_message(&mut stream, MSG_KEX_ECDH_REPLY)?;
    let blob = Reader(reply.get(1..).unwrap_or_default()).string()?;
    let key = ssh_key::PublicKey::from_bytes(blob)
        .map_err(|e| format!("ssh: the server's host key cannot be read: {e}"))?;
    let mut disconnect = vec![MSG_DISCONNECT, 0, 0, 0, 11];
    put_string(&mut disconnect, b"host key scanned");
    put_string(&mut disconnect, b"");
    let _ = write_packet(&mut stream, &disconnect, &rng);
    key.to_openssh()
        .map(|line| line.trim_end().to_string())
        .map_err(|e| format!("ssh: the server's host key cannot be written: {e}"))
}

fn choose<'a>(ours: &[&'a str], theirs: &[String]) -> Option<&'a str> {
    ours.iter().copied().find(|a| theirs.iter().any(|t| t == a))
}

/// Skips the lines a server may send before its identification, then checks it is SSH 2.
fn read_version(stream: &mut TcpStream) -> Result<(), String> {
    for _ in 0..64 {
        let mut line = Vec::new();
        loop {
            let mut b = [0u8; 1];
            match stream.read(&mut b) {
                Ok(0) => return Err("ssh: handshake failed: EOF".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("ssh: handshake failed: {e}")),
            }
            if b[0] == b'\n' {
                break;
            }
            if line.len() > 255 {
                return Err("ssh: handshake failed: identification line too long".into());
            }
            line.push(b[0]);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        if text.starts_with("SSH-") {
            if text.starts_with("SSH-2.0-") || text.starts_with("SSH-1.99-") {
                return Ok(());
            }
            return Err(format!("ssh: incompatible server version {text:?}"));
        }
    }
    Err("ssh: handshake failed: no SSH identification from the server".into())
}

fn put_string(buf: &mut Vec<u8>, s: &[u8]) {
    buf.extend_from_slice(&(s.len() as u32).to_be_bytes());
    buf.extend_from_slice(s);
}

/// One unencrypted binary packet: length, padding length, payload, at least 4 random padding
/// bytes, the whole a multiple of 8.
fn write_packet(stream: &mut TcpStream, payload: &[u8], rng: &SystemRandom) -> std::io::Result<()> {
    let mut padding = 8 - (5 + payload.len()) % 8;
    if padding < 4 {
        padding += 8;
    }
    let mut pad = vec![0u8; padding];
    rng.fill(&mut pad)
        .map_err(|_| std::io::Error::other("no randomness"))?;
    let mut packet = Vec::with_capacity(5 + payload.len() + padding);
    packet.extend_from_slice(&((1 + payload.len() + padding) as u32).to_be_bytes());
    packet.push(padding as u8);
    packet.extend_from_slice(payload);
    packet.extend_from_slice(&pad);
    stream.write_all(&packet)
}

/// Reads packets until one of type `want`, skipping ignore/debug/unimplemented messages.
fn read_message(stream: &mut TcpStream, want: u8) -> Result<Vec<u8>, String> {
    let io = |e: std::io::Error| format!("ssh: handshake failed: {e}");
    for _ in 0..64 {
        let mut len = [0u8; 4];
        stream.read_exact(&mut len).map_err(io)?;
        let len = u32::from_be_bytes(len) as usize;
        if !(2..=MAX_PACKET).contains(&len) {
            return Err(format!("ssh: handshake failed: bad packet length {len}"));
        }
        let mut packet = vec![0u8; len];
        stream.read_exact(&mut packet).map_err(io)?;
        let padding = packet[0] as usize;
        if padding + 2 > len {
            return Err("ssh: handshake failed: bad padding length".into());
        }
        let payload = packet[1..len - padding].to_vec();
        match payload[0] {
            t if t == want => return Ok(payload),
            MSG_IGNORE | MSG_DEBUG | MSG_UNIMPLEMENTED => continue,
            MSG_DISCONNECT => {
                let mut r = Reader(payload.get(5..).unwrap_or_default());
                let reason = r.string().map(String::from_utf8_lossy).unwrap_or_default();
                return Err(format!("ssh: disconnect, reason: {reason}"));
            }
            other => {
                return Err(format!(
                    "ssh: handshake failed: unexpected message type {other} (expected {want})"
                ));
            }
        }
    }
    Err("ssh: handshake failed: too many messages before the key exchange".into())
}

/// Reads SSH wire types from a payload.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn string(&mut self) -> Result<&'a [u8], String> {
        let short = || "ssh: handshake failed: truncated message".to_string();
        let len = self.0.get(..4).ok_or_else(short)?;
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let s = self.0.get(4..4 + len).ok_or_else(short)?;
        self.0 = &self.0[4 + len..];
        Ok(s)
    }

    fn name_list(&mut self) -> Result<Vec<String>, String> {
        let s = self.string()?;
        Ok(String::from_utf8_lossy(s)
            .split(',')
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hosts_names() {
        assert_eq!(known_hosts_host("github.com:22"), "github.com");
        assert_eq!(known_hosts_host("127.0.0.1:2222"), "[127.0.0.1]:2222");
        assert_eq!(known_hosts_host("[::1]:2222"), "[::1]:2222");
        assert_eq!(known_hosts_host("[::1]:22"), "::1");
    }

    /// A server that answers the identification with `payload` as its first packet.
    fn fake_server(payload: Vec<u8>) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(b"a banner line\r\nSSH-2.0-fake\r\n").unwrap();
            let padding = 4usize;
            let mut packet = ((1 + payload.len() + padding) as u32)
                .to_be_bytes()
                .to_vec();
            packet.push(padding as u8);
            packet.extend_from_slice(&payload);
            packet.extend_from_slice(&[0; 4]);
            s.write_all(&packet).unwrap();
            let mut sink = [0u8; 4096];
            while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        });
        address
    }

    #[test]
    fn malformed_servers_are_errors_not_panics() {
        let timeout = Duration::from_secs(5);
        let e = scan_host_key(&fake_server(vec![MSG_KEXINIT, 1, 2]), timeout)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("ssh: handshake failed: truncated KEXINIT"),
            "{e}"
        );
        let mut kexinit = vec![MSG_KEXINIT];
        kexinit.extend_from_slice(&[0; 16]);
        put_string(&mut kexinit, b"diffie-hellman-group1-sha1");
        put_string(&mut kexinit, b"ssh-ed25519");
        let e = scan_host_key(&fake_server(kexinit), timeout)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ssh: no common algorithm for key exchange"),
            "{e}"
        );
        let mut disconnect = vec![MSG_DISCONNECT, 0, 0, 0, 2];
        put_string(&mut disconnect, b"go away");
        let e = scan_host_key(&fake_server(disconnect), timeout)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("ssh: disconnect, reason: go away"), "{e}");
    }

    #[test]
    fn refuses_a_closed_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let e = scan_host_key(&format!("127.0.0.1:{port}"), Duration::from_secs(5))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "SSH key scan for host 127.0.0.1:{port} failed, error: dial tcp"
            )),
            "{e}"
        );
    }
}
