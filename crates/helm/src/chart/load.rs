//! Loading charts as Helm's loader does: a directory (walked in Go's order, `.helmignore`
//! applied), a gzipped tar (the top directory stripped, sizes bounded), or a list of files;
//! `charts/` entries become subcharts.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Chart, File, Metadata};

/// Largest chart Helm unpacks.
pub const MAX_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// Largest single file Helm unpacks.
pub const MAX_FILE_SIZE: u64 = 5 * 1024 * 1024;

const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Why a chart could not be loaded, in Helm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);

fn err(message: impl Into<String>) -> LoadError {
    LoadError(message.into())
}

/// The `apiVersion` of a `Chart.yaml`, as Helm's loader checks it first.
fn check_api_version(data: &[u8]) -> Result<(), LoadError> {
    let v = read_yaml(&String::from_utf8_lossy(data))
        .map_err(|e| err(format!("cannot load Chart.yaml: {e}")))?;
    match v.get("apiVersion") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(s)) if matches!(s.as_str(), "v1" | "v2" | "") => Ok(()),
        Some(serde_json::Value::String(_)) => Err(err("unsupported chart version")),
        Some(other) => Err(err(format!(
            "cannot load Chart.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field chartBase.apiVersion of type string",
            super::json_kind(other)
        ))),
    }
}

/// Loads a chart from a directory or a `.tgz` file.
pub fn load(path: &Path) -> Result<Chart, LoadError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| err(format!("stat {}: {}", path.display(), go_io_error(&e))))?;
    if meta.is_dir() {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let chart_yaml = abs.join("Chart.yaml");
        let data = std::fs::read(&chart_yaml).map_err(|e| {
            err(format!(
                "unable to detect chart at {}: open {}: {}",
                chart_yaml.display(),
                chart_yaml.display(),
                go_io_error(&e)
            ))
        })?;
        check_api_version(&data)?;
        return load_dir(path);
    }
    let data = std::fs::read(path)
        .map_err(|e| err(format!("open {}: {}", path.display(), go_io_error(&e))))?;
    if !data.starts_with(&[0x1f, 0x8b]) {
        if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            || data.starts_with(b"apiVersion")
        {
            return Err(err(format!(
                "file '{}' seems to be a YAML file, but expected a gzipped archive",
                path.display()
            )));
        }
        return Err(err(format!(
            "file '{}' does not appear to be a gzipped archive; got '{}'",
            path.display(),
            sniff(&data)
        )));
    }
    let files = archive_files(&data).map_err(|_| err("unable to load chart archive"))?;
    let Some(chart_yaml) = files.iter().find(|f| f.name == "Chart.yaml") else {
        return Err(err("unable to detect chart version, no Chart.yaml found"));
    };
    check_api_version(&chart_yaml.data)?;
    load_files(files)
}

/// Go's `http.DetectContentType` for the few types that matter here.
fn sniff(data: &[u8]) -> &'static str {
    if std::str::from_utf8(data).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    }
}

fn go_io_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Loads a chart directory: files walked as Go's `filepath.Walk` walks them (each
/// directory's entries by name), `.helmignore` and Helm's default rule applied.
pub fn load_dir(dir: &Path) -> Result<Chart, LoadError> {
    let mut rules = match std::fs::read(dir.join(".helmignore")) {
        Ok(text) => super::ignore::Rules::parse(&String::from_utf8_lossy(&text)).map_err(err)?,
        Err(_) => super::ignore::Rules::default(),
    };
    rules.add_defaults();
    let mut found = Vec::new();
    walk(dir, "", &rules, &mut found)?;
    // The files are read on several threads when there is much to read (kube-prometheus-stack
    // holds 7 MB in 340 files), and the charts' values.yaml files parsed as they are read.
    let read = crate::parallel::map_weighted(&found, Found::weight, read_found);
    let mut files = Vec::with_capacity(read.len());
    let mut parsed = ParsedValues::new();
    for r in read {
        let (file, values) = r?;
        if let Some(values) = values {
            parsed.insert(file.name.clone(), values);
        }
        files.push(file);
    }
    load_files_parsed(files, "", &mut parsed)
}

