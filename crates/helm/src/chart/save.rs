//! Packaging a loaded chart as Helm's `chartutil.Save` does: a gzipped tar whose entries sit
//! under `<name>/`, with `Chart.yaml` written from the metadata, `values.yaml` as read (or as
//! replaced), the schema, templates, files, and subcharts as directories under `charts/`.

use std::io::Write;

use serde_json::{Map, Value as Json};

use super::{Chart, Dependency, Metadata};

/// The gzip header extra field and comment Helm writes on every package.
const HEADER_EXTRA: &[u8] = b"+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=";

/// Why a chart could not be packaged, in Helm's words.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("chart validation: {0}")]
    Validation(String),
    #[error("{0:?} is not a valid chart name")]
    InvalidName(String),
    #[error("Invalid JSON in values.schema.json")]
    InvalidSchema,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Packages `chart` as a `.tgz` (the bytes of `<name>-<version>.tgz`).
pub fn save(chart: &Chart) -> Result<Vec<u8>, SaveError> {
    let mut metadata = chart.metadata.clone();
    metadata.validate().map_err(SaveError::Validation)?;
    let gz = flate2::GzBuilder::new()
        .extra(HEADER_EXTRA)
        .comment("Helm")
        .write(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    write_chart(&mut tar, chart, "", mtime)?;
    let gz = tar.into_inner()?;
    let mut out = gz.finish()?;
    out.flush()?;
    Ok(out)
}

fn write_chart<W: Write>(
    tar: &mut tar::Builder<W>,
    chart: &Chart,
    prefix: &str,
    mtime: u64,
) -> Result<(), SaveError> {
    let name = chart.name();
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(SaveError::InvalidName(name.to_string()));
    }
    let base = format!("{prefix}{name}");
    let chart_yaml = tidegate_core::yaml::gov2::to_yaml(&chart.metadata.to_json());
    write_file(
        tar,
        &format!("{base}/Chart.yaml"),
        chart_yaml.as_bytes(),
        mtime,
    )?;
    if chart.metadata.api_version == "v2"
        && let Some(lock) = &chart.lock
    {
        write_file(tar, &format!("{base}/Chart.lock"), lock, mtime)?;
    }
    if let Some(values) = &chart.raw_values {
        write_file(tar, &format!("{base}/values.yaml"), values, mtime)?;
    }
    if let Some(schema) = &chart.schema {
        if serde_json::from_slice::<Json>(schema).is_err() {
            return Err(SaveError::InvalidSchema);
        }
        write_file(tar, &format!("{base}/values.schema.json"), schema, mtime)?;
    }
    for f in chart.templates.iter().chain(&chart.files) {
        write_file(tar, &format!("{base}/{}", f.name), &f.data, mtime)?;
    }
    for dep in &chart.dependencies {
        write_chart(tar, dep, &format!("{base}/charts/"), mtime)?;
    }
    Ok(())
}

fn write_file<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    data: &[u8],
    mtime: u64,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_mode(0o644);
    header.set_size(data.len() as u64);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, path, data)
}

impl Metadata {
    /// The metadata as Go's `encoding/json` writes `chart.Metadata` (empty fields left out;
    /// a v1 chart's dependencies live in `requirements.yaml`, not here).
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        let text = |m: &mut Map<String, Json>, k: &str, v: &str| {
            if !v.is_empty() {
                m.insert(k.into(), Json::String(v.into()));
            }
        };
        text(&mut m, "name", &self.name);
        text(&mut m, "home", &self.home);
        list(&mut m, "sources", self.sources.as_deref());
        text(&mut m, "version", &self.version);
        text(&mut m, "description", &self.description);
        list(&mut m, "keywords", self.keywords.as_deref());
        if let Some(ms) = self.maintainers.as_ref().filter(|m| !m.is_empty()) {
            let items = ms
                .iter()
                .map(|mt| {
                    let mut o = Map::new();
                    text(&mut o, "name", &mt.name);
                    text(&mut o, "email", &mt.email);
                    text(&mut o, "url", &mt.url);
                    Json::Object(o)
                })
                .collect();
            m.insert("maintainers".into(), Json::Array(items));
        }
        text(&mut m, "icon", &self.icon);
        text(&mut m, "apiVersion", &self.api_version);
        text(&mut m, "condition", &self.condition);
        text(&mut m, "tags", &self.tags);
        text(&mut m, "appVersion", &self.app_version);
        if self.deprecated {
            m.insert("deprecated".into(), Json::Bool(true));
        }
        if let Some(a) = self.annotations.as_ref().filter(|a| !a.is_empty()) {
            let o = a
                .iter()
                .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                .collect();
            m.insert("annotations".into(), Json::Object(o));
        }
        text(&mut m, "kubeVersion", &self.kube_version);
        if self.api_version != "v1"
            && let Some(deps) = self.dependencies.as_ref().filter(|d| !d.is_empty())
        {
            m.insert(
                "dependencies".into(),
                Json::Array(deps.iter().map(Dependency::to_json).collect()),
            );
        }
        text(&mut m, "type", &self.chart_type);
        Json::Object(m)
    }
}

