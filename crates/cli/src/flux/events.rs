//! `tidegate events [--for Kind[/name]] [-A] [--types Normal,Warning] [-w]`: the Events of
//! Flux objects, oldest first, as `flux events` shows them (`LAST SEEN TYPE REASON OBJECT
//! MESSAGE`, with `NAMESPACE` first across namespaces). `--for Kind/name` adds the events of
//! what the object refers to: a Kustomization's or HelmChart's source, a HelmRelease's chart
//! source and its HelmChart, an Alert's Provider, an ImagePolicy's ImageRepository.

use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;

use super::Global;

/// Flags of `events`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the events of this object or kind (`<kind>[/<name>]`), and of what it refers to.
    #[arg(long = "for")]
    for_object: Option<String>,
    /// Events of every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    /// Only events of these types (Normal, Warning).
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// Stream new events as they come.
    #[arg(short = 'w', long)]
    watch: bool,
    #[command(flatten)]
    global: Global,
}

/// How a Flux kind refers to another object (Flux's `refInfo`).
struct RefInfo {
    kind: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    /// The kind referred to, when the reference does not say.
    ref_kind: Option<&'static str>,
    /// Whether the reference may name another namespace.
    cross_namespace: bool,
    /// Where the reference is (empty: the kind refers to nothing).
    field: &'static [&'static str],
    /// A HelmRelease's HelmChart, `<namespace>-<name>` in the source's namespace.
    helm_chart: bool,
}

const fn plain(
    kind: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
) -> RefInfo {
    RefInfo {
        kind,
        group,
        version,
        plural,
        ref_kind: None,
        cross_namespace: false,
        field: &[],
        helm_chart: false,
    }
}

/// The kinds `events` knows (Flux's `fluxKindMap`).
const FLUX_KINDS: [RefInfo; 15] = [
    RefInfo {
        cross_namespace: true,
        field: &["spec", "sourceRef"],
        ..plain(
            "Kustomization",
            "kustomize.toolkit.fluxcd.io",
            "v1",
            "kustomizations",
        )
    },
    RefInfo {
        cross_namespace: true,
        field: &["spec", "chart", "spec", "sourceRef"],
        helm_chart: true,
        ..plain(
            "HelmRelease",
            "helm.toolkit.fluxcd.io",
            "v2",
            "helmreleases",
        )
    },
    RefInfo {
        ref_kind: Some("Provider"),
        field: &["spec", "providerRef"],
        ..plain(
            "Alert",
            "notification.toolkit.fluxcd.io",
            "v1beta3",
            "alerts",
        )
    },
    plain(
        "Receiver",
        "notification.toolkit.fluxcd.io",
        "v1",
        "receivers",
    ),
    plain(
        "Provider",
        "notification.toolkit.fluxcd.io",
        "v1beta3",
        "providers",
    ),
    RefInfo {
        ref_kind: Some("ImageRepository"),
        cross_namespace: true,
        field: &["spec", "imageRepositoryRef"],
        ..plain(
            "ImagePolicy",
            "image.toolkit.fluxcd.io",
            "v1",
            "imagepolicies",
        )
    },
    RefInfo {
        cross_namespace: true,
        field: &["spec", "sourceRef"],
        ..plain("HelmChart", "source.toolkit.fluxcd.io", "v1", "helmcharts")
    },
    plain(
        "GitRepository",
        "source.toolkit.fluxcd.io",
        "v1",
        "gitrepositories",
    ),
    plain(
        "OCIRepository",
        "source.toolkit.fluxcd.io",
        "v1",
        "ocirepositories",
    ),
    plain("Bucket", "source.toolkit.fluxcd.io", "v1", "buckets"),
    plain(
        "HelmRepository",
        "source.toolkit.fluxcd.io",
        "v1",
        "helmrepositories",
    ),
    plain(
        "ImageUpdateAutomation",
        "image.toolkit.fluxcd.io",
        "v1",
        "imageupdateautomations",
    ),
    plain(
        "ImageRepository",
        "image.toolkit.fluxcd.io",
        "v1",
        "imagerepositories",
    ),
    plain(
        "ArtifactGenerator",
        "source.extensions.fluxcd.io",
        "v1beta1",
        "artifactgenerators",
    ),
    // Not in Flux's map: Tidegate's Cluster API controller records events too.
    plain(
        "ClusterResourceSet",
        "addons.cluster.x-k8s.io",
        "v1beta2",
        "clusterresourcesets",
    ),
];

