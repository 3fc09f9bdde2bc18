//! `tidegate stats`: per kind, how many reconcilers run, fail and are suspended, and the
//! artifact storage they use (`RECONCILERS RUNNING FAILING SUSPENDED STORAGE`).

use kube::api::ListParams;
use serde_json::Value;

use super::Global;
use super::kind::{
    GIT_REPOSITORY, HELM_CHART, HELM_RELEASE, HELM_REPOSITORY, KUSTOMIZATION, OCI_REPOSITORY,
    is_suspended, ready_condition,
};

/// Flags of `stats`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Count across all namespaces.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    #[command(flatten)]
    global: Global,
}

/// Bytes in binary units, one decimal (`2.3 KiB`).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Runs `stats`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let mut rows = vec![[
        "RECONCILERS".to_string(),
        "RUNNING".into(),
        "FAILING".into(),
        "SUSPENDED".into(),
        "STORAGE".into(),
    ]];
    for (kind, has_storage) in [
        (GIT_REPOSITORY, true),
        (OCI_REPOSITORY, true),
        (HELM_REPOSITORY, true),
        (HELM_CHART, true),
        (KUSTOMIZATION, false),
        (HELM_RELEASE, false),
    ] {
        let api = if a.all_namespaces {
            kube::Api::all_with(client.clone(), &kind.resource())
        } else {
            kind.api(&client, &a.global.namespace)
        };
        let items = api
            .list(&ListParams::default())
            .await
            .map_err(|e| super::api_error(&e))?
            .items;
        let suspended = |o: &kube::api::DynamicObject| is_suspended(&o.data);
        let failing = items
            .iter()
            .filter(|o| ready_condition(&o.data).is_some_and(|c| c["status"] == "False"))
            .count();
        let paused = items.iter().filter(|o| suspended(o)).count();
        let storage: u64 = items
            .iter()
            .filter_map(|o| {
                o.data
                    .pointer("/status/artifact/size")
                    .and_then(Value::as_u64)
            })
            .sum();
        rows.push([
            kind.kind.to_string(),
            (items.len() - paused).to_string(),
            failing.to_string(),
            paused.to_string(),
            if has_storage {
                human(storage)
            } else {
                "-".into()
            },
        ]);
    }
    let lines: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    print!("{}", super::format_table(&lines));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_sizes() {
        assert_eq!(super::human(0), "0 B");
        assert_eq!(super::human(1000), "1000 B");
        assert_eq!(super::human(2355), "2.3 KiB");
        assert_eq!(super::human(5 << 20), "5.0 MiB");
    }
}
