//! The S3 client against a real S3 server on loopback (moto, from PyPI, installed by .ci/run):
//! objects uploaded by boto3 are listed with the ETags boto3 sees, over several pages; the
//! revision is the one Flux computes, checked against an independent computation in Python;
//! downloads, a missing object and a missing bucket.

use std::collections::BTreeMap;

use tidegate_source::bucket::{BucketClient, BucketOptions, revision};

#[path = "moto_support/mod.rs"]
mod moto_support;
use moto_support::moto;

fn client(port: u16, bucket: &str) -> BucketClient {
    BucketClient::new(
        &BucketOptions {
            endpoint: format!("127.0.0.1:{port}"),
            insecure: true,
            bucket: bucket.into(),
            region: String::new(),
            credentials: Some(("test".into(), "test".into())),
        },
        tidegate_source::tls::http_client(),
    )
    .unwrap()
}

#[tokio::test]
async fn listing_revision_and_downloads_match_a_real_s3_server() {
    let m = moto(false).await;
    // 1,205 objects (more than one page of 1,000), nested keys, a key with a space and a plus,
    // and a multipart-looking ETag is not needed: moto gives MD5 ETags for plain uploads.
    let expected = m.python(
        r#"
s3.create_bucket(Bucket='flux')
for i in range(1200):
    s3.put_object(Bucket='flux', Key=f'manifests/app-{i:04}.yaml', Body=f'n: {i}\n'.encode())
s3.put_object(Bucket='flux', Key='a b+c.yaml', Body=b'x: 1\n')
s3.put_object(Bucket='flux', Key='dir/sub/deep.yaml', Body=b'deep: true\n')
s3.put_object(Bucket='flux', Key='.sourceignore', Body=b'*.txt\n')
s3.put_object(Bucket='flux', Key='notes.txt', Body=b'ignored\n')
s3.put_object(Bucket='flux', Key='empty/', Body=b'')
pages = s3.get_paginator('list_objects_v2').paginate(Bucket='flux')
index = {o['Key']: o['ETag'].strip('"') for p in pages for o in p.get('Contents', [])}
lines = ''.join(f'{k} {index[k]}\n' for k in sorted(index))
print(json.dumps({'index': index, 'revision': 'sha256:' + hashlib.sha256(lines.encode()).hexdigest()}))
"#,
    );
    let c = client(m.port, "flux");
    assert!(c.exists().await.unwrap());
    let index = c.list("").await.unwrap();
    let want: BTreeMap<String, String> = serde_json::from_value(expected["index"].clone()).unwrap();
    assert_eq!(index.len(), 1205);
    assert_eq!(index, want);
    assert_eq!(revision(&index), expected["revision"].as_str().unwrap());

    // A prefix narrows the listing.
    let dir = c.list("dir/").await.unwrap();
    assert_eq!(dir.keys().collect::<Vec<_>>(), ["dir/sub/deep.yaml"]);

    // Downloads, a size limit, a missing key.
    assert_eq!(
        c.get("a b+c.yaml", 1024).await.unwrap().as_deref(),
        Some(&b"x: 1\n"[..])
    );
    assert!(c.get("dir/sub/deep.yaml", 4).await.is_err());
    assert_eq!(c.get("missing.yaml", 1024).await.unwrap(), None);

    // A changed object changes the revision; an unchanged listing keeps it.
    let before = revision(&index);
    assert_eq!(revision(&c.list("").await.unwrap()), before);
    m.python("s3.put_object(Bucket='flux', Key='a b+c.yaml', Body=b'x: 2\\n')\nprint('{}')");
    assert_ne!(revision(&c.list("").await.unwrap()), before);

    // A bucket that does not exist.
    let missing = client(m.port, "nope");
    assert!(!missing.exists().await.unwrap());
    let err = missing.list("").await.unwrap_err().to_string();
    assert!(err.contains("404") && err.contains("NoSuchBucket"), "{err}");
}
