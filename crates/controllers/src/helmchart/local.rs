//! Charts from a source artifact (GitRepository, Bucket): Flux's local chart builder, its
//! values files read relative to the artifact root, and its dependency manager (local
//! `file://` charts and repository charts, through the namespace's HelmRepositories).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tidegate_core::semver::{Constraints, Version};
use tidegate_helm::chart::{Chart, Dependency};

use super::build::{
    Build, BuildError, BuildOptions, CHART_PACKAGE, CHART_PULL, CHART_REFERENCE, DEPENDENCY_BUILD,
    VALUES_FILES_MERGE, clean, overwrite_default_values, read_values_file, with_metadata,
};
use super::repository::{ChartRepository, normalize_url};
use crate::source::Context;

/// `path` (relative, possibly with `..`) joined under `root` without leaving it, as
/// `securejoin` clamps it.
pub(super) fn secure_join(root: &Path, path: &str) -> (PathBuf, String) {
    let rel = clean(&format!("/{path}"))
        .trim_start_matches('/')
        .to_string();
    (root.join(&rel), rel)
}

fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Builds the chart at `chart_path` of the artifact unpacked at `work_dir`.
pub(super) async fn build(
    work_dir: &Path,
    chart_path: &str,
    opts: &BuildOptions,
    deps: &mut DependencyManager<'_>,
) -> Result<Build, BuildError> {
    if chart_path.is_empty() {
        return Err(BuildError::new(
            CHART_REFERENCE,
            "no path set for local chart reference",
        ));
    }
    if chart_path.starts_with('/') {
        return Err(BuildError::new(
            CHART_REFERENCE,
            "local chart reference path is expected to be relative",
        ));
    }
    let (path, rel) = secure_join(work_dir, chart_path);
    let meta = std::fs::metadata(&path)
        .map_err(|e| BuildError::new(CHART_REFERENCE, format!("stat {rel}: {}", io_text(&e))))?;
    let is_dir = meta.is_dir();
    // The chart's name and version, checked as Helm checks Chart.yaml.
    let (name, version) = if is_dir {
        let chart_yaml = path.join("Chart.yaml");
        let data = std::fs::read(&chart_yaml).map_err(|e| {
            BuildError::new(
                CHART_REFERENCE,
                format!("open {rel}/Chart.yaml: {}", io_text(&e)),
            )
        })?;
        let files = vec![tidegate_helm::chart::File {
            name: "Chart.yaml".into(),
            data: data.into(),
        }];
        let chart = tidegate_helm::chart::load_files(files)
            .map_err(|e| BuildError::new(CHART_REFERENCE, format!("{rel}/Chart.yaml: {}", e.0)))?;
        (chart.metadata.name, chart.metadata.version)
    } else {
        let data = std::fs::read(&path).map_err(|e| {
            BuildError::new(CHART_REFERENCE, format!("open {rel}: {}", io_text(&e)))
        })?;
        let chart = tidegate_helm::chart::load_archive(&data)
            .map_err(|e| BuildError::new(CHART_REFERENCE, format!("{rel}: {}", e.0)))?;
        (chart.metadata.name, chart.metadata.version)
    };
    let version = if opts.version_metadata.is_empty() {
        version
    } else {
        with_metadata(&version, &opts.version_metadata)?
    };
    let requires_packaging = is_dir || opts.requires_packaging();
    if let Some(cached) = opts.cached_build(&name, &version, requires_packaging) {
        return Ok(cached);
    }
    if !requires_packaging {
        let package = std::fs::read(&path)
            .map_err(|e| BuildError::new(CHART_PULL, format!("open {rel}: {}", io_text(&e))))?;
        return Ok(Build {
            name,
            version,
            package: Some(package),
            values_files: Vec::new(),
            resolved_dependencies: 0,
            packaged: false,
            verified: false,
        });
    }

    let mut merged = None;
    if !opts.effective_values_files().is_empty() {
        merged = Some(merge_file_values(
            work_dir,
            &opts.values_files,
            opts.ignore_missing_values_files,
        )?);
    }
    let load_path = path.clone();
    let mut chart = tokio::task::spawn_blocking(move || tidegate_helm::chart::load(&load_path))
        .await
        .map_err(|e| BuildError::new(CHART_PACKAGE, e.to_string()))?
        .map_err(|e| BuildError::new(CHART_PACKAGE, e.0))?;
    chart.metadata.version = version.clone();
    let mut values_files = Vec::new();
    if let Some((values, files)) = merged
        && overwrite_default_values(&mut chart, values)?
    {
        values_files = files;
    }
    let mut resolved_dependencies = 0;
    if is_dir {
        resolved_dependencies = deps
            .build(work_dir, &rel, &mut chart)
            .await
            .map_err(|e| BuildError::new(DEPENDENCY_BUILD, e))?;
    }
    let package = tidegate_helm::chart::save(&chart)
        .map_err(|e| BuildError::new(CHART_PACKAGE, format!("failed to package chart: {e}")))?;
    Ok(Build {
        name,
        version,
        package: Some(package),
        values_files,
        resolved_dependencies,
        packaged: true,
        verified: false,
    })
}

