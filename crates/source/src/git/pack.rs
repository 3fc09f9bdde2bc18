//! A version 2 pack of whole objects (no deltas), as sent to receive-pack.

use std::io::Write;

use gix::ObjectId;
use sha1::Digest;

use super::GitError;

/// Packs `ids`, read from `repo`.
pub fn write(repo: &gix::Repository, ids: &[ObjectId]) -> Result<Vec<u8>, GitError> {
    let mut out = Vec::new();
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    let count = u32::try_from(ids.len())
        .map_err(|_| GitError::Operation("too many objects to pack".into()))?;
    out.extend_from_slice(&count.to_be_bytes());
    for id in ids {
        let object = repo
            .find_object(*id)
            .map_err(|e| GitError::Operation(format!("reading object {id}: {e}")))?;
        let kind: u8 = match object.kind {
            gix::object::Kind::Commit => 1,
            gix::object::Kind::Tree => 2,
            gix::object::Kind::Blob => 3,
            gix::object::Kind::Tag => 4,
        };
        header(&mut out, kind, object.data.len());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&object.data)
            .and_then(|_| z.finish())
            .map(|data| out.extend_from_slice(&data))
            .map_err(|e| GitError::Operation(format!("compressing object {id}: {e}")))?;
    }
    let digest = sha1::Sha1::digest(&out);
    out.extend_from_slice(&digest);
    Ok(out)
}

/// An entry header: type and size, seven bits at a time after the first four.
fn header(out: &mut Vec<u8>, kind: u8, size: usize) {
    let mut size = size;
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_encodes_type_and_size() {
        let mut out = Vec::new();
        super::header(&mut out, 3, 5);
        assert_eq!(out, [0x35]);
        out.clear();
        super::header(&mut out, 1, 300);
        // 300 = 0b1_0010_1100: low four bits 1100, then 0b10010.
        assert_eq!(out, [0x80 | 0x10 | 0x0c, 0x12]);
    }
}
