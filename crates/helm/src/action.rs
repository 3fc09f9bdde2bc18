//! `helm template`: a chart, values and options in; the text `helm template` prints out, or
//! the error it reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::chart::{self, Chart};
use crate::engine::{self, Capabilities, KubeVersion, ReleaseOptions, RenderOptions};
use crate::log::Warning;
use crate::release::{self, Hook, Manifest};
use crate::template::value::{MapKind, Value};
use crate::values::{self, Values, new_map, strvals};

/// Where values come from, in the order Helm applies them.
#[derive(Debug, Clone, Default)]
pub struct ValueOptions {
    /// `-f`: YAML files (merged in order).
    pub value_files: Vec<PathBuf>,
    /// `--set-json`.
    pub json_values: Vec<String>,
    /// `--set`.
    pub values: Vec<String>,
    /// `--set-string`.
    pub string_values: Vec<String>,
    /// `--set-file`.
    pub file_values: Vec<String>,
    /// `--set-literal`.
    pub literal_values: Vec<String>,
}

/// `helm template`'s options.
#[derive(Debug, Clone)]
pub struct TemplateOptions {
    pub release_name: String,
    pub namespace: String,
    pub values: ValueOptions,
    pub kube_version: Option<String>,
    pub api_versions: Vec<String>,
    pub include_crds: bool,
    pub skip_tests: bool,
    pub no_hooks: bool,
    pub show_only: Vec<String>,
    pub is_upgrade: bool,
    pub output_dir: Option<PathBuf>,
    /// `--release-name`: the release name as a directory under `output_dir`.
    pub use_release_name: bool,
    /// `--skip-schema-validation`.
    pub skip_schema_validation: bool,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        TemplateOptions {
            release_name: "release-name".into(),
            namespace: "default".into(),
            values: ValueOptions::default(),
            kube_version: None,
            api_versions: Vec::new(),
            include_crds: false,
            skip_tests: false,
            no_hooks: false,
            show_only: Vec::new(),
            is_upgrade: false,
            output_dir: None,
            use_release_name: false,
            skip_schema_validation: false,
        }
    }
}

/// A failed `helm template`: Helm's message, and whether Helm adds its `--debug` hint (it does
/// for errors found while rendering).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub message: String,
    pub rendering: bool,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.rendering {
            write!(
                f,
                "{}\n\nUse --debug flag to render out invalid YAML",
                self.message
            )
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for TemplateError {}

fn plain(message: impl Into<String>) -> TemplateError {
    TemplateError {
        message: message.into(),
        rendering: false,
    }
}

fn rendering(message: impl Into<String>) -> TemplateError {
    TemplateError {
        message: message.into(),
        rendering: true,
    }
}

fn read_file(path: &str) -> Result<Vec<u8>, String> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(|e| e.to_string())?;
        return Ok(buf);
    }
    std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("open {path}: no such file or directory"),
        _ => format!("open {path}: {e}"),
    })
}

/// Helm's `MergeValues` of the value options.
pub fn merge_values(opts: &ValueOptions) -> Result<Values, TemplateError> {
    let mut base = serde_json::Map::new();
    for path in &opts.value_files {
        let text = read_file(&path.to_string_lossy()).map_err(plain)?;
        let current = chart::load_values_text(&String::from_utf8_lossy(&text))
            .map_err(|e| plain(format!("failed to parse {}: {e}", path.display())))?;
        chart::merge_maps(&mut base, current);
    }
    let base = match Value::from_json(&serde_json::Value::Object(base)) {
        Value::Map(m, _) => m,
        _ => new_map(),
    };
    for value in &opts.json_values {
        let trimmed = value.trim();
        if trimmed.starts_with('{') {
            let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(trimmed)
                .map_err(|_| plain(format!("failed parsing --set-json data JSON: {value}")))?;
            if let Value::Map(m, _) = Value::from_json(&serde_json::Value::Object(parsed)) {
                merge_value_maps(&base, &m);
            }
        } else {
            strvals::parse_json(value, &base)
                .map_err(|_| plain(format!("failed parsing --set-json data {value}")))?;
        }
    }
    for value in &opts.values {
        strvals::parse_into(value, &base)
            .map_err(|e| plain(format!("failed parsing --set data: {e}")))?;
    }
    for value in &opts.string_values {
        strvals::parse_into_string(value, &base)
            .map_err(|e| plain(format!("failed parsing --set-string data: {e}")))?;
    }
    for value in &opts.file_values {
        let reader = |path: &str| -> Result<Value, String> {
            let data = read_file(path)?;
            Ok(Value::str(&String::from_utf8_lossy(&data)))
        };
        strvals::parse_into_file(value, &base, &reader)
            .map_err(|e| plain(format!("failed parsing --set-file data: {e}")))?;
    }
    for value in &opts.literal_values {
        strvals::parse_literal_into(value, &base)
            .map_err(|e| plain(format!("failed parsing --set-literal data: {e}")))?;
    }
    Ok(base)
}