type Values = serde_json::Map<String, serde_json::Value>;

/// Flux's `mergeFileValues`: each file relative to the artifact root, merged over the ones
/// before; a missing file is an error unless ignored.
fn merge_file_values(
    root: &Path,
    paths: &[String],
    ignore_missing: bool,
) -> Result<(Values, Vec<String>), BuildError> {
    let mut merged = Values::new();
    let mut used = Vec::new();
    for p in paths {
        let (full, rel) = secure_join(root, p);
        match std::fs::metadata(&full) {
            Err(e) if ignore_missing && e.kind() == std::io::ErrorKind::NotFound => continue,
            Ok(m) if m.is_file() => {}
            _ => {
                return Err(BuildError::new(
                    VALUES_FILES_MERGE,
                    format!("no values file found at path '/{rel}' (reference '{p}')"),
                ));
            }
        }
        let data = std::fs::read(&full).map_err(|e| {
            BuildError::new(
                VALUES_FILES_MERGE,
                format!("could not read values from file '{p}': {}", io_text(&e)),
            )
        })?;
        let values =
            read_values_file(p, &data).map_err(|e| BuildError::new(VALUES_FILES_MERGE, e))?;
        tidegate_helm::chart::merge_maps(&mut merged, values);
        used.push(p.clone());
    }
    Ok((merged, used))
}

/// Flux's `DependencyManager`: fetches the dependencies a chart declares but does not carry
/// in `charts/`, one repository per URL.
pub(super) struct DependencyManager<'a> {
    pub ctx: &'a Context,
    pub namespace: String,
    repositories: BTreeMap<String, ChartRepository>,
}

impl<'a> DependencyManager<'a> {
    pub fn new(ctx: &'a Context, namespace: String) -> Self {
        DependencyManager {
            ctx,
            namespace,
            repositories: BTreeMap::new(),
        }
    }

    /// Adds the missing dependencies to `chart` (at `chart_path` under `work_dir`); returns
    /// how many were added.
    pub async fn build(
        &mut self,
        work_dir: &Path,
        chart_path: &str,
        chart: &mut Chart,
    ) -> Result<usize, String> {
        let reqs = match chart.lock.as_deref().map(lock_dependencies) {
            Some(Ok(deps)) => deps,
            Some(Err(e)) => return Err(format!("failed to read Chart.lock: {e}")),
            None => chart.metadata.dependencies.clone().unwrap_or_default(),
        };
        if chart.dependencies.len() == reqs.len() {
            return Ok(0);
        }
        let mut missing: BTreeMap<String, Dependency> = BTreeMap::new();
        for dep in reqs {
            let name = if dep.alias.is_empty() {
                dep.name.clone()
            } else {
                dep.alias.clone()
            };
            if !chart.dependencies.iter().any(|c| c.name() == name) {
                missing.insert(name, dep);
            }
        }
        let count = missing.len();
        for (name, dep) in missing {
            let sub = if dep.repository.is_empty() || dep.repository.starts_with("file://") {
                local_dependency(work_dir, chart_path, &dep)
                    .map_err(|e| format!("failed to add local dependency '{name}': {e}"))?
            } else {
                self.remote_dependency(&dep)
                    .await
                    .map_err(|e| format!("failed to add remote dependency '{name}': {e}"))?
            };
            chart.dependencies.push(sub);
        }
        Ok(count)
    }

