//! A chart build as Flux's chart builders describe it: the resolved name and version, the
//! package (or the cached artifact still being current), the values files merged in, and why
//! a build failed (Flux's `BuildError` reasons, and which of them stall).

use tidegate_helm::chart::Chart;

use crate::source::failure::{BUILD_FAILED, FETCH_FAILED, Failure};

/// Why a build failed: Flux's `BuildErrorReason` (reason and summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BuildReason {
    pub reason: &'static str,
    pub summary: &'static str,
}

pub(super) const CHART_REFERENCE: BuildReason = BuildReason {
    reason: "InvalidChartReference",
    summary: "invalid chart reference",
};
pub(super) const CHART_PULL: BuildReason = BuildReason {
    reason: "ChartPullError",
    summary: "chart pull error",
};
pub(super) const METADATA_PATCH: BuildReason = BuildReason {
    reason: "MetadataPatchError",
    summary: "chart metadata patch error",
};
pub(super) const VALUES_FILES_MERGE: BuildReason = BuildReason {
    reason: "ValuesFilesError",
    summary: "values files merge error",
};
pub(super) const DEPENDENCY_BUILD: BuildReason = BuildReason {
    reason: "DependencyBuildError",
    summary: "dependency build error",
};
pub(super) const CHART_VERIFICATION: BuildReason = BuildReason {
    reason: "ChartVerificationError",
    summary: "chart verification error",
};
pub(super) const CHART_PACKAGE: BuildReason = BuildReason {
    reason: "ChartPackageError",
    summary: "chart package error",
};

/// A failed build; shown as `<summary>: <message>`, as Flux's `BuildError` prints.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", .reason.summary)]
pub(super) struct BuildError {
    pub reason: BuildReason,
    pub message: String,
}

impl BuildError {
    pub fn new(reason: BuildReason, message: impl Into<String>) -> Self {
        BuildError {
            reason,
            message: message.into(),
        }
    }

    /// The condition Flux sets for it: `BuildFailed` for metadata, values, dependency and
    /// package errors, `FetchFailed` otherwise; reference, metadata and values errors need a
    /// spec change and stall.
    pub fn into_failure(self) -> Failure {
        let condition = if [
            METADATA_PATCH,
            VALUES_FILES_MERGE,
            DEPENDENCY_BUILD,
            CHART_PACKAGE,
        ]
        .contains(&self.reason)
        {
            BUILD_FAILED
        } else {
            FETCH_FAILED
        };
        let failure = Failure::new(condition, self.reason.reason, self.to_string());
        if [CHART_REFERENCE, METADATA_PATCH, VALUES_FILES_MERGE].contains(&self.reason) {
            failure.stall()
        } else {
            failure
        }
    }
}

/// How to build (Flux's `BuildOptions`).
#[derive(Default)]
pub(super) struct BuildOptions {
    /// Verify the chart's signature with these keys (`spec.verify`).
    pub verify: Option<Vec<tidegate_source::oci::cosign::PublicKey>>,
    /// SemVer build metadata to add to the version (`<revision>`, `<generation>`).
    pub version_metadata: String,
    /// `spec.valuesFiles`.
    pub values_files: Vec<String>,
    /// `spec.ignoreMissingValuesFiles`.
    pub ignore_missing_values_files: bool,
    /// The current artifact's chart name and version, when it is in storage.
    pub cached: Option<(String, String)>,
    /// `status.observedValuesFiles` of the current artifact.
    pub cached_values_files: Vec<String>,
    /// Build even when the cached chart matches (the generation changed).
    pub force: bool,
}

impl BuildOptions {
    /// The values files that change the chart: none when the only one is `values.yaml`.
    pub fn effective_values_files(&self) -> &[String] {
        match self.values_files.as_slice() {
            [only] if clean(only) == "values.yaml" => &[],
            files => files,
        }
    }

    /// Whether the chart must be (re)packaged rather than copied.
    pub fn requires_packaging(&self) -> bool {
        !self.effective_values_files().is_empty() || !self.version_metadata.is_empty()
    }

    /// The build when the cached chart already is `name`-`version` and nothing forces a
    /// rebuild.
    pub fn cached_build(&self, name: &str, version: &str, packaged: bool) -> Option<Build> {
        let (cached_name, cached_version) = self.cached.as_ref()?;
        if self.force || cached_name != name || cached_version != version {
            return None;
        }
        let values_files = if self.cached_values_files.is_empty() {
            self.effective_values_files().to_vec()
        } else {
            self.cached_values_files.clone()
        };
        Some(Build {
            name: name.to_string(),
            version: version.to_string(),
            verified: false,
            package: None,
            values_files,
            resolved_dependencies: 0,
            packaged,
        })
    }
}

/// A finished build.
#[derive(Debug)]
pub(super) struct Build {
    pub name: String,
    pub version: String,
    /// The packaged chart, or `None` when the artifact in storage is current.
    pub package: Option<Vec<u8>>,
    /// The values files merged into `values.yaml`.
    pub values_files: Vec<String>,
    /// Dependencies fetched or packaged into the chart.
    pub resolved_dependencies: usize,
    /// Whether the chart was packaged here rather than copied as pulled.
    pub packaged: bool,
    /// Whether its signature was verified.
    pub verified: bool,
}

