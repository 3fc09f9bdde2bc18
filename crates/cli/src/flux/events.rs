//! `tidegate events [--for Kind/name] [-A]`: the Events of toolkit objects, oldest first, as
//! `flux events` shows them (`LAST SEEN TYPE REASON OBJECT MESSAGE`).

use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::ListParams;

use super::Global;

/// Flags of `events`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the events of this object (`Kind/name`).
    #[arg(long = "for")]
    for_object: Option<String>,
    /// Events of every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    #[command(flatten)]
    global: Global,
}

const TOOLKIT_KINDS: [&str; 6] = [
    "GitRepository",
    "OCIRepository",
    "HelmRepository",
    "HelmChart",
    "Kustomization",
    "HelmRelease",
];

/// A duration the way kubectl shows ages (`45s`, `3m12s`, `2h5m`, `3d`): apimachinery's
/// `HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < 0 {
        return "0s".into();
    }
    let (m, h, d) = (seconds / 60, seconds / 3600, seconds / 86400);
    if seconds < 120 {
        format!("{seconds}s")
    } else if m < 10 {
        match seconds % 60 {
            0 => format!("{m}m"),
            s => format!("{m}m{s}s"),
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        match m % 60 {
            0 => format!("{h}h"),
            mm => format!("{h}h{mm}m"),
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        match h % 24 {
            0 => format!("{d}d"),
            hh => format!("{d}d{hh}h"),
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        match d % 365 {
            0 => format!("{}y", d / 365),
            dd => format!("{}y{dd}d", d / 365),
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// Runs `events`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let api: Api<Event> = if a.all_namespaces {
        Api::all(client)
    } else {
        Api::namespaced(client, &a.global.namespace)
    };
    let wanted = match &a.for_object {
        Some(f) => Some(
            f.split_once('/')
                .map(|(k, n)| (k.to_string(), n.to_string()))
                .ok_or_else(|| anyhow::anyhow!("--for: expected Kind/name, got '{f}'"))?,
        ),
        None => None,
    };
    let mut events: Vec<Event> = api
        .list(&ListParams::default())
        .await
        .map_err(|e| super::api_error(&e))?
        .items
        .into_iter()
        .filter(|e| {
            let kind = e.involved_object.kind.as_deref().unwrap_or("");
            let name = e.involved_object.name.as_deref().unwrap_or("");
            match &wanted {
                Some((k, n)) => k.eq_ignore_ascii_case(kind) && n == name,
                None => TOOLKIT_KINDS.contains(&kind),
            }
        })
        .collect();
    let at = |e: &Event| {
        e.last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| e.event_time.as_ref().map(|t| t.0))
            .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
    };
    events.sort_by_key(|e| at(e));
    if events.is_empty() {
        eprintln!("no events found in {} namespace", a.global.namespace);
        return Ok(());
    }
    let now = k8s_openapi::jiff::Timestamp::now();
    let mut rows = vec![[
        "LAST SEEN".to_string(),
        "TYPE".into(),
        "REASON".into(),
        "OBJECT".into(),
        "MESSAGE".into(),
    ]];
    for e in &events {
        let seen = at(e)
            .map(|t| human_duration(now.duration_since(t).as_secs()))
            .unwrap_or_else(|| "<unknown>".into());
        rows.push([
            seen,
            e.type_.clone().unwrap_or_default(),
            e.reason.clone().unwrap_or_default(),
            format!(
                "{}/{}",
                e.involved_object.kind.as_deref().unwrap_or(""),
                e.involved_object.name.as_deref().unwrap_or("")
            ),
            e.message.clone().unwrap_or_default().replace('\n', ", "),
        ]);
    }
    let lines: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    print!("{}", super::format_table(&lines));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn ages_as_kubectl_prints_them() {
        for (s, want) in [
            (5, "5s"),
            (119, "119s"),
            (120, "2m"),
            (192, "3m12s"),
            (900, "15m"),
            (3 * 3600 + 300, "3h5m"),
            (10 * 3600, "10h"),
            (3 * 86400, "3d"),
            (3 * 86400 + 7200, "3d2h"),
            (30 * 86400, "30d"),
        ] {
            assert_eq!(human_duration(s), want, "{s}");
        }
    }
}
