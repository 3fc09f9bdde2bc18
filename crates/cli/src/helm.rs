//! `tidegate helm template [NAME] CHART`: renders a chart locally and prints what
//! `helm template` prints, with helm's flags; errors go to standard error as helm words them.

use std::path::PathBuf;

use tidegate_helm::action::{TemplateOptions, ValueOptions, template_logged};

/// `tidegate helm …`.
#[derive(clap::Subcommand)]
pub enum Helm {
    /// Render a chart's templates locally, as `helm template` does.
    Template(TemplateArgs),
}

/// The flags of `helm template`.
#[derive(clap::Args)]
pub struct TemplateArgs {
    /// `[NAME] CHART`: the release name (default `release-name`) and the chart directory or
    /// `.tgz`.
    #[arg(num_args = 1..=2, required = true)]
    args: Vec<String>,
    /// Values files (repeatable; commas separate several).
    #[arg(short = 'f', long = "values", value_delimiter = ',')]
    values: Vec<PathBuf>,
    /// `key=value` pairs (repeatable; commas separate several).
    #[arg(long = "set")]
    set: Vec<String>,
    /// As `--set`, values always strings.
    #[arg(long = "set-string")]
    set_string: Vec<String>,
    /// As `--set`, values read from the files named.
    #[arg(long = "set-file")]
    set_file: Vec<String>,
    /// As `--set`, values JSON.
    #[arg(long = "set-json")]
    set_json: Vec<String>,
    /// A literal `key=value`; the value is taken as it is.
    #[arg(long = "set-literal")]
    set_literal: Vec<String>,
    /// The release namespace.
    #[arg(short = 'n', long = "namespace", default_value = "default")]
    namespace: String,
    /// Kubernetes version for `.Capabilities.KubeVersion`.
    #[arg(long = "kube-version")]
    kube_version: Option<String>,
    /// Extra API versions for `.Capabilities.APIVersions`.
    #[arg(short = 'a', long = "api-versions", value_delimiter = ',')]
    api_versions: Vec<String>,
    /// Include the chart's CRDs in the output.
    #[arg(long = "include-crds")]
    include_crds: bool,
    /// Accepted for helm's sake; CRDs are printed only with `--include-crds`.
    #[arg(long = "skip-crds")]
    skip_crds: bool,
    /// Leave test hooks out.
    #[arg(long = "skip-tests")]
    skip_tests: bool,
    /// Leave hooks out.
    #[arg(long = "no-hooks")]
    no_hooks: bool,
    /// Only these templates' manifests (patterns, repeatable).
    #[arg(short = 's', long = "show-only")]
    show_only: Vec<String>,
    /// `.Release.IsUpgrade` instead of `.Release.IsInstall`.
    #[arg(long = "is-upgrade")]
    is_upgrade: bool,
    /// A Go template (with Sprig's functions) making the release name.
    #[arg(long = "name-template")]
    name_template: Option<String>,
    /// Write the manifests to files under this directory.
    #[arg(long = "output-dir")]
    output_dir: Option<PathBuf>,
    /// With `--output-dir`, put the files under a directory named after the release.
    #[arg(long = "release-name")]
    release_name_dir: bool,
    /// Do not check values against `values.schema.json`.
    #[arg(long = "skip-schema-validation")]
    skip_schema_validation: bool,
}

/// Renders `--name-template` as helm's `TemplateName` does.
fn name_from_template(text: &str) -> Result<String, String> {
    use std::rc::Rc;
    let mut set = tidegate_helm::template::Set::new("name-template", tidegate_helm::sprig::funcs());
    set.parse("name-template", text)?;
    Rc::new(set).execute(
        "name-template",
        tidegate_helm::template::Value::Invalid,
        None,
    )
}

/// Runs the command; `Err` carries helm's message (printed after `Error: `).
pub fn run(cmd: Helm) -> Result<(), String> {
    let Helm::Template(a) = cmd;
    let (name, chart) = match a.args.as_slice() {
        [chart] => {
            let name = match &a.name_template {
                Some(t) => name_from_template(t)?,
                None => "release-name".to_string(),
            };
            (name, chart.clone())
        }
        [_, _] if a.name_template.is_some() => {
            return Err("cannot set --name-template and also specify a name".into());
        }
        [name, chart] => (name.clone(), chart.clone()),
        _ => return Err("expected at most two arguments".into()),
    };
    let _ = a.skip_crds;
    let opts = TemplateOptions {
        release_name: name,
        namespace: a.namespace,
        values: ValueOptions {
            value_files: a.values,
            json_values: a.set_json,
            values: a.set,
            string_values: a.set_string,
            file_values: a.set_file,
            literal_values: a.set_literal,
        },
        kube_version: a.kube_version,
        api_versions: a.api_versions,
        include_crds: a.include_crds,
        skip_tests: a.skip_tests,
        no_hooks: a.no_hooks,
        show_only: a.show_only,
        is_upgrade: a.is_upgrade,
        output_dir: a.output_dir,
        use_release_name: a.release_name_dir,
        skip_schema_validation: a.skip_schema_validation,
    };
    let path = PathBuf::from(&chart);
    if !path.exists() {
        return Err(format!(
            "path {} not found",
            tidegate_helm::template::quote::quote(&chart)
        ));
    }
    // One render and the process ends: its memory goes back to the system with it.
    tidegate_helm::set_one_shot();
    let mut log = Vec::new();
    let out = template_logged(&path, &opts, &mut log);
    // What helm logs goes to standard error first, whether the render failed or not.
    for warning in &log {
        eprintln!("{warning}");
    }
    print!("{}", out.map_err(|e| e.to_string())?);
    Ok(())
}