/// A values file read, or why it could not be.
type ValuesResult = Result<serde_json::Map<String, serde_json::Value>, String>;

/// Values files parsed while the chart was read, by path in the chart.
type ParsedValues = std::collections::HashMap<String, ValuesResult>;

/// A file [`walk`] found: its chart path, where it is and its size.
struct Found {
    path: String,
    full: PathBuf,
    size: u64,
}

impl Found {
    /// A chart's `values.yaml` (its subcharts' included): parsed as it is read.
    fn is_values(&self) -> bool {
        let mut rest = self.path.as_str();
        while let Some(sub) = rest.strip_prefix("charts/") {
            match sub.split_once('/') {
                Some((_, inner)) => rest = inner,
                None => return false,
            }
        }
        rest == "values.yaml"
    }

    /// The work of reading the file: parsing YAML costs some ten times reading it.
    fn weight(&self) -> usize {
        let size = self.size as usize;
        if self.is_values() { size * 10 } else { size }
    }
}

/// Files at least this large are mapped rather than read by a one-shot process: CRD files
/// (4 MB of kube-prometheus-stack's 7 MB) are then not touched unless printed.
const MAP_MIN_SIZE: u64 = 64 * 1024;

/// Reads a found file (and parses it when it is a values file).
fn read_found(f: &Found) -> Result<(File, Option<ValuesResult>), LoadError> {
    let failed = |e: std::io::Error| err(format!("error reading {}: {}", f.path, go_io_error(&e)));
    let data: bytes::Bytes = if f.size >= MAP_MIN_SIZE && crate::parallel::is_one_shot() {
        map_file(&f.full).map_err(failed)?
    } else {
        read_sized(&f.full, f.size).map_err(failed)?.into()
    };
    let data = if data.starts_with(BOM) {
        data.slice(3..)
    } else {
        data
    };
    let values = f.is_values().then(|| load_values(&super::text(&data)));
    Ok((
        File {
            name: f.path.clone(),
            data,
        },
        values,
    ))
}

/// The file's bytes, its size known from the walk: open, one read, close (a regular file's
/// read returns less than asked for only at its end; a file that grew is read on).
fn read_sized(path: &Path, size: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let mut data = vec![0; usize::try_from(size).unwrap_or(0).saturating_add(1)];
    let mut filled = 0;
    loop {
        let n = file.read(&mut data[filled..])?;
        filled += n;
        if n == 0 || filled < data.len() {
            break;
        }
        data.resize(data.len() * 2, 0);
    }
    data.truncate(filled);
    Ok(data)
}

/// The file's bytes mapped into memory, read-only. Only a one-shot process maps files (a
/// file truncated while mapped would fault the process when read).
fn map_file(path: &Path) -> std::io::Result<bytes::Bytes> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the mapping is read-only and private; the chart's files are not expected to
    // change while `helm template` reads them, and only one-shot processes map (see above).
    let map = unsafe { memmap2::Mmap::map(&file)? };
    Ok(bytes::Bytes::from_owner(map))
}

fn walk(
    root: &Path,
    rel: &str,
    rules: &super::ignore::Rules,
    out: &mut Vec<Found>,
) -> Result<(), LoadError> {
    let here = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut entries: Vec<(String, std::fs::DirEntry)> = std::fs::read_dir(&here)
        .map_err(|e| err(format!("open {}: {}", here.display(), go_io_error(&e))))?
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, entry) in entries {
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let full = entry.path();
        // Symbolic links are followed, as Helm's walk follows them; anything else is looked
        // up beside its directory entry.
        let meta = match entry.file_type() {
            Ok(t) if !t.is_symlink() => entry.metadata(),
            _ => std::fs::metadata(&full),
        }
        .map_err(|e| err(format!("stat {}: {}", full.display(), go_io_error(&e))))?;
        if meta.is_dir() {
            if rules.ignore(&path, true) {
                continue;
            }
            walk(root, &path, rules, out)?;
            continue;
        }
        if rules.ignore(&path, false) {
            continue;
        }
        if !meta.is_file() {
            return Err(err(format!(
                "cannot load irregular file {} as it has file mode type bits set",
                full.display()
            )));
        }
        if meta.len() > MAX_FILE_SIZE {
            return Err(err(format!(
                "chart file {} is larger than the maximum file size {MAX_FILE_SIZE}",
                crate::template::quote::quote(&name)
            )));
        }
        out.push(Found {
            path,
            full,
            size: meta.len(),
        });
    }
    Ok(())
}