impl Build {
    /// Flux's summary: `pulled 'podinfo' chart with version '6.5.0'`, `packaged … and merged
    /// values files [values.yaml values-prod.yaml]`.
    pub fn summary(&self) -> String {
        let action = if self.packaged { "packaged" } else { "pulled" };
        let mut s = format!(
            "{action} '{}' chart with version '{}'",
            self.name, self.version
        );
        if !self.values_files.is_empty() {
            s.push_str(&format!(
                " and merged values files [{}]",
                self.values_files.join(" ")
            ));
        }
        s
    }

    /// `ChartPackageSucceeded` or `ChartPullSucceeded`.
    pub fn reason(&self) -> &'static str {
        if self.packaged {
            "ChartPackageSucceeded"
        } else {
            "ChartPullSucceeded"
        }
    }
}

pub(super) use tidegate_helm::sprig::path_clean as clean;

/// `version` with SemVer build metadata `metadata`, as Masterminds' `SetMetadata` and
/// `String` give it.
pub(super) fn with_metadata(version: &str, metadata: &str) -> Result<String, BuildError> {
    let v = tidegate_core::semver::Version::parse(version).map_err(|e| {
        BuildError::new(
            METADATA_PATCH,
            format!("failed to parse version from chart metadata as SemVer: {e}"),
        )
    })?;
    let valid = !metadata.is_empty()
        && metadata.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if !valid {
        return Err(BuildError::new(
            METADATA_PATCH,
            "failed to set SemVer metadata on chart version: Invalid Metadata string",
        ));
    }
    Ok(tidegate_core::semver::Version::new(
        v.major(),
        v.minor(),
        v.patch(),
        v.prerelease(),
        metadata,
    )
    .to_string())
}

/// Replaces the chart's `values.yaml` with `merged` (Flux's `OverwriteChartDefaultValues`):
/// `Ok(true)` when it changed.
pub(super) fn overwrite_default_values(
    chart: &mut Chart,
    merged: serde_json::Map<String, serde_json::Value>,
) -> Result<bool, BuildError> {
    let encoded = if merged.is_empty() {
        Vec::new()
    } else {
        tidegate_core::yaml::gov2::to_yaml(&serde_json::Value::Object(merged.clone())).into_bytes()
    };
    let Some(raw) = &chart.raw_values else {
        return Err(BuildError::new(
            VALUES_FILES_MERGE,
            "failed to locate values file: values.yaml",
        ));
    };
    if raw[..] == encoded[..] {
        return Ok(false);
    }
    chart.raw_values = Some(encoded.into());
    chart.values = merged;
    Ok(true)
}

/// Reads one values file as Flux does (`sigs.k8s.io/yaml` into a map).
pub(super) fn read_values_file(
    path: &str,
    data: &[u8],
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let text = String::from_utf8_lossy(data);
    match tidegate_helm::chart::read_yaml(&text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(serde_json::Value::Null) => Ok(serde_json::Map::new()),
        Ok(other) => Err(format!(
            "unmarshaling values from '{path}' failed: error unmarshaling JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            tidegate_core::gojson::kind(&other)
        )),
        Err(e) => Err(format!("unmarshaling values from '{path}' failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_metadata_as_masterminds() {
        assert_eq!(with_metadata("1.2.3", "abc.4").unwrap(), "1.2.3+abc.4");
        assert_eq!(with_metadata("v1.2", "5").unwrap(), "1.2.0+5");
        assert_eq!(
            with_metadata("1.0.0-rc.1+old", "new").unwrap(),
            "1.0.0-rc.1+new"
        );
        let e = with_metadata("1.0.0", "a_b").unwrap_err();
        assert_eq!(e.reason, METADATA_PATCH);
        assert!(with_metadata("x", "1").is_err());
    }

    #[test]
    fn values_yaml_alone_changes_nothing() {
        let o = BuildOptions {
            values_files: vec!["./values.yaml".into()],
            ..Default::default()
        };
        assert!(o.effective_values_files().is_empty());
        assert!(!o.requires_packaging());
        assert_eq!(clean("a/../b/./c.yaml"), "b/c.yaml");
        assert_eq!(clean("../x"), "../x");
    }

    #[test]
    fn summaries_as_flux() {
        let b = Build {
            name: "podinfo".into(),
            version: "6.5.0+3".into(),
            package: None,
            values_files: vec!["values.yaml".into(), "values-prod.yaml".into()],
            resolved_dependencies: 0,
            packaged: true,
            verified: false,
        };
        assert_eq!(
            b.summary(),
            "packaged 'podinfo' chart with version '6.5.0+3' and merged values files [values.yaml values-prod.yaml]"
        );
        let e = BuildError::new(VALUES_FILES_MERGE, "x").into_failure();
        assert_eq!(e.condition, BUILD_FAILED);
        assert_eq!(e.message, "values files merge error: x");
    }
}
