//! The Bucket controller against the embedded API server (through kube-rs) and a real S3
//! server on loopback (moto, with its IAM signature checks on), boto3 as the reference client:
//! Flux's revision over the listing, the root `.sourceignore` and `spec.ignore`, no download
//! while the listing is unchanged, a changed object makes a new artifact that a Kustomization
//! applies; wrong keys and a missing bucket fail with Flux's messages.

#[path = "../../source/tests/moto_support/mod.rs"]
mod moto_support;
mod source_support;

use moto_support::{Moto, moto};
use source_support::*;

fn bucket(name: &str, m: &Moto, bucket_name: &str, extra: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: Bucket\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 10m\n  bucketName: {bucket_name}\n  endpoint: {}\n  insecure: true\n  secretRef:\n    name: s3-keys\n{extra}",
        m.endpoint()
    )
}

fn keys_secret(access: &str, secret: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s3-keys\n  namespace: default\nstringData:\n  accesskey: {access}\n  secretkey: {secret}\n"
    )
}

/// Flux's revision computed in Python from what boto3 lists (the keys `keep` accepts).
fn python_revision(m: &Moto, bucket: &str, keep: &str) -> String {
    m.python(&format!(
        "keys = []\nfor page in s3.get_paginator('list_objects_v2').paginate(Bucket='{bucket}'):\n    for o in page.get('Contents', []):\n        keys.append((o['Key'], o['ETag'].strip('\"')))\nh = hashlib.sha256()\nfor k, e in sorted(keys):\n    if {keep}:\n        h.update(f'{{k}} {{e}}\\n'.encode())\nprint(json.dumps('sha256:' + h.hexdigest()))"
    ))
    .as_str()
    .unwrap()
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_becomes_an_artifact_only_when_its_listing_changes() {
    let m = moto(true).await;
    m.python(
        r#"
s3.create_bucket(Bucket='fleet')
s3.put_object(Bucket='fleet', Key='app/cm.yaml', Body=b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-bucket\n  namespace: default\ndata:\n  version: "1"\n')
s3.put_object(Bucket='fleet', Key='app/README.md', Body=b'# notes\n')
s3.put_object(Bucket='fleet', Key='app/logo.png', Body=b'\x89PNG')
s3.put_object(Bucket='fleet', Key='app/skip/me.yaml', Body=b'x: 1\n')
s3.put_object(Bucket='fleet', Key='empty/', Body=b'')
s3.put_object(Bucket='fleet', Key='.sourceignore', Body=b'# docs stay out\n*.md\n')
print('null')
"#,
    );
    let env = start().await;
    env.server
        .ok_stdin(&["apply", "-f", "-"], &keys_secret(&m.keys.0, &m.keys.1));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &bucket("fleet", &m, "fleet", "  ignore: app/skip/\n"),
    );
    // The root .sourceignore and spec.ignore apply; Flux's default exclusions do not (the
    // PNG stays); directory markers and the ignore file itself are not objects.
    let keep = "not k.endswith('/') and k != '.sourceignore' and not k.endswith('.md') and not k.startswith('app/skip/')";
    let rev1 = python_revision(&m, "fleet", keep);
    let o = wait_for(&env, "bucket/fleet", "Ready", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == rev1.as_str()
    })
    .await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "Succeeded");
    assert_eq!(c["message"], format!("stored artifact: revision '{rev1}'"));
    let a = &o["status"]["artifact"];
    let hex = rev1.trim_start_matches("sha256:");
    assert!(
        a["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("bucket/default/fleet/{hex}.tar.gz")),
        "{a}"
    );
    assert_eq!(o["status"]["observedIgnore"], "app/skip/");
    assert_eq!(
        artifact_files(a["url"].as_str().unwrap()).await,
        ["app/cm.yaml", "app/logo.png"]
    );
    assert!(
        o["status"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/bucket/default/fleet/latest.tar.gz"),
        "{o}"
    );
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.kind=Bucket,reason=NewArtifact",
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert!(
        events.contains("stored artifact with 2 fetched files from 'fleet' bucket"),
        "{events}"
    );

    // A Kustomization reads it.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: default\nspec:\n  interval: 10m\n  path: ./app\n  prune: true\n  sourceRef:\n    kind: Bucket\n    name: fleet\n",
    );
    let version = |env: &Env| {
        env.server.kubectl(&[
            "get",
            "configmap",
            "from-bucket",
            "-o",
            "jsonpath={.data.version}",
        ])
    };
    for _ in 0..100 {
        if String::from_utf8_lossy(&version(&env).stdout) == "1" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(String::from_utf8_lossy(&version(&env).stdout), "1");

    // An unchanged listing downloads nothing: only listings reach the server.
    m.start_recording();
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "bucket/fleet",
        "reconcile.fluxcd.io/requestedAt=again",
    ]);
    let o = wait_for(&env, "bucket/fleet", "the request handled", |o| {
        o["status"]["lastHandledReconcileAt"] == "again"
    })
    .await;
    assert_eq!(o["status"]["artifact"]["revision"], rev1.as_str());
    let requests = m.recorded();
    assert!(!requests.is_empty(), "the reconcile listed the bucket");
    for r in &requests {
        assert!(
            !r.contains("/fleet/app/"),
            "no object is downloaded while the listing is unchanged: {requests:?}"
        );
    }

    // A changed object: a new revision, a new artifact, applied.
    m.python("s3.put_object(Bucket='fleet', Key='app/cm.yaml', Body=b'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: from-bucket\\n  namespace: default\\ndata:\\n  version: \"2\"\\n')\nprint('null')");
    let rev2 = python_revision(&m, "fleet", keep);
    assert_ne!(rev1, rev2);
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "bucket/fleet",
        "reconcile.fluxcd.io/requestedAt=changed",
    ]);
    wait_for(&env, "bucket/fleet", "the new revision", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == rev2.as_str()
    })
    .await;
    for _ in 0..100 {
        if String::from_utf8_lossy(&version(&env).stdout) == "2" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(String::from_utf8_lossy(&version(&env).stdout), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_keys_and_a_missing_bucket_fail_with_flux_s_messages() {
    let m = moto(true).await;
    m.python("s3.create_bucket(Bucket='fleet')\nprint('null')");
    let env = start().await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &keys_secret(&m.keys.0, "wrong-secret"),
    );
    env.server
        .ok_stdin(&["apply", "-f", "-"], &bucket("wrong", &m, "fleet", ""));
    let o = wait_for(&env, "bucket/wrong", "failed", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "BucketOperationFailed");
    let message = c["message"].as_str().unwrap();
    assert!(
        message.starts_with("failed to confirm existence of 'fleet' bucket: ")
            && message.contains("SignatureDoesNotMatch"),
        "{message}"
    );
    assert_eq!(condition(&o, "FetchFailed").unwrap()["status"], "True");

    // The right keys, a bucket that does not exist.
    env.server
        .ok_stdin(&["apply", "-f", "-"], &keys_secret(&m.keys.0, &m.keys.1));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &bucket("missing", &m, "nope-nope", ""),
    );
    let o = wait_for(&env, "bucket/missing", "failed", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "BucketOperationFailed");
    assert_eq!(c["message"], "bucket 'nope-nope' not found");

    // A Secret without the keys Flux requires.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: partial\n  namespace: default\nstringData:\n  accesskey: only\n",
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &bucket("partial", &m, "fleet", "").replace("name: s3-keys", "name: partial"),
    );
    let o = wait_for(&env, "bucket/partial", "failed", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "AuthenticationFailed");
    assert_eq!(
        c["message"],
        "invalid 'partial' secret data: required fields 'accesskey' and 'secretkey'"
    );
    // A provider Tidegate does not speak stalls with a reason.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &bucket("gcs", &m, "fleet", "  provider: gcp\n")
            .replace("  secretRef:\n    name: s3-keys\n", ""),
    );
    let o = wait_for(&env, "bucket/gcs", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    assert!(
        condition(&o, "Ready").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("spec.provider 'gcp' is not supported"),
        "{o}"
    );
}

