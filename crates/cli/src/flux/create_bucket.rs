//! `tidegate create source bucket NAME`: a Bucket from flags, with a `bucket-<name>` Secret
//! when `--access-key` and `--secret-key` are given (as `flux create source bucket`).

use serde_json::{Map, Value, json};

use super::Global;
use super::create::{create_with_secret, export_yaml, interval};
use super::kind::BUCKET;

/// Flags of `create source bucket`.
#[derive(clap::Args, Debug)]
pub struct BucketArgs {
    /// The Bucket's name.
    name: String,
    /// The bucket name.
    #[arg(long)]
    bucket_name: String,
    /// The bucket endpoint address (`host[:port]`).
    #[arg(long)]
    endpoint: String,
    /// The S3-compatible storage provider.
    #[arg(long, default_value = "generic", value_parser = ["generic", "aws", "gcp", "azure"])]
    provider: String,
    /// The bucket region.
    #[arg(long)]
    region: Option<String>,
    /// Plain HTTP to the endpoint.
    #[arg(long)]
    insecure: bool,
    /// The access key (stored in the `bucket-<name>` Secret).
    #[arg(long)]
    access_key: Option<String>,
    /// The secret key (stored in the `bucket-<name>` Secret).
    #[arg(long)]
    secret_key: Option<String>,
    /// The name of an existing Secret with `accesskey` and `secretkey`.
    #[arg(long)]
    secret_ref: Option<String>,
    /// The name of an existing Secret with the proxy `address` (and credentials).
    #[arg(long)]
    proxy_secret_ref: Option<String>,
    /// Paths to leave out (`.gitignore` syntax), comma-separated.
    #[arg(long, value_delimiter = ',')]
    ignore_paths: Vec<String>,
    /// Source sync interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Timeout of the bucket operations.
    #[arg(long)]
    fetch_timeout: Option<String>,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    export: bool,
    #[command(flatten)]
    global: Global,
}

/// The Bucket the flags describe (`secret_ref` overrides `--secret-ref`).
pub(super) fn bucket_object(a: &BucketArgs, secret_ref: Option<&str>) -> anyhow::Result<Value> {
    if a.bucket_name.is_empty() {
        anyhow::bail!("bucket-name is required");
    }
    if a.endpoint.is_empty() {
        anyhow::bail!("endpoint is required");
    }
    let mut spec = Map::new();
    spec.insert("bucketName".into(), json!(a.bucket_name));
    spec.insert("endpoint".into(), json!(a.endpoint));
    if !a.ignore_paths.is_empty() {
        spec.insert("ignore".into(), json!(a.ignore_paths.join("\n")));
    }
    if a.insecure {
        spec.insert("insecure".into(), json!(true));
    }
    spec.insert("interval".into(), json!(interval(&a.interval)?));
    spec.insert("provider".into(), json!(a.provider));
    if let Some(p) = &a.proxy_secret_ref {
        spec.insert("proxySecretRef".into(), json!({"name": p}));
    }
    if let Some(r) = a.region.as_deref().filter(|r| !r.is_empty()) {
        spec.insert("region".into(), json!(r));
    }
    if let Some(s) = secret_ref.or(a.secret_ref.as_deref()) {
        spec.insert("secretRef".into(), json!({"name": s}));
    }
    if let Some(t) = &a.fetch_timeout {
        spec.insert("timeout".into(), json!(interval(t)?));
    }
    Ok(json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "Bucket",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

/// Runs `create source bucket`.
pub async fn run(a: BucketArgs) -> anyhow::Result<()> {
    if a.export {
        print!("{}", export_yaml(&bucket_object(&a, None)?));
        return Ok(());
    }
    let secret_name = format!("bucket-{}", a.name);
    let secret = match (&a.secret_ref, &a.access_key, &a.secret_key) {
        (None, Some(access), Some(secret)) => Some(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret_name, "namespace": a.global.namespace},
            "stringData": {"accesskey": access, "secretkey": secret},
        })),
        _ => None,
    };
    let obj = bucket_object(&a, secret.as_ref().map(|_| secret_name.as_str()))?;
    create_with_secret(
        BUCKET,
        "Bucket source",
        obj,
        secret,
        &a.global,
        a.global.timeout,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BucketArgs,
    }

    #[test]
    fn flags_make_flux_s_bucket() {
        let cli = Cli::parse_from([
            "x",
            "podinfo",
            "--bucket-name=podinfo",
            "--endpoint=minio.minio.svc.cluster.local:9000",
            "--insecure",
            "--ignore-paths=*.md,docs/",
            "--interval=10m",
        ]);
        let obj = bucket_object(&cli.args, Some("bucket-podinfo")).unwrap();
        assert_eq!(
            export_yaml(&obj),
            "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: Bucket\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  bucketName: podinfo\n  endpoint: minio.minio.svc.cluster.local:9000\n  ignore: |-\n    *.md\n    docs/\n  insecure: true\n  interval: 10m0s\n  provider: generic\n  secretRef:\n    name: bucket-podinfo\n"
        );
    }
}