/// Helm's `MergeMaps` on template values.
fn merge_value_maps(into: &Values, from: &Values) {
    let entries: Vec<(String, Value)> = from
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in entries {
        if let Value::Map(vm, MapKind::Any) = &v {
            let existing = into.borrow().get(&k).cloned();
            if let Some(Value::Map(em, MapKind::Any)) = existing {
                merge_value_maps(&em, vm);
                continue;
            }
        }
        into.borrow_mut().insert(k, v);
    }
}

/// Helm's `CheckDependencies`.
fn check_dependencies(chart: &Chart) -> Result<(), TemplateError> {
    let Some(reqs) = &chart.metadata.dependencies else {
        return Ok(());
    };
    let missing: Vec<&str> = reqs
        .iter()
        .filter(|r| !chart.dependencies.iter().any(|d| d.name() == r.name))
        .map(|r| r.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(plain(format!(
        "an error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
        missing.join(", ")
    )))
}

/// Release names Helm accepts: DNS-1123-ish, at most 53 characters.
fn validate_release_name(name: &str) -> Result<(), TemplateError> {
    let ok = !name.is_empty()
        && name.len() <= 53
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    if ok {
        return Ok(());
    }
    Err(plain(format!(
        "release name {}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53",
        crate::template::quote::quote(name)
    )))
}

/// What a render produced, before printing.
pub struct Rendered {
    pub manifests: Vec<Manifest>,
    pub hooks: Vec<Hook>,
    /// CRD files (`crds/`) with the path Helm prints for them, their bytes shared with the
    /// loaded chart (not copied: kube-prometheus-stack carries 5 MB of them).
    pub crds: Vec<(String, bytes::Bytes)>,
    pub notes: String,
}

/// Loads, checks and renders a chart as `helm template` does.
pub fn render_chart(chart_path: &Path, opts: &TemplateOptions) -> Result<Rendered, TemplateError> {
    render_chart_logged(chart_path, opts, &mut Vec::new())
}

/// [`render_chart`], with what helm logs on the way (its deprecation notice, values that do
/// not coalesce, conditions that are not booleans) added to `log` as it happens, the failure
/// or not.
pub fn render_chart_logged(
    chart_path: &Path,
    opts: &TemplateOptions,
    log: &mut Vec<Warning>,
) -> Result<Rendered, TemplateError> {
    let mut chart = chart::load(chart_path).map_err(|e| plain(e.0))?;
    if chart.is_library() {
        return Err(plain("library charts are not installable"));
    }
    if chart.metadata.deprecated {
        log.push(Warning::warn("this chart is deprecated", Vec::new()));
    }
    check_dependencies(&chart)?;
    let user = merge_values(&opts.values)?;
    let r = render_loaded(&mut chart, &user, opts, log);
    crate::parallel::dispose(chart);
    r
}

/// Renders an already loaded chart with the user's values.
pub fn render_loaded(
    chart: &mut Chart,
    user: &Values,
    opts: &TemplateOptions,
    log: &mut Vec<Warning>,
) -> Result<Rendered, TemplateError> {
    let kube_version = match &opts.kube_version {
        Some(v) => Some(
            KubeVersion::parse(v).map_err(|e| plain(format!("invalid kube version '{v}': {e}")))?,
        ),
        None => None,
    };
    let caps = Capabilities::client_only(kube_version, &opts.api_versions);
    let release = ReleaseOptions {
        name: opts.release_name.clone(),
        namespace: opts.namespace.clone(),
        revision: 1,
        is_upgrade: opts.is_upgrade,
        is_install: !opts.is_upgrade,
    };
    let mut rendered = render_release(
        chart,
        user,
        &release,
        &caps,
        None,
        opts.skip_schema_validation,
        log,
    )?;
    if !opts.include_crds {
        rendered.crds.clear();
    }
    Ok(rendered)
}

/// Renders a chart for a release as Helm's install and upgrade actions do: the cluster's
/// capabilities, the release's revision, `lookup` answered by `lookup`. CRD files are returned
/// with the render, for the caller's CRD policy. What helm would log is added to `warnings`.
pub fn render_release(
    chart: &mut Chart,
    user: &Values,
    release: &ReleaseOptions,
    caps: &Capabilities,
    lookup: Option<std::rc::Rc<dyn engine::Lookup>>,
    skip_schema_validation: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Rendered, TemplateError> {
    validate_release_name(&release.name)?;
    chart::process_dependencies(chart, user, warnings).map_err(plain)?;
    let coalesced = values::coalesce(chart, user, false, warnings).map_err(plain)?;
    if !skip_schema_validation {
        let json = Value::Map(coalesced.clone(), MapKind::Any)
            .to_json_value()
            .map_err(plain)?;
        values::schema::validate_chart(chart, &json).map_err(|e| {
            plain(format!(
                "values don't meet the specifications of the schema(s) in the following chart(s):\n{e}"
            ))
        })?;
    }
    let top = engine::render_values(chart, &coalesced, release, caps);
    if !chart.metadata.kube_version.is_empty()
        && !chart::is_compatible_range(&chart.metadata.kube_version, &caps.kube_version.normalized)
    {
        return Err(rendering(format!(
            "chart requires kubeVersion: {} which is incompatible with Kubernetes {}",
            chart.metadata.kube_version, caps.kube_version.version
        )));
    }
    let options = RenderOptions {
        strict: false,
        lookup,
    };
    let (files, ahead) = render_reading_ahead(chart, &top, &options);
    let mut files = files.map_err(rendering)?;
    let mut notes = String::new();
    let notes_names: Vec<String> = files
        .keys()
        .filter(|k| k.ends_with("NOTES.txt"))
        .cloned()
        .collect();
    for k in notes_names {
        if let Some(v) = files.remove(&k)
            && k == format!("{}/templates/NOTES.txt", chart.name())
        {
            if !notes.is_empty() {
                notes.push('\n');
            }
            notes.push_str(&v);
        }
    }
    let (hooks, manifests) = release::sort_manifests_with(&files, ahead).map_err(rendering)?;
    let crds = chart
        .crd_objects(chart.name())
        .into_iter()
        .map(|(path, f)| (path, f.data.clone()))
        .collect();
    Ok(Rendered {
        manifests,
        hooks,
        crds,
        notes,
    })
}

/// The bytes of a chart's templates, its dependencies' included.
fn template_bytes(chart: &Chart) -> usize {
    chart.templates.iter().map(|f| f.data.len()).sum::<usize>()
        + chart.dependencies.iter().map(template_bytes).sum::<usize>()
}

/// Renders `chart`; for a big chart on a machine with more than one core, a second thread
/// splits the rendered files into documents and reads their heads (the sort's work) while
/// the following templates execute on this one.
fn render_reading_ahead(
    chart: &Chart,
    top: &Values,
    options: &RenderOptions,
) -> (Result<BTreeMap<String, String>, String>, release::ReadAhead) {
    let cores = crate::parallel::cores();
    if cores < 2 || template_bytes(chart) < crate::parallel::PARALLEL_MIN_BYTES {
        return (engine::render(chart, top, options), Default::default());
    }
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<(String, String)>();
        let reader = s.spawn(move || release::read_ahead(rx));
        let files = engine::render_each(chart, top, options, &mut |name, out| {
            if !name.ends_with("NOTES.txt") {
                let _ = tx.send((name.to_string(), out.to_string()));
            }
        });
        drop(tx);
        (files, reader.join().unwrap_or_default())
    })
}