/// A HelmChart from a Bucket: the chart directory in the bucket's artifact is packaged; with
/// `reconcileStrategy: Revision` its version carries the first 12 hex digits of the bucket's
/// revision, and a changed object moves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helm_chart_is_packaged_from_a_bucket() {
    let m = moto(false).await;
    m.python(
        r#"
s3.create_bucket(Bucket='charts')
s3.put_object(Bucket='charts', Key='charts/app/Chart.yaml', Body=b'apiVersion: v2\nname: app\nversion: 0.3.0\n')
s3.put_object(Bucket='charts', Key='charts/app/values.yaml', Body=b'replicas: 1\n')
s3.put_object(Bucket='charts', Key='charts/app/templates/cm.yaml', Body=b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  replicas: {{ .Values.replicas | quote }}\n')
print('null')
"#,
    );
    let env = start().await;
    env.server
        .ok_stdin(&["apply", "-f", "-"], &keys_secret(&m.keys.0, &m.keys.1));
    env.server
        .ok_stdin(&["apply", "-f", "-"], &bucket("charts", &m, "charts", ""));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: app\n  namespace: default\nspec:\n  interval: 10m\n  chart: ./charts/app\n  reconcileStrategy: Revision\n  sourceRef:\n    kind: Bucket\n    name: charts\n",
    );
    let b = wait_for(&env, "bucket/charts", "Ready", ready).await;
    let rev = b["status"]["artifact"]["revision"]
        .as_str()
        .unwrap()
        .to_string();
    let hex = rev.trim_start_matches("sha256:");
    let want = format!("0.3.0+{}", &hex[..12]);
    let o = wait_for(&env, "helmchart/app", "Ready", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == want.as_str()
    })
    .await;
    assert_eq!(
        condition(&o, "Ready").unwrap()["message"],
        format!("packaged 'app' chart with version '{want}'")
    );
    assert_eq!(o["status"]["observedSourceArtifactRevision"], rev.as_str());

    m.python("s3.put_object(Bucket='charts', Key='charts/app/values.yaml', Body=b'replicas: 2\\n')\nprint('null')");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "bucket/charts",
        "reconcile.fluxcd.io/requestedAt=changed",
    ]);
    let b = wait_for(&env, "bucket/charts", "a new revision", |o| {
        ready(o) && o["status"]["artifact"]["revision"] != rev.as_str()
    })
    .await;
    let rev2 = b["status"]["artifact"]["revision"].as_str().unwrap();
    let want2 = format!("0.3.0+{}", &rev2.trim_start_matches("sha256:")[..12]);
    wait_for(&env, "helmchart/app", "the new version", |o| {
        ready(o) && o["status"]["artifact"]["revision"] == want2.as_str()
    })
    .await;
}