/// Loads a gzipped tar chart archive.
pub fn load_archive(data: &[u8]) -> Result<Chart, LoadError> {
    let files =
        archive_files(data).map_err(|e| err(format!("unable to load chart archive: {}", e.0)))?;
    if !files.iter().any(|f| f.name == "Chart.yaml") {
        return Err(err("unable to detect chart version, no Chart.yaml found"));
    }
    load_files(files)
}

/// The files of a gzipped tar chart archive, the top directory stripped, sizes bounded.
fn archive_files(data: &[u8]) -> Result<Vec<File>, LoadError> {
    let gz = flate2::read::MultiGzDecoder::new(data);
    let mut tar = tar::Archive::new(gz);
    let mut files = Vec::new();
    let mut remaining = MAX_CHART_SIZE;
    let entries = tar.entries().map_err(|e| err(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| err(e.to_string()))?;
        let kind = entry.header().entry_type();
        if kind.is_dir()
            || matches!(
                kind,
                tar::EntryType::XGlobalHeader | tar::EntryType::XHeader
            )
        {
            continue;
        }
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let delimiter = if raw_name.contains('\\') { '\\' } else { '/' };
        let parts: Vec<&str> = raw_name.split(delimiter).collect();
        let name = parts[1..].join("/");
        if name.starts_with('/') {
            return Err(err("chart illegally contains absolute paths"));
        }
        let name = crate::sprig::path_clean(&name);
        if name == "." {
            return Err(err(format!(
                "chart illegally contains content outside the base directory: {}",
                crate::template::quote::quote(&raw_name)
            )));
        }
        if name.starts_with("..") {
            return Err(err("chart illegally references parent directory"));
        }
        if name.len() >= 2 && name.as_bytes()[1] == b':' && name.as_bytes()[0].is_ascii_alphabetic()
        {
            return Err(err("chart contains illegally named files"));
        }
        if parts[0] == "Chart.yaml" {
            return Err(err("chart yaml not in base directory"));
        }
        let size = entry.header().size().unwrap_or(0);
        if size > remaining {
            return Err(err(format!(
                "decompressed chart is larger than the maximum size {MAX_CHART_SIZE}"
            )));
        }
        if size > MAX_FILE_SIZE {
            return Err(err(format!(
                "decompressed chart file {} is larger than the maximum file size {MAX_FILE_SIZE}",
                crate::template::quote::quote(&raw_name)
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        (&mut entry)
            .take(remaining)
            .read_to_end(&mut data)
            .map_err(|e| err(e.to_string()))?;
        remaining -= data.len() as u64;
        if (data.len() as u64) < size || remaining == 0 {
            return Err(err(format!(
                "decompressed chart is larger than the maximum size {MAX_CHART_SIZE}"
            )));
        }
        if data.starts_with(BOM) {
            data.drain(..3);
        }
        files.push(File {
            name,
            data: data.into(),
        });
    }
    if files.is_empty() {
        return Err(err("no files in chart archive"));
    }
    Ok(files)
}

/// Reads YAML as Helm's `sigs.k8s.io/yaml` does (YAML 1.1 scalars, last key wins), every
/// document of the text.
pub fn read_yaml_documents(text: &str) -> Result<Vec<serde_json::Value>, String> {
    read_documents(text, usize::MAX)
}

/// The first `limit` documents of `text`; what follows them is not read (go-yaml's
/// `Unmarshal` reads one document and ignores the rest, errors included).
fn read_documents(text: &str, limit: usize) -> Result<Vec<serde_json::Value>, String> {
    let options = tidegate_core::yaml::ReadOptions {
        resolver: tidegate_core::yaml::Resolver::GoV2,
        json_keys: true,
        ..tidegate_core::yaml::ReadOptions::new(tidegate_core::yaml::Duplicates::LastWins)
    };
    tidegate_core::yaml::check_nesting(text)
        .map_err(|e| format!("error converting YAML to JSON: {e}"))?;
    let reader = tidegate_core::yaml::StreamReader::new(text, options);
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text).take(limit) {
        let (v, _) = reader.read(doc).map_err(|e| {
            format!(
                "error converting YAML to JSON: {}",
                go_yaml_error(&e.to_string(), text)
            )
        })?;
        out.push(v);
    }
    Ok(out)
}

/// The documents of a values file as Kubernetes' `YAMLReader` cuts them for Helm's
/// `LoadValues`: at every line starting with `---`, which may only be followed by spaces or a
/// comment; the separator line belongs to neither side, so line numbers in errors count from
/// the start of each document.
fn values_documents(text: &str) -> Result<Vec<&str>, String> {
    let mut docs = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(format!(
                    "error reading yaml document: invalid Yaml document separator: {rest}"
                ));
            }
            if let Some((a, b)) = current.take() {
                docs.push(&text[a..b]);
            }
            continue;
        }
        current = Some((current.map_or(start, |(a, _)| a), offset));
    }
    if let Some((a, b)) = current {
        docs.push(&text[a..b]);
    }
    Ok(docs)
}