fn ref_info(kind: &str) -> Option<&'static RefInfo> {
    FLUX_KINDS
        .iter()
        .find(|r| r.kind.eq_ignore_ascii_case(kind))
}

/// The objects `name` of `info` refers to, as `(kind, name, namespace)` (Flux's
/// `getObjectRef`, with its errors for a reference that is not there).
async fn references(
    client: &kube::Client,
    info: &RefInfo,
    name: &str,
    namespace: &str,
) -> anyhow::Result<Vec<(String, String, String)>> {
    if info.field.is_empty() {
        return Ok(Vec::new());
    }
    let gvk = GroupVersionKind::gvk(info.group, info.version, info.kind);
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, info.plural),
    );
    let obj = api
        .get(name)
        .await
        .map_err(|e| super::describe(info.kind, namespace, name, &e))?;
    let at = |last: &str| {
        let mut v = &obj.data;
        for f in info.field.iter().copied().chain([last]) {
            v = v.get(f)?;
        }
        v.as_str().map(str::to_string)
    };
    let missing = |last: &str| {
        anyhow::anyhow!(
            "field '{}.{last}' for '{namespace}/{name}' not found",
            info.field.join(".")
        )
    };
    let kind = match info.ref_kind {
        Some(k) => k.to_string(),
        None => at("kind").ok_or_else(|| missing("kind"))?,
    };
    let ref_name = at("name").ok_or_else(|| missing("name"))?;
    let ref_namespace = match at("namespace") {
        Some(n) if info.cross_namespace => n,
        _ => namespace.to_string(),
    };
    let mut refs = vec![(kind, ref_name, ref_namespace.clone())];
    if info.helm_chart {
        refs.push((
            "HelmChart".into(),
            format!("{namespace}-{name}"),
            ref_namespace,
        ));
    }
    Ok(refs)
}

/// Flux's `--for` parsing: `kind/name`, or a bare kind.
fn kind_and_name(selector: &str) -> (String, String) {
    match selector.split_once('/') {
        Some((k, n)) => (k.to_string(), n.to_string()),
        None => (selector.to_string(), String::new()),
    }
}

fn field_selector(kind: &str, name: &str) -> String {
    if name.is_empty() {
        format!("involvedObject.kind={kind}")
    } else {
        format!("involvedObject.kind={kind},involvedObject.name={name}")
    }
}

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

/// The time an event sorts by (kubectl's): the series' last observation, else the last
/// timestamp, else the event time.
fn event_time(e: &Event) -> Option<k8s_openapi::jiff::Timestamp> {
    e.series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
        .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
}

/// Flux's `getLastSeen`: the age, with `(xN over AGE)` for repeated events.
fn last_seen(e: &Event, now: k8s_openapi::jiff::Timestamp) -> String {
    let since = |t: Option<k8s_openapi::jiff::Timestamp>| {
        t.map(|t| human_duration(now.duration_since(t).as_secs()))
            .unwrap_or_else(|| "<unknown>".into())
    };
    let first = match &e.event_time {
        Some(t) => since(Some(t.0)),
        None => since(e.first_timestamp.as_ref().map(|t| t.0)),
    };
    if let Some(series) = &e.series {
        format!(
            "{} (x{} over {first})",
            since(series.last_observed_time.as_ref().map(|t| t.0)),
            series.count.unwrap_or_default()
        )
    } else if e.count.unwrap_or_default() > 1 {
        format!(
            "{} (x{} over {first})",
            since(e.last_timestamp.as_ref().map(|t| t.0)),
            e.count.unwrap_or_default()
        )
    } else {
        first
    }
}

struct Query {
    namespace: Option<String>,
    fields: Option<String>,
}

impl Query {
    fn api(&self, client: &kube::Client) -> Api<Event> {
        match &self.namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }

    fn params(&self) -> ListParams {
        let p = ListParams::default().limit(500);
        match &self.fields {
            Some(f) => p.fields(f),
            None => p,
        }
    }
}

/// Flux's `ignoreEvent`: events of other kinds, or of other types than `--types`.
fn shown(e: &Event, types: &[String]) -> bool {
    ref_info(e.involved_object.kind.as_deref().unwrap_or("")).is_some()
        && (types.is_empty()
            || types
                .iter()
                .any(|t| t.eq_ignore_ascii_case(e.type_.as_deref().unwrap_or(""))))
}

