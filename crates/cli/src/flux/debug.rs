//! `tidegate debug helmrelease NAME --show-status|--show-values`: a HelmRelease's status, or
//! the values it releases with (`valuesFrom` resolved and merged with `values`), as YAML with
//! sorted keys (as Flux's `sigs.k8s.io/yaml` writes them).

use kube::Api;
use tidegate_api::HelmRelease;

use super::Global;

/// What to debug.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// A HelmRelease.
    #[command(alias = "hr")]
    Helmrelease(Args),
}

/// Flags of `debug helmrelease`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The HelmRelease's name.
    name: String,
    /// Print the HelmRelease's status.
    #[arg(long)]
    show_status: bool,
    /// Print the values the release is made with.
    #[arg(long)]
    show_values: bool,
    #[command(flatten)]
    global: Global,
}

/// Runs `debug`.
pub async fn run(what: What) -> anyhow::Result<()> {
    let What::Helmrelease(a) = what;
    if a.show_status == a.show_values {
        anyhow::bail!("either --show-status or --show-values must be set");
    }
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), ns);
    let hr = api
        .get(&a.name)
        .await
        .map_err(|e| super::describe("HelmRelease", ns, &a.name, &e))?;
    if a.show_status {
        let status = serde_json::to_value(hr.status.unwrap_or_default())?;
        eprintln!(
            "# Status documentation: https://fluxcd.io/flux/components/helm/helmreleases/#helmrelease-status"
        );
        print!("{}", tidegate_core::yaml::gov2::to_yaml(&status));
        return Ok(());
    }
    let values = tidegate_controllers::helmrelease::values::compose(
        &client,
        ns,
        &hr.spec.values_from,
        hr.spec.values.as_ref(),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if !values.is_empty() {
        print!(
            "{}",
            tidegate_core::yaml::gov2::to_yaml(&serde_json::Value::Object(values))
        );
    } else {
        println!("{{}}");
    }
    Ok(())
}
