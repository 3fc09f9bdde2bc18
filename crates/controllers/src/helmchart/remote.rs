//! Charts from a chart repository (HTTP index or OCI registry): Flux's remote chart builder.
//! The package is stored as pulled unless values files or version metadata change it; then
//! it is loaded, its `values.yaml` replaced by the merged values, and packaged again.

use super::build::{
    Build, BuildError, BuildOptions, CHART_PACKAGE, CHART_PULL, CHART_REFERENCE,
    CHART_VERIFICATION, VALUES_FILES_MERGE, clean, overwrite_default_values, read_values_file,
    with_metadata,
};
use super::repository::{ChartRepository, GetError};

/// Flux's rule for remote chart names.
fn validate_name(name: &str) -> Result<(), BuildError> {
    if name.is_empty() {
        return Err(BuildError::new(
            CHART_REFERENCE,
            "no name set for remote chart reference",
        ));
    }
    static NAME: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"^([-a-z0-9]+/?\.?)+$").ok());
    if NAME.as_ref().is_some_and(|re| !re.is_match(name)) {
        return Err(BuildError::new(
            CHART_REFERENCE,
            format!(
                "invalid chart name '{name}': a valid name must be lower case letters and numbers and MAY be separated with dashes (-), slashes (/) or periods (.)"
            ),
        ));
    }
    Ok(())
}

/// Builds chart `name` at `version` (a version or constraint) from `repo`.
pub(super) async fn build(
    repo: &ChartRepository,
    name: &str,
    version: &str,
    opts: &BuildOptions,
) -> Result<Build, BuildError> {
    validate_name(name)?;
    let cv = repo.get_chart_version(name, version).await.map_err(|e| {
        let (reason, m) = match e {
            GetError::Reference(m) => (CHART_REFERENCE, m),
            GetError::External(m) | GetError::Auth(m) => (CHART_PULL, m),
        };
        BuildError::new(
            reason,
            format!("failed to get chart version for remote reference: {m}"),
        )
    })?;
    let mut verified = false;
    if let Some(keys) = &opts.verify {
        verified = repo
            .verify_chart(&cv, keys)
            .await
            .map_err(|e| BuildError::new(CHART_VERIFICATION, e))?;
    }
    let resolved = if opts.version_metadata.is_empty() {
        cv.version.clone()
    } else {
        with_metadata(&cv.version, &opts.version_metadata)?
    };
    let requires_packaging = opts.requires_packaging();
    if let Some(cached) = opts.cached_build(&cv.name, &resolved, requires_packaging) {
        return Ok(Build { verified, ..cached });
    }
    let data = repo.download_chart(&cv).await.map_err(|e| {
        BuildError::new(
            CHART_PULL,
            format!("failed to download chart for remote reference: {e}"),
        )
    })?;
    if !requires_packaging {
        // Stored as pulled, once it is known to be a chart.
        let mut chart = tidegate_helm::chart::load_archive(&data).map_err(|e| {
            BuildError::new(
                CHART_PULL,
                format!("failed to load chart metadata from written chart: {}", e.0),
            )
        })?;
        chart.metadata.validate().map_err(|e| {
            BuildError::new(
                CHART_PULL,
                format!("failed to validate metadata of written chart: {e}"),
            )
        })?;
        return Ok(Build {
            name: cv.name,
            version: resolved,
            package: Some(data),
            values_files: Vec::new(),
            resolved_dependencies: 0,
            packaged: false,
            verified,
        });
    }
    let mut chart = tidegate_helm::chart::load_archive(&data).map_err(|e| {
        BuildError::new(
            CHART_PACKAGE,
            format!("failed to load downloaded chart: {}", e.0),
        )
    })?;
    drop(data);
    chart.metadata.version = resolved.clone();
    let (merged, files) =
        merge_chart_values(&chart, &opts.values_files, opts.ignore_missing_values_files).map_err(
            |e| {
                BuildError::new(
                    VALUES_FILES_MERGE,
                    format!("failed to merge chart values: {e}"),
                )
            },
        )?;
    let mut values_files = Vec::new();
    if overwrite_default_values(&mut chart, merged)? {
        values_files = files;
    }
    let package = tidegate_helm::chart::save(&chart)
        .map_err(|e| BuildError::new(CHART_PACKAGE, format!("failed to package chart: {e}")))?;
    Ok(Build {
        name: cv.name,
        version: resolved,
        package: Some(package),
        values_files,
        resolved_dependencies: 0,
        packaged: true,
        verified,
    })
}

type Values = serde_json::Map<String, serde_json::Value>;

/// Flux's `mergeChartValues`: the files are paths inside the chart (`values.yaml` is the
/// chart's own values).
fn merge_chart_values(
    chart: &tidegate_helm::chart::Chart,
    paths: &[String],
    ignore_missing: bool,
) -> Result<(Values, Vec<String>), String> {
    let mut merged = Values::new();
    let mut used = Vec::new();
    for p in paths {
        let name = clean(p);
        if name == "values.yaml" {
            tidegate_helm::chart::merge_maps(&mut merged, chart.values.clone());
            used.push(p.clone());
            continue;
        }
        let Some(file) = chart.files.iter().find(|f| f.name == name) else {
            if ignore_missing {
                continue;
            }
            return Err(format!("no values file found at path '{p}'"));
        };
        let values = read_values_file(p, &file.data)?;
        tidegate_helm::chart::merge_maps(&mut merged, values);
        used.push(p.clone());
    }
    Ok((merged, used))
}

#[cfg(test)]
mod tests {
    #[test]
    fn chart_names_as_flux() {
        for ok in ["podinfo", "org/app", "a.b", "my-chart2"] {
            assert!(super::validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["Podinfo", "/x", "a b", ""] {
            assert!(super::validate_name(bad).is_err(), "{bad}");
        }
    }
}