fn row(e: &Event, show_namespace: bool, now: k8s_openapi::jiff::Timestamp) -> Vec<String> {
    let mut row = Vec::new();
    if show_namespace {
        row.push(e.metadata.namespace.clone().unwrap_or_default());
    }
    row.extend([
        last_seen(e, now),
        e.type_.clone().unwrap_or_default(),
        e.reason.clone().unwrap_or_default(),
        format!(
            "{}/{}",
            e.involved_object.kind.as_deref().unwrap_or(""),
            e.involved_object.name.as_deref().unwrap_or("")
        ),
        e.message.clone().unwrap_or_default(),
    ]);
    row
}

fn headers(show_namespace: bool) -> Vec<String> {
    let mut h: Vec<String> = Vec::new();
    if show_namespace {
        h.push("NAMESPACE".into());
    }
    h.extend(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"].map(String::from));
    h
}

/// Runs `events`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    for t in &a.types {
        if !t.eq_ignore_ascii_case("Normal") && !t.eq_ignore_ascii_case("Warning") {
            anyhow::bail!("type '{t}' not supported. Supported types are Normal, Warning");
        }
    }
    let client = a.global.cluster.client().await?;
    let namespace = a.global.namespace.clone();
    let scope = (!a.all_namespaces).then(|| namespace.clone());
    let mut queries = vec![Query {
        namespace: scope.clone(),
        fields: None,
    }];
    let mut other_namespace = false;
    if let Some(selector) = &a.for_object {
        let (kind, name) = kind_and_name(selector);
        if kind.is_empty() {
            anyhow::bail!("--for selector must be of format <kind>[/<name>]");
        }
        let info = ref_info(&kind)
            .ok_or_else(|| anyhow::anyhow!("'{kind}' is not a recognized Flux kind"))?;
        queries[0].fields = Some(field_selector(info.kind, &name));
        if !name.is_empty() {
            for (k, n, ns) in references(&client, info, &name, &namespace).await? {
                if Some(&ns) != scope.as_ref() {
                    other_namespace = true;
                }
                queries.push(Query {
                    namespace: Some(ns),
                    fields: Some(field_selector(&k, &n)),
                });
            }
        }
    }
    let show_namespace = a.all_namespaces || other_namespace;
    if a.watch {
        return watch(&client, &queries, &a.types, show_namespace).await;
    }
    let mut events: Vec<Event> = Vec::new();
    for q in &queries {
        let api = q.api(&client);
        let mut params = q.params();
        loop {
            let page = api
                .list(&params)
                .await
                .map_err(|e| anyhow::anyhow!("error getting events: {}", super::api_error(&e)))?;
            events.extend(page.items);
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => params = params.continue_token(&c),
                None => break,
            }
        }
    }
    events.sort_by_key(event_time);
    let now = k8s_openapi::jiff::Timestamp::now();
    let rows: Vec<Vec<String>> = events
        .iter()
        .filter(|e| shown(e, &a.types))
        .map(|e| row(e, show_namespace, now))
        .collect();
    if rows.is_empty() {
        if a.all_namespaces {
            super::failure("No events found.");
        } else {
            super::failure(&format!("No events found in {namespace} namespace."));
        }
        return Ok(());
    }
    let mut lines = vec![headers(show_namespace)];
    lines.extend(rows);
    print!("{}", super::format_table(&lines));
    Ok(())
}

/// `--watch`: every event added or changed from now on, the header once.
async fn watch(
    client: &kube::Client,
    queries: &[Query],
    types: &[String],
    show_namespace: bool,
) -> anyhow::Result<()> {
    use futures::StreamExt;
    use kube::runtime::watcher;
    let streams = queries.iter().map(|q| {
        let config = match &q.fields {
            Some(f) => watcher::Config::default().fields(f),
            None => watcher::Config::default(),
        };
        watcher::watcher(q.api(client), config).boxed()
    });
    let mut all = futures::stream::select_all(streams);
    let mut first = true;
    while let Some(ev) = all.next().await {
        let e = match ev {
            Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => e,
            Ok(_) => continue,
            Err(e) => anyhow::bail!("error watching events: {e}"),
        };
        if !shown(&e, types) {
            continue;
        }
        let now = k8s_openapi::jiff::Timestamp::now();
        let mut lines = Vec::new();
        if first {
            lines.push(headers(show_namespace));
            first = false;
        }
        lines.push(row(&e, show_namespace, now));
        print!("{}", super::format_table(&lines));
    }
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
