//! Rendering a release as helm-controller does: the chart engine with the cluster's
//! capabilities and `lookup` answered by the cluster, then the post-renderers Flux always
//! runs (`commonMetadata`, then the origin labels `helm.toolkit.fluxcd.io/{name,namespace}`),
//! the documents written back as kustomize writes them.

use kube::Client;
use serde_json::{Map, Value};
use tidegate_api::helmrelease::CommonMetadata;
use tidegate_helm::chart::Chart;
use tidegate_helm::engine::{Capabilities, KubeVersion, Lookup, ReleaseOptions};
use tidegate_helm::storage::HookRecord;

/// What the cluster tells the chart (`.Capabilities`).
pub async fn capabilities(
    client: &Client,
    manager: &tidegate_apply::ResourceManager,
) -> Result<Capabilities, String> {
    let info = client
        .apiserver_version()
        .await
        .map_err(|e| format!("could not get server version from Kubernetes: {e}"))?;
    let version = KubeVersion::parse(&info.git_version)
        .map_err(|e| format!("could not parse server version '{}': {e}", info.git_version))?;
    let api_versions = manager
        .api_versions()
        .await
        .map_err(|e| format!("could not get apiVersions from Kubernetes: {e}"))?;
    let mut caps = Capabilities::client_only(Some(version), &[]);
    caps.api_versions = api_versions;
    Ok(caps)
}

/// `lookup` against the cluster, from the rendering thread.
struct ClusterLookup {
    client: Client,
    handle: tokio::runtime::Handle,
}