    async fn remote_dependency(&mut self, dep: &Dependency) -> Result<Chart, String> {
        let url = normalize_url(&dep.repository);
        if !(url.starts_with("oci://") || url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(if url.starts_with('@') {
                format!("aliased repository dependency is not supported: {url}")
            } else {
                format!("invalid dependency repository URL: {url}")
            });
        }
        if !self.repositories.contains_key(&url) {
            let repo = super::repository::for_dependency(&url, &self.namespace, self.ctx)
                .await
                .map_err(|e| format!("failed to get chart repository for URL '{url}': {e}"))?;
            self.repositories.insert(url.clone(), repo);
        }
        let Some(repo) = self.repositories.get(&url) else {
            return Err(format!("no chart repository for URL '{url}'"));
        };
        let cv = repo
            .get_chart_version(&dep.name, &dep.version)
            .await
            .map_err(|e| {
                let m = e.into_message();
                format!(
                    "failed to get chart '{}' version '{}' from '{}': {m}",
                    dep.name, dep.version, dep.repository
                )
            })?;
        let data = repo
            .download_chart(&cv)
            .await
            .map_err(|e| format!("chart download of version '{}' failed: {e}", cv.version))?;
        let mut sub = tidegate_helm::chart::load_archive(&data).map_err(|e| {
            format!(
                "failed to load downloaded archive of version '{}': {}",
                cv.version, e.0
            )
        })?;
        if !dep.alias.is_empty() {
            sub.metadata.name = dep.alias.clone();
        }
        Ok(sub)
    }
}

/// A `file://` (or repository-less) dependency, loaded from the artifact and checked against
/// its version constraint.
fn local_dependency(work_dir: &Path, chart_path: &str, dep: &Dependency) -> Result<Chart, String> {
    let rel = if dep.repository.is_empty() {
        format!("{chart_path}/charts/{}", dep.name)
    } else {
        let target = dep.repository.trim_start_matches("file://");
        format!("{chart_path}/{target}")
    };
    let (path, rel) = secure_join(work_dir, &rel);
    if !path.exists() {
        return Err(format!(
            "no chart found at '/{rel}' (reference '{}')",
            dep.repository
        ));
    }
    let constraint = Constraints::parse(&dep.version)
        .map_err(|e| format!("invalid version/constraint format '{}': {e}", dep.version))?;
    let mut sub = tidegate_helm::chart::load(&path).map_err(|e| {
        format!(
            "failed to load chart from '/{rel}' (reference '{}'): {}",
            dep.repository, e.0
        )
    })?;
    let version = Version::parse(&sub.metadata.version).map_err(|e| e.to_string())?;
    if !constraint.check(&version) {
        return Err(format!(
            "can't get a valid version for constraint '{}'",
            dep.version
        ));
    }
    if !dep.alias.is_empty() {
        sub.metadata.name = dep.alias.clone();
    }
    Ok(sub)
}

/// The dependencies pinned in `Chart.lock`.
fn lock_dependencies(lock: &[u8]) -> Result<Vec<Dependency>, String> {
    let v = tidegate_helm::chart::read_yaml(&String::from_utf8_lossy(lock))?;
    let mut meta = tidegate_helm::chart::Metadata::default();
    if let Some(deps) = v.get("dependencies") {
        let mut m = serde_json::Map::new();
        m.insert("dependencies".into(), deps.clone());
        meta.read_into(&serde_json::Value::Object(m))?;
    }
    Ok(meta.dependencies.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_stay_under_the_root() {
        let root = Path::new("/w");
        assert_eq!(secure_join(root, "charts/app").1, "charts/app");
        assert_eq!(secure_join(root, "../../etc/passwd").1, "etc/passwd");
        assert_eq!(secure_join(root, "a/../../b").1, "b");
    }

    #[test]
    fn values_files_merge_in_order_and_name_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "x: 1\nm: {a: 1}\n").unwrap();
        std::fs::write(dir.path().join("b.yaml"), "x: 2\nm: {b: 2}\n").unwrap();
        let (v, used) = merge_file_values(
            dir.path(),
            &["a.yaml".into(), "b.yaml".into(), "c.yaml".into()],
            true,
        )
        .unwrap();
        assert_eq!(used, ["a.yaml", "b.yaml"]);
        assert_eq!(
            serde_json::Value::Object(v),
            serde_json::json!({"x": 2, "m": {"a": 1, "b": 2}})
        );
        let e = merge_file_values(dir.path(), &["./c.yaml".into()], false).unwrap_err();
        assert_eq!(
            e.message,
            "no values file found at path '/c.yaml' (reference './c.yaml')"
        );
    }
}