/// A written file of `--output-dir` and what `helm template` prints for it.
fn write_to_file(
    dir: &Path,
    name: &str,
    data: &str,
    append: bool,
    out: &mut String,
) -> Result<(), TemplateError> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| plain(e.to_string()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&path)
        .map_err(|e| plain(e.to_string()))?;
    std::io::Write::write_all(
        &mut file,
        format!("---\n# Source: {name}\n{data}\n").as_bytes(),
    )
    .map_err(|e| plain(e.to_string()))?;
    out.push_str(&format!("wrote {}\n", path.display()));
    Ok(())
}

/// `helm template CHART`: the text Helm prints to standard output.
pub fn template(chart_path: &Path, opts: &TemplateOptions) -> Result<String, TemplateError> {
    template_logged(chart_path, opts, &mut Vec::new())
}

/// [`template`], with what helm logs on standard error added to `log`.
pub fn template_logged(
    chart_path: &Path,
    opts: &TemplateOptions,
    log: &mut Vec<Warning>,
) -> Result<String, TemplateError> {
    let rendered = render_chart_logged(chart_path, opts, log)?;
    let r = print(&rendered, opts);
    crate::parallel::dispose(rendered);
    r
}

/// Prints a render as `helm template` does (or writes it under `--output-dir`).
pub fn print(rendered: &Rendered, opts: &TemplateOptions) -> Result<String, TemplateError> {
    let mut out = String::new();
    if let Some(dir) = &opts.output_dir {
        let dir = if opts.use_release_name {
            dir.join(&opts.release_name)
        } else {
            dir.clone()
        };
        let mut written: BTreeMap<String, bool> = BTreeMap::new();
        for (name, data) in &rendered.crds {
            let append = written.contains_key(name);
            write_to_file(&dir, name, &String::from_utf8_lossy(data), append, &mut out)?;
            written.insert(name.clone(), true);
        }
        for m in &rendered.manifests {
            let append = written.contains_key(&m.name);
            write_to_file(&dir, &m.name, &m.content, append, &mut out)?;
            written.insert(m.name.clone(), true);
        }
        if !opts.no_hooks {
            for h in &rendered.hooks {
                if opts.skip_tests && h.is_test() {
                    continue;
                }
                let append = written.contains_key(&h.path) || dir.join(&h.path).exists();
                write_to_file(&dir, &h.path, &h.manifest, append, &mut out)?;
                written.insert(h.path.clone(), true);
            }
        }
        // helm then prints the release's manifest, empty when written to files: a newline.
        if opts.show_only.is_empty() {
            out.push('\n');
            return Ok(out);
        }
        let f = opts.show_only[0].replace('\\', "/");
        return Err(plain(format!("could not find template {f} in chart")));
    }
    use std::fmt::Write as _;
    // Written in place, sized up front: kube-prometheus-stack prints 0.7 MB (5 MB with CRDs).
    let size = rendered
        .crds
        .iter()
        .map(|(n, d)| n.len() + d.len() + 16)
        .sum::<usize>()
        + rendered
            .manifests
            .iter()
            .map(|m| m.name.len() + m.content.len() + 16)
            .sum::<usize>()
        + rendered
            .hooks
            .iter()
            .map(|h| h.path.len() + h.manifest.len() + 16)
            .sum::<usize>();
    let mut body = String::with_capacity(size);
    for (name, data) in &rendered.crds {
        let data = String::from_utf8_lossy(data);
        let _ = write!(body, "---\n# Source: {name}\n{data}\n");
    }
    for m in &rendered.manifests {
        let _ = write!(body, "---\n# Source: {}\n{}\n", m.name, m.content);
    }
    // Helm trims the manifests' text and ends it with one newline before adding the hooks.
    let trimmed = body.trim_end().len();
    body.truncate(trimmed);
    let leading = body.len() - body.trim_start().len();
    body.drain(..leading);
    body.push('\n');
    let mut manifests = body;
    if !opts.no_hooks {
        for h in &rendered.hooks {
            if opts.skip_tests && h.is_test() {
                continue;
            }
            let _ = write!(manifests, "---\n# Source: {}\n{}\n", h.path, h.manifest);
        }
    }
    if opts.show_only.is_empty() {
        return Ok(manifests);
    }
    let docs = release::split_manifests(&manifests);
    let mut selected = Vec::new();
    for f in &opts.show_only {
        let f = f.replace('\\', "/");
        let mut missing = true;
        for doc in &docs {
            let Some(at) = doc.find("# Source: ") else {
                continue;
            };
            let source = doc[at + "# Source: ".len()..].lines().next().unwrap_or("");
            let Some((_, path)) = source.split_once('/') else {
                continue;
            };
            if !chart::go_match(&f, path).unwrap_or(false) {
                continue;
            }
            selected.push(doc.clone());
            missing = false;
        }
        if missing {
            return Err(plain(format!("could not find template {f} in chart")));
        }
    }
    for doc in selected {
        out.push_str(&format!("---\n{doc}\n"));
    }
    Ok(out)
}
