//! `tidegate build kustomization NAME --path DIR [--kustomization-file F] [--dry-run]`: what the
//! controller would apply for a Kustomization, built from local files (no push needed): the
//! spec's overlay, post-build substitution (with `substituteFrom` read from the cluster unless
//! `--dry-run`), `commonMetadata` and the owner labels.

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::Value;
use tidegate_api::Kustomization;
use tidegate_controllers::kustomization::generate;
use tidegate_kustomize::{Builder, LoadRestrictions, Options};

use super::Global;

/// Flags of `build kustomization`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Kustomization's name.
    pub name: String,
    /// The local directory to build (what `spec.path` points at in the repository).
    #[arg(long)]
    path: PathBuf,
    /// A file holding the Kustomization (instead of reading it from the cluster).
    #[arg(long)]
    kustomization_file: Option<PathBuf>,
    /// Build without the cluster (needs --kustomization-file; `substituteFrom` is skipped).
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    pub global: Global,
}

/// The objects the controller would apply, in build order; `client` is the cluster to read
/// the Kustomization and `substituteFrom` from (none with `--dry-run`).
pub async fn objects(a: &Args, client: Option<&kube::Client>) -> anyhow::Result<Vec<Value>> {
    let ns = a.global.namespace.clone();
    let ks: Kustomization = match (&a.kustomization_file, client) {
        (Some(f), _) => {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let docs = tidegate_core::yaml::parse_stream(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            let doc = docs
                .into_iter()
                .find(|d| {
                    d["kind"] == "Kustomization"
                        && d["apiVersion"]
                            .as_str()
                            .is_some_and(|v| v.starts_with("kustomize.toolkit.fluxcd.io/"))
                        && d["metadata"]["name"] == a.name.as_str()
                })
                .ok_or_else(|| {
                    anyhow::anyhow!("{}: no Kustomization named '{}'", f.display(), a.name)
                })?;
            serde_json::from_value(doc).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?
        }
        (None, Some(c)) => {
            let api: kube::Api<Kustomization> = kube::Api::namespaced(c.clone(), &ns);
            api.get(&a.name)
                .await
                .map_err(|e| super::describe("Kustomization", &ns, &a.name, &e))?
        }
        (None, None) => anyhow::bail!("--dry-run needs --kustomization-file"),
    };
    let namespace = ks.metadata.namespace.clone().unwrap_or(ns);
    let dir = a
        .path
        .canonicalize()
        .with_context(|| format!("--path {}: no such directory", a.path.display()))?;
    let options = Options {
        load_restrictions: LoadRestrictions::None,
        generate_missing: true,
        overlay: Some(generate::overlay(&ks.spec)),
        filter: None,
    };
    // A local build trusts the local filesystem: the root is `/`.
    let built = Builder::new(std::path::Path::new("/"), options)
        .and_then(|b| b.build(&dir))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut objects: Vec<Value> = built
        .resources
        .into_iter()
        .map(|r| Value::Object(r.obj))
        .collect();
    let vars = generate::variables(client, &namespace, &ks.spec)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    generate::post_build(&mut objects, &ks.spec, &vars).map_err(|e| anyhow::anyhow!("{e}"))?;
    for o in &mut objects {
        tidegate_apply::normalize::set_owner_labels(
            o,
            tidegate_api::kustomization::GROUP,
            &a.name,
            &namespace,
        );
    }
    Ok(objects)
}

/// What SOPS-encrypted values are shown as (Flux's mask).
const MASK: &str = "**SOPS**";

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// Masks SOPS data in a Secret as `flux build` does: a Secret encrypted whole (a `sops` block
/// with a `mac: ENC[…]`) loses the block and shows `**SOPS**` for every value (a JSON
/// `{"mask":"**SOPS**"}` for docker config Secrets); otherwise each value that is itself SOPS
/// ciphertext is replaced by the base64 of the mask.
pub fn mask_sops(obj: &mut Value) {
    use base64::Engine;
    if obj.get("kind").and_then(Value::as_str) != Some("Secret") {
        return;
    }
    let text = tidegate_core::yaml::to_yaml(obj);
    let encoded_mask = base64_of(MASK);
    let sops_text = |t: &str| t.contains("sops") && t.contains("ENC[");
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    if text.contains("sops:") && text.contains("mac: ENC[") {
        map.remove("sops");
        let docker =
            map.get("type").and_then(Value::as_str) == Some("kubernetes.io/dockerconfigjson");
        let json_mask = serde_json::json!({ "mask": MASK }).to_string();
        for (field, encode) in [("data", true), ("stringData", false)] {
            if let Some(values) = map.get_mut(field).and_then(Value::as_object_mut) {
                for v in values.values_mut() {
                    *v = Value::String(match (docker, encode) {
                        (true, true) => base64_of(&json_mask),
                        (true, false) => json_mask.clone(),
                        (false, true) => encoded_mask.clone(),
                        (false, false) => MASK.to_string(),
                    });
                }
            }
        }
        return;
    }
    if let Some(values) = map.get_mut("data").and_then(Value::as_object_mut) {
        for v in values.values_mut() {
            let decoded = v
                .as_str()
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if sops_text(&decoded) {
                *v = Value::String(encoded_mask.clone());
            }
        }
    }
    if let Some(values) = map.get_mut("stringData").and_then(Value::as_object_mut) {
        for v in values.values_mut() {
            if v.as_str().is_some_and(sops_text) {
                *v = Value::String(encoded_mask.clone());
            }
        }
    }
}

/// Runs `build kustomization`: the YAML stream on stdout.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = if a.dry_run {
        None
    } else {
        Some(a.global.cluster.client().await?)
    };
    let mut objects = objects(&a, client.as_ref()).await?;
    objects.iter_mut().for_each(mask_sops);
    print!(
        "{}",
        tidegate_kustomize::yaml::to_stream(objects.iter().filter_map(Value::as_object))
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sops_values_are_masked_as_flux_does() {
        let mut whole = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s"},
            "data": {"token": "RU5DW0FFUzI1Nl9HQ00sZGF0YTp4XQ=="},
            "stringData": {"user": "ENC[AES256_GCM,data:y]"},
            "sops": {"mac": "ENC[AES256_GCM,data:z]", "version": "3.9.0"}});
        mask_sops(&mut whole);
        assert!(whole.get("sops").is_none());
        assert_eq!(whole["data"]["token"], "KipTT1BTKio=");
        assert_eq!(whole["stringData"]["user"], "**SOPS**");

        let mut docker = json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "d"}, "data": {".dockerconfigjson": "ENC[x]"},
            "sops": {"mac": "ENC[AES256_GCM,data:z]"}});
        mask_sops(&mut docker);
        assert_eq!(
            docker["data"][".dockerconfigjson"],
            base64_of(r#"{"mask":"**SOPS**"}"#)
        );

        // Without a sops block only values that are SOPS ciphertext are masked.
        let mut partial = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "p"},
            "data": {"plain": "aGVsbG8=", "enc": base64_of("sops ENC[AES256_GCM,data:q]")}});
        mask_sops(&mut partial);
        assert_eq!(partial["data"]["plain"], "aGVsbG8=");
        assert_eq!(partial["data"]["enc"], "KipTT1BTKio=");

        let mut cm = json!({"kind": "ConfigMap", "data": {"a": "ENC[sops]"}});
        mask_sops(&mut cm);
        assert_eq!(cm["data"]["a"], "ENC[sops]");
    }
}