/// A libyaml error as go-yaml v2 words it: `yaml: line N: problem`, N the problem's line
/// (one less for parser errors, as go-yaml counts them), no line at all for a problem on the
/// first line (go-yaml leaves out line 0). An unknown anchor is named, without a line, as
/// go-yaml's decoder reports it; `text` is the document read.
pub fn go_yaml_error(message: &str, text: &str) -> String {
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"^(.*?) at line (\d+) column (\d+)(?:, while (scanning|parsing) .*)?$")
            .ok()
    });
    let Some(c) = re.as_ref().and_then(|re| re.captures(message)) else {
        return format!("yaml: {message}");
    };
    let problem = &c[1];
    let line: usize = c[2].parse().unwrap_or(0);
    if problem == "unknown anchor" {
        let column: usize = c[3].parse().unwrap_or(1);
        let name: String = text
            .lines()
            .nth(line.saturating_sub(1))
            .and_then(|l| l.get(column.saturating_sub(1)..))
            .and_then(|rest| rest.strip_prefix('*'))
            .map(|rest| {
                rest.chars()
                    .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
                    .collect()
            })
            .unwrap_or_default();
        return format!("yaml: unknown anchor '{name}' referenced");
    }
    let parser = match c.get(4) {
        Some(kind) => kind.as_str() == "parsing",
        None => problem.starts_with("did not find expected") || problem.starts_with("expected"),
    };
    // libyaml counts lines from 1; go-yaml prints a scanner's mark plus one and a parser's
    // mark as it is, and nothing when the mark is on the first line.
    let line = if parser || line == 1 {
        line.saturating_sub(1)
    } else {
        line
    };
    if line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {line}: {problem}")
    }
}

/// Reads one YAML document (the first) as Helm does.
pub fn read_yaml(text: &str) -> Result<serde_json::Value, String> {
    Ok(read_documents(text, 1)?
        .into_iter()
        .next()
        .unwrap_or(serde_json::Value::Null))
}

/// Helm's `LoadValues`: every document of `values.yaml` merged over the one before.
pub fn load_values(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut values = serde_json::Map::new();
    for chunk in values_documents(text)? {
        let doc = read_yaml(chunk).map_err(|e| format!("cannot unmarshal yaml document: {e}"))?;
        match doc {
            serde_json::Value::Object(m) => merge_maps(&mut values, m),
            serde_json::Value::Null => {}
            other => {
                return Err(format!(
                    "cannot unmarshal yaml document: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    super::json_kind(&other)
                ));
            }
        }
    }
    Ok(values)
}

/// Helm's `MergeMaps`: tables merge, anything else replaces.
pub fn merge_maps(
    into: &mut serde_json::Map<String, serde_json::Value>,
    from: serde_json::Map<String, serde_json::Value>,
) {
    for (k, v) in from {
        if let serde_json::Value::Object(vm) = v {
            if let Some(serde_json::Value::Object(existing)) = into.get_mut(&k) {
                merge_maps(existing, vm);
                continue;
            }
            into.insert(k, serde_json::Value::Object(vm));
        } else {
            into.insert(k, v);
        }
    }
}

