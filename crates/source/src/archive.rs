//! Reproducible tar.gz artifacts.
//!
//! The same content always gives the same bytes: entries come in the order the caller gives
//! (the file tree walks them sorted, depth first, as Flux does), every header has mtime 0,
//! uid/gid 0, no user or group names, and Flux's normalised modes (directories 0750, files 0600,
//! executables 0700). The digest is the sha256 of the compressed bytes, computed while writing.

use std::io::{self, Write};

use sha2::{Digest as _, Sha256};

/// Mode of directory entries.
pub const DIR_MODE: u32 = 0o750;
/// Mode of regular files.
pub const FILE_MODE: u32 = 0o600;
/// Mode of files with an executable bit.
pub const EXEC_MODE: u32 = 0o700;

/// What an archive came to: its digest (`sha256:<hex>`) and compressed size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `sha256:<hex>` of the compressed bytes.
    pub digest: String,
    /// Number of compressed bytes.
    pub size: u64,
}

/// Writes a tar.gz stream entry by entry.
pub struct ArchiveWriter<W: Write> {
    builder: tar::Builder<flate2::write::GzEncoder<HashingWriter<W>>>,
    /// What consumers extract at most: an artifact beyond it is refused here, when it is made.
    limits: crate::extract::Limits,
    entries: usize,
    content: u64,
}

impl<W: Write> ArchiveWriter<W> {
    /// Starts an archive written to `out`.
    pub fn new(out: W) -> Self {
        let hashing = HashingWriter {
            inner: out,
            hasher: Sha256::new(),
            size: 0,
        };
        let gz = flate2::GzBuilder::new()
            .mtime(0)
            .write(hashing, flate2::Compression::default());
        let mut builder = tar::Builder::new(gz);
        builder.mode(tar::HeaderMode::Deterministic);
        ArchiveWriter {
            builder,
            limits: crate::extract::Limits::default(),
            entries: 0,
            content: 0,
        }
    }

    /// Starts an archive held to `limits` instead of the default ones.
    pub fn with_limits(out: W, limits: crate::extract::Limits) -> Self {
        let mut w = ArchiveWriter::new(out);
        w.limits = limits;
        w
    }

    /// Counts one entry of `size` content bytes against the limits consumers extract with.
    fn count(&mut self, size: u64) -> io::Result<()> {
        self.entries += 1;
        self.content = self.content.saturating_add(size);
        if self.entries > self.limits.max_entries {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the artifact would hold more than {} files and directories, the most an artifact may hold",
                    self.limits.max_entries
                ),
            ));
        }
        if self.content > self.limits.max_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the artifact's files would total more than {} bytes, the most an artifact may hold",
                    self.limits.max_size
                ),
            ));
        }
        Ok(())
    }

    /// Adds a directory entry (`path` relative, `/`-separated, no trailing slash).
    pub fn add_dir(&mut self, path: &str) -> io::Result<()> {
        self.count(0)?;
        let mut header = header(tar::EntryType::Directory, DIR_MODE, 0);
        self.builder.append_data(&mut header, path, io::empty())
    }

    /// Adds a regular file.
    pub fn add_file(&mut self, path: &str, executable: bool, data: &[u8]) -> io::Result<()> {
        self.count(data.len() as u64)?;
        let mode = if executable { EXEC_MODE } else { FILE_MODE };
        let mut header = header(tar::EntryType::Regular, mode, data.len() as u64);
        self.builder.append_data(&mut header, path, data)
    }

    /// Ends the archive and returns the writer with the digest and size of what was written.
    pub fn finish(self) -> io::Result<(W, Written)> {
        let gz = self.builder.into_inner()?;
        let mut hashing = gz.finish()?;
        hashing.flush()?;
        let written = Written {
            digest: format!("sha256:{}", hex(&hashing.hasher.finalize_reset())),
            size: hashing.size,
        };
        Ok((hashing.inner, written))
    }
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(0);
    h.set_uid(0);
    h.set_gid(0);
    h
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `sha256:<hex>` of everything read from `reader`, with the byte count.
pub fn digest_of(mut reader: impl io::Read) -> io::Result<Written> {
    let mut hashing = HashingWriter {
        inner: io::sink(),
        hasher: Sha256::new(),
        size: 0,
    };
    io::copy(&mut reader, &mut hashing)?;
    Ok(Written {
        digest: format!("sha256:{}", hex(&hashing.hasher.finalize())),
        size: hashing.size,
    })
}

/// A writer that hashes (sha256) and counts what passes through it.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    size: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            size: 0,
        }
    }

    /// The inner writer and the `sha256:` digest and size of what was written.
    pub fn finish(self) -> (W, Written) {
        let written = Written {
            digest: format!("sha256:{}", hex(&self.hasher.finalize())),
            size: self.size,
        };
        (self.inner, written)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
