//! `bucket-sync ENDPOINT BUCKET STATE_DIR`: one Bucket sync as the Bucket controller does it,
//! for the benchmark script — list, Flux's revision, and, only when the revision differs from
//! the one recorded in `STATE_DIR`, download every object (100 at once) and pack the artifact
//! (`STATE_DIR/artifact.tar.gz`). Keys come from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`;
//! plain HTTP. Prints the revision and what was done.

use std::process::ExitCode;

use tidegate_source::bucket::{BucketClient, BucketOptions, revision};
use tidegate_source::ignore::SourceIgnore;
use tidegate_source::tree::{FileTree, NoBlobs};

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [endpoint, bucket, state] = args.as_slice() else {
        eprintln!("usage: bucket-sync ENDPOINT BUCKET STATE_DIR");
        return ExitCode::from(2);
    };
    match sync(endpoint, bucket, std::path::Path::new(state)).await {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bucket-sync: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn sync(endpoint: &str, bucket: &str, state: &std::path::Path) -> Result<String, String> {
    let credentials = match (
        std::env::var("AWS_ACCESS_KEY_ID"),
        std::env::var("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Ok(a), Ok(s)) => Some((a, s)),
        _ => None,
    };
    let client = BucketClient::new(
        &BucketOptions {
            endpoint: endpoint.to_string(),
            insecure: true,
            bucket: bucket.to_string(),
            region: String::new(),
            credentials,
        },
        tidegate_source::tls::http_client(),
    )
    .map_err(|e| e.to_string())?;
    let index = client.list("").await.map_err(|e| e.to_string())?;
    let rev = revision(&index);
    std::fs::create_dir_all(state).map_err(|e| e.to_string())?;
    let recorded = state.join("revision");
    if std::fs::read_to_string(&recorded).ok().as_deref() == Some(rev.as_str()) {
        return Ok(format!("{rev} up to date ({} objects listed)", index.len()));
    }
    let work = tempfile::tempdir_in(state).map_err(|e| e.to_string())?;
    let fetched = client
        .fetch_all(&index, work.path(), 100, 100 << 20)
        .await
        .map_err(|(k, e)| format!("{k}: {e}"))?;
    let tree = FileTree::from_dir(work.path()).map_err(|e| e.to_string())?;
    let out = std::fs::File::create(state.join("artifact.tar.gz")).map_err(|e| e.to_string())?;
    tree.write_archive(&SourceIgnore::from_patterns(&[]), &NoBlobs, out)
        .map_err(|e| e.to_string())?;
    std::fs::write(&recorded, &rev).map_err(|e| e.to_string())?;
    Ok(format!("{rev} stored ({} objects fetched)", fetched.len()))
}