/// Builds a chart from its files (paths relative to the chart), as Helm's `LoadFiles`.
pub fn load_files(files: Vec<File>) -> Result<Chart, LoadError> {
    load_files_parsed(files, "", &mut ParsedValues::new())
}

/// [`load_files`] for the chart at `prefix` in the loaded tree, taking values files already
/// parsed from `parsed`.
fn load_files_parsed(
    files: Vec<File>,
    prefix: &str,
    parsed: &mut ParsedValues,
) -> Result<Chart, LoadError> {
    let mut chart = Chart::default();
    let mut has_metadata = false;
    for f in &files {
        if f.name == "Chart.yaml" {
            has_metadata = true;
            let v = read_yaml(&super::text(&f.data))
                .map_err(|e| err(format!("cannot load Chart.yaml: {e}")))?;
            chart.metadata.read_into(&v).map_err(|e| {
                err(format!(
                    "cannot load Chart.yaml: error unmarshaling JSON: while decoding JSON: {e}"
                ))
            })?;
            if chart.metadata.api_version.is_empty() {
                chart.metadata.api_version = "v1".into();
            }
        }
    }
    let mut subcharts: BTreeMap<String, Vec<File>> = BTreeMap::new();
    for f in files {
        match f.name.as_str() {
            "Chart.yaml" => {}
            "Chart.lock" | "requirements.lock" => {
                chart.lock = Some(f.data.clone());
                if f.name == "requirements.lock" && chart.metadata.api_version == "v1" {
                    chart.files.push(f);
                }
            }
            "values.yaml" => {
                let values = match parsed.remove(&format!("{prefix}values.yaml")) {
                    Some(values) => values,
                    None => load_values(&super::text(&f.data)),
                };
                chart.values = values.map_err(|e| err(format!("cannot load values.yaml: {e}")))?;
                chart.raw_values = Some(f.data);
            }
            "values.schema.json" => chart.schema = Some(f.data),
            "requirements.yaml" => {
                has_metadata = true;
                let v = read_yaml(&super::text(&f.data))
                    .map_err(|e| err(format!("cannot load requirements.yaml: {e}")))?;
                let mut deps_only = Metadata::default();
                deps_only
                    .read_into(&v)
                    .map_err(|e| err(format!("cannot load requirements.yaml: error unmarshaling JSON: while decoding JSON: {e}")))?;
                if deps_only.dependencies.is_some() {
                    chart.metadata.dependencies = deps_only.dependencies;
                }
                if chart.metadata.api_version == "v1" {
                    chart.files.push(f);
                }
            }
            name if name.starts_with("templates/") => chart.templates.push(f),
            name if name.starts_with("charts/") => {
                if name.ends_with(".prov") {
                    chart.files.push(f);
                    continue;
                }
                let rest = &name["charts/".len()..];
                let (sub, inner) = rest.split_once('/').unwrap_or((rest, ""));
                subcharts.entry(sub.to_string()).or_default().push(File {
                    name: if inner.is_empty() {
                        sub.to_string()
                    } else {
                        inner.to_string()
                    },
                    data: f.data,
                });
            }
            _ => chart.files.push(f),
        }
    }
    if !has_metadata {
        return Err(err("Chart.yaml file is missing"));
    }
    chart.metadata.validate().map_err(err)?;
    for (name, files) in subcharts {
        if name.starts_with(['_', '.']) {
            continue;
        }
        let sub = if name.ends_with(".tgz") {
            let file = &files[0];
            if file.name != name {
                return Err(err(format!(
                    "error unpacking subchart tar in {}: expected {name}, got {}",
                    chart.name(),
                    file.name
                )));
            }
            load_archive(&file.data)
        } else {
            let inner: Vec<File> = files.into_iter().filter(|f| f.name != name).collect();
            load_files_parsed(inner, &format!("{prefix}charts/{name}/"), parsed)
        };
        let sub = sub.map_err(|e| {
            err(format!(
                "error unpacking subchart {name} in {}: {}",
                chart.name(),
                e.0
            ))
        })?;
        chart.dependencies.push(sub);
    }
    Ok(chart)
}