impl Lookup for ClusterLookup {
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        let client = self.client.clone();
        let (api_version, kind, namespace, name) = (
            api_version.to_string(),
            kind.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        self.handle.block_on(async move {
            let (group, version) = tidegate_core::object_ref::split_api_version(&api_version);
            let gvk = kube::core::GroupVersionKind::gvk(group, version, &kind);
            let (resource, caps) = match kube::discovery::pinned_kind(&client, &gvk).await {
                Ok(r) => r,
                // Helm answers an unknown kind with an empty map.
                Err(_) => return Ok(None),
            };
            let api: kube::Api<kube::core::DynamicObject> =
                if caps.scope == kube::discovery::Scope::Namespaced && !namespace.is_empty() {
                    kube::Api::namespaced_with(client, &namespace, &resource)
                } else {
                    kube::Api::all_with(client, &resource)
                };
            if name.is_empty() {
                let list = api
                    .list(&Default::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let items: Vec<Value> = list
                    .items
                    .into_iter()
                    .filter_map(|o| serde_json::to_value(o).ok())
                    .collect();
                return Ok(Some(serde_json::json!({
                    "apiVersion": "v1", "kind": "List", "items": items, "metadata": {}
                })));
            }
            match api.get_opt(&name).await {
                Ok(Some(o)) => Ok(serde_json::to_value(o).ok()),
                Ok(None) => Ok(None),
                Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        })
    }
}

/// A rendered release, post-rendered.
#[derive(Debug, Default)]
pub struct Rendered {
    /// The manifest as stored in the release (`---\n# Source: …` documents).
    pub manifest: String,
    /// The manifest's objects, in Helm's install order.
    pub objects: Vec<Value>,
    /// The hooks, post-rendered.
    pub hooks: Vec<HookRecord>,
    /// The chart's CRDs (`crds/`), as objects.
    pub crds: Vec<Value>,
    /// `NOTES.txt`.
    pub notes: String,
    /// What helm logs while rendering (coalescing notes, conditions that are not booleans),
    /// in slog's text form.
    pub log: Vec<String>,
}

/// What post-rendering adds to every object.
#[derive(Debug, Clone, Default)]
pub struct PostRender {
    /// `spec.postRenderers[].kustomize`, in order.
    pub kustomize: Vec<tidegate_api::helmrelease::KustomizePostRenderer>,
    pub common_metadata: Option<CommonMetadata>,
    /// The HelmRelease's name and namespace (origin labels).
    pub origin: (String, String),
}

impl PostRender {
    fn apply(&self, obj: &mut Map<String, Value>) {
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(meta) = meta.as_object_mut() else {
            return;
        };
        let mut set = |field: &str, entries: Vec<(String, String)>| {
            if entries.is_empty() {
                return;
            }
            let target = meta
                .entry(field)
                .or_insert_with(|| Value::Object(Map::new()));
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Some(m) = target.as_object_mut() {
                for (k, v) in entries {
                    m.insert(k, Value::String(v));
                }
            }
        };
        if let Some(cm) = &self.common_metadata {
            set(
                "labels",
                cm.labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
            set(
                "annotations",
                cm.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
        }
        set(
            "labels",
            vec![
                (
                    format!("{}/name", tidegate_api::helmrelease::GROUP),
                    self.origin.0.clone(),
                ),
                (
                    format!("{}/namespace", tidegate_api::helmrelease::GROUP),
                    self.origin.1.clone(),
                ),
            ],
        );
    }

    /// Post-renders one document: parsed as kustomize parses resources, labels set, written
    /// back as kustomize writes it. `None` for an empty document.
    fn document(&self, text: &str, source: &str) -> Result<Option<(String, Value)>, String> {
        let value = tidegate_kustomize::yaml::parse_one_as(
            text,
            source,
            tidegate_kustomize::yaml::Dialect::Objects,
        )
        .map_err(|e| format!("error while running post render on files: {e}"))?;
        let Value::Object(mut obj) = value else {
            return Ok(None);
        };
        if obj.is_empty() {
            return Ok(None);
        }
        self.apply(&mut obj);
        let text = tidegate_kustomize::yaml::to_stream([&obj]);
        let text = text.strip_prefix("---\n").unwrap_or(&text).to_string();
        Ok(Some((text, Value::Object(obj))))
    }
}

/// Renders `chart` for `release` on a blocking thread (the engine is single-threaded per
/// render), with `lookup` answered through `client`.
pub async fn render(
    chart: Chart,
    values: Map<String, Value>,
    release: ReleaseOptions,
    caps: Capabilities,
    client: Client,
    post: PostRender,
    skip_schema_validation: bool,
) -> Result<Rendered, String> {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut chart = chart;
        let user = match tidegate_helm::template::value::Value::from_json(&Value::Object(values)) {
            tidegate_helm::template::value::Value::Map(m, _) => m,
            _ => tidegate_helm::values::new_map(),
        };
        let lookup: std::rc::Rc<dyn Lookup> = std::rc::Rc::new(ClusterLookup { client, handle });
        let mut log = Vec::new();
        let rendered = tidegate_helm::action::render_release(
            &mut chart,
            &user,
            &release,
            &caps,
            Some(lookup),
            skip_schema_validation,
            &mut log,
        )
        .map_err(|e| e.message)?;
        let mut out = Rendered {
            notes: rendered.notes,
            log: log.iter().map(ToString::to_string).collect(),
            ..Default::default()
        };
        let (hooks, manifests) = if post.kustomize.is_empty() {
            (rendered.hooks, rendered.manifests)
        } else {
            kustomize_all(&post.kustomize, &rendered.hooks, &rendered.manifests)?
        };
        for m in &manifests {
            if let Some((text, obj)) = post.document(&m.content, &m.name)? {
                out.manifest
                    .push_str(&format!("---\n# Source: {}\n{}", m.name, text));
                out.objects.push(obj);
            }
        }
        for h in &hooks {
            let mut record = HookRecord::from_hook(h);
            if let Some((text, _)) = post.document(&h.manifest, &h.path)? {
                record.manifest = text.trim_end().to_string();
            }
            out.hooks.push(record);
        }
        for (path, data) in &rendered.crds {
            let text = String::from_utf8_lossy(data);
            for doc in tidegate_helm::release::split_manifests(&text) {
                let value = tidegate_kustomize::yaml::parse_one_as(
                    &doc,
                    path,
                    tidegate_kustomize::yaml::Dialect::Objects,
                )
                .map_err(|e| format!("failed to read CRD {path}: {e}"))?;
                if value.as_object().is_some_and(|o| !o.is_empty()) {
                    out.crds.push(value);
                }
            }
        }
        Ok(out)
    })
    .await
    .map_err(|e| format!("rendering stopped: {e}"))?
}

/// Helm 4's annotation carrying each document's file through a post-renderer.
const FILENAME_ANNOTATION: &str = "postrenderer.helm.sh/postrender-filename";

/// The `kustomize` post-renderers, as Helm 4's `combined` strategy runs a post-renderer: every
/// document (hooks too) annotated with its file, one stream through each kustomization in
/// order (`resources: [helm-output.yaml]` with the patches and images), split back into files
/// by the annotation (documents without it become `generated-by-postrender-<i>.yaml`), and
/// sorted into hooks and manifests again.
fn kustomize_all(
    renderers: &[tidegate_api::helmrelease::KustomizePostRenderer],
    hooks: &[tidegate_helm::release::Hook],
    manifests: &[tidegate_helm::release::Manifest],
) -> Result<
    (
        Vec<tidegate_helm::release::Hook>,
        Vec<tidegate_helm::release::Manifest>,
    ),
    String,
> {
    let fail = |e: String| format!("error while running post render on files: {e}");
    let mut docs: Vec<Map<String, Value>> = Vec::new();
    let files = manifests
        .iter()
        .map(|m| (m.name.as_str(), m.content.as_str()))
        .chain(hooks.iter().map(|h| (h.path.as_str(), h.manifest.as_str())));
    for (file, text) in files {
        let value = tidegate_kustomize::yaml::parse_one_as(
            text,
            file,
            tidegate_kustomize::yaml::Dialect::Objects,
        )
        .map_err(|e| fail(e.to_string()))?;
        let Value::Object(mut obj) = value else {
            continue;
        };
        if obj.is_empty() {
            continue;
        }
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(a) = annotations.as_object_mut() {
                a.insert(FILENAME_ANNOTATION.into(), Value::String(file.to_string()));
            }
        }
        docs.push(obj);
    }
    for r in renderers {
        let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
        std::fs::write(
            dir.path().join("helm-output.yaml"),
            tidegate_kustomize::yaml::to_stream(docs.iter()),
        )
        .map_err(|e| fail(e.to_string()))?;
        let mut k = serde_json::json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["helm-output.yaml"],
        });
        if !r.patches.is_empty() {
            k["patches"] = Value::Array(r.patches.clone());
        }
        if !r.images.is_empty() {
            k["images"] = Value::Array(r.images.clone());
        }
        std::fs::write(dir.path().join("kustomization.yaml"), k.to_string())
            .map_err(|e| fail(e.to_string()))?;
        let built = tidegate_kustomize::build(
            dir.path(),
            dir.path(),
            tidegate_kustomize::Options::default(),
        )
        .map_err(|e| fail(e.to_string()))?;
        docs = built.resources.iter().map(|r| r.obj.clone()).collect();
    }
    // Back into files, in the order the documents come.
    let mut files: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for (i, mut obj) in docs.into_iter().enumerate() {
        let file = obj
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|m| {
                let a = m.get_mut("annotations")?.as_object_mut()?;
                let f = a.remove(FILENAME_ANNOTATION)?;
                if a.is_empty() {
                    m.remove("annotations");
                }
                f.as_str().map(str::to_string)
            })
            .unwrap_or_else(|| format!("generated-by-postrender-{i}.yaml"));
        let text = tidegate_kustomize::yaml::to_stream([&obj]);
        let entry = files.entry(file).or_default();
        entry.push_str(&text);
    }
    tidegate_helm::release::sort_manifests(&files).map_err(fail)
}

/// Parses a stored manifest back into objects (for upgrades, rollbacks and uninstalls).
pub fn manifest_objects(manifest: &str) -> Vec<Value> {
    tidegate_helm::release::split_manifests(manifest)
        .iter()
        .filter_map(|doc| {
            tidegate_kustomize::yaml::parse_one_as(
                doc,
                "manifest",
                tidegate_kustomize::yaml::Dialect::Objects,
            )
            .ok()
        })
        .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
        .collect()
}