fn list(m: &mut Map<String, Json>, key: &str, v: Option<&[String]>) {
    if let Some(v) = v.filter(|v| !v.is_empty()) {
        m.insert(
            key.into(),
            Json::Array(v.iter().map(|s| Json::String(s.clone())).collect()),
        );
    }
}

impl Dependency {
    /// The dependency as Go's `encoding/json` writes `chart.Dependency`.
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("name".into(), Json::String(self.name.clone()));
        if !self.version.is_empty() {
            m.insert("version".into(), Json::String(self.version.clone()));
        }
        m.insert("repository".into(), Json::String(self.repository.clone()));
        if !self.condition.is_empty() {
            m.insert("condition".into(), Json::String(self.condition.clone()));
        }
        list(&mut m, "tags", Some(&self.tags));
        if self.enabled {
            m.insert("enabled".into(), Json::Bool(true));
        }
        if !self.import_values.is_empty() {
            m.insert(
                "import-values".into(),
                Json::Array(self.import_values.clone()),
            );
        }
        if !self.alias.is_empty() {
            m.insert("alias".into(), Json::String(self.alias.clone()));
        }
        Json::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> super::super::File {
        super::super::File {
            name: name.into(),
            data: bytes::Bytes::copy_from_slice(text.as_bytes()),
        }
    }

    /// The archive's tar stream recompressed as two gzip members split at a block boundary
    /// in its middle, as parallel compressors (pigz, bgzip) write it.
    fn two_members(tgz: &[u8]) -> Vec<u8> {
        use std::io::{Read, Write};
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(tgz)
            .read_to_end(&mut tar)
            .unwrap();
        let at = tar.len() / 512 / 2 * 512;
        let mut out = Vec::new();
        for part in [&tar[..at], &tar[at..]] {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(part).unwrap();
            out.extend(gz.finish().unwrap());
        }
        out
    }

    #[test]
    fn multi_member_gzip_chart_archives_load_whole() {
        let mut files = vec![file(
            "Chart.yaml",
            "apiVersion: v2\nname: app\nversion: 1.0.0\n",
        )];
        for i in 0..8 {
            files.push(file(&format!("templates/t{i}.yaml"), &format!("n: {i}\n")));
        }
        let chart = super::super::load_files(files).unwrap();
        let split = two_members(&save(&chart).unwrap());
        let back = super::super::load_archive(&split).unwrap();
        let names: Vec<&str> = back.templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 8, "{names:?}");
        assert!(names.contains(&"templates/t7.yaml"), "{names:?}");
    }

    #[test]
    fn packages_load_back_the_same() {
        let files = vec![
            file(
                "Chart.yaml",
                "apiVersion: v2\nname: app\nversion: 1.2.3\ndescription: d\nmaintainers:\n- name: m\ndependencies:\n- name: sub\n  version: 0.1.0\n  repository: file://../sub\n",
            ),
            file("values.yaml", "# kept\nreplicas: 2\n"),
            file("templates/a.yaml", "kind: {{ .Values.replicas }}\n"),
            file("README.md", "hi"),
            file(
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            file("charts/sub/templates/b.yaml", "b: 1\n"),
        ];
        let mut chart = super::super::load_files(files).unwrap();
        chart.metadata.version = "1.2.3+abc".into();
        let tgz = save(&chart).unwrap();
        let back = super::super::load_archive(&tgz).unwrap();
        assert_eq!(back.metadata.version, "1.2.3+abc");
        assert_eq!(back.metadata.description, "d");
        assert_eq!(
            back.raw_values.as_deref(),
            Some(&b"# kept\nreplicas: 2\n"[..])
        );
        assert_eq!(back.templates.len(), 1);
        assert_eq!(back.files.len(), 1);
        assert_eq!(back.dependencies.len(), 1);
        assert_eq!(back.dependencies[0].templates[0].name, "templates/b.yaml");
        let deps = back.metadata.dependencies.unwrap();
        assert_eq!(deps[0].repository, "file://../sub");
        // Chart.yaml as sigs.k8s.io/yaml writes chart.Metadata: sorted keys, empty ones left out.
        let mut names = Vec::new();
        let mut gz = flate2::read::GzDecoder::new(&tgz[..]);
        assert_eq!(gz.header().and_then(|h| h.comment()), Some(&b"Helm"[..]));
        let mut chart_yaml = String::new();
        let mut archive = tar::Archive::new(&mut gz);
        for e in archive.entries().unwrap() {
            let mut e = e.unwrap();
            let p = e.path().unwrap().to_string_lossy().into_owned();
            if p == "app/Chart.yaml" {
                std::io::Read::read_to_string(&mut e, &mut chart_yaml).unwrap();
            }
            names.push(p);
        }
        assert_eq!(
            names,
            [
                "app/Chart.yaml",
                "app/values.yaml",
                "app/templates/a.yaml",
                "app/README.md",
                "app/charts/sub/Chart.yaml",
                "app/charts/sub/templates/b.yaml"
            ]
        );
        assert_eq!(
            chart_yaml,
            "apiVersion: v2\ndependencies:\n- name: sub\n  repository: file://../sub\n  version: 0.1.0\ndescription: d\nmaintainers:\n- name: m\nname: app\nversion: 1.2.3+abc\n"
        );
    }
}
