//! The flux-style verbs (`get`, `reconcile`, `suspend`, `resume`, `version`): Flux's names,
//! flags and output (`►` progress, `✔` success, `✗` failure, `◎` waiting, on stderr; tables
//! on stdout).

pub mod artifact;
pub mod build;
pub mod check;
pub mod clusterresourceset;
pub mod create;
pub mod create_bucket;
pub mod create_helmrelease;
pub mod create_image;
pub mod create_notification;
pub mod debug;
pub mod delete;
pub mod diff;
pub mod events;
pub mod export;
pub mod get;
pub mod kind;
pub mod reconcile;
pub mod secret;
pub mod secret_registry;
pub mod stats;
pub mod suspend;
pub mod trace;
pub mod tree;
pub mod uninstall;
pub mod version;

use std::time::Duration;

use crate::cluster::ClusterArgs;

/// Flags every flux-style verb takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The namespace scope of the operation.
    #[arg(short = 'n', long, default_value = "flux-system", value_parser = namespace_name)]
    pub namespace: String,
    /// How long to wait for the operation.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    pub timeout: Duration,
}

/// A `--namespace` value, refused with kube's message when it cannot name a namespace (it
/// would otherwise reach the server as a malformed URL).
pub fn namespace_name(value: &str) -> Result<String, String> {
    tidegate_core::labels::validate_namespace_name(value)?;
    Ok(value.to_string())
}

/// Whether stderr is a terminal (and `NO_COLOR` is unset): only then are symbols coloured.
fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `symbol message`, the symbol in `ansi` colour on a terminal.
fn line(symbol: &str, ansi: &str, message: &str) {
    if colour() {
        eprintln!("\x1b[{ansi}m{symbol}\x1b[0m {message}");
    } else {
        eprintln!("{symbol} {message}");
    }
}

/// `► message` (an action starts).
pub fn action(message: &str) {
    line("►", "34", message);
}

/// `✚ message` (something was generated).
pub fn generate(message: &str) {
    line("✚", "36", message);
}

/// `✔ message`.
pub fn success(message: &str) {
    line("✔", "32", message);
}

/// `◎ message` (waiting).
pub fn waiting(message: &str) {
    line("◎", "33", message);
}

/// An error and its causes on one line, each cause once: a context that already quotes its
/// cause's text is not followed by that text again.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// `✗ message` (the failure that ends a verb).
pub fn failure(message: &str) {
    line("✗", "31", message);
}

/// A spinner on stderr while waiting, only on a terminal (hidden otherwise); cleared when
/// dropped.
pub struct Spinner(indicatif::ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Starts a [`Spinner`] showing `message`.
pub fn spinner(message: &str) -> Spinner {
    let bar = indicatif::ProgressBar::new_spinner();
    if !colour() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    Spinner(bar)
}

/// The kinds the verbs act on.
#[derive(clap::Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// GitRepository sources.
    Git,
}

/// The current time in RFC 3339, the value `flux reconcile` writes to `requestedAt`.
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

/// Maps a kube error to one clear line, naming the object.
pub fn describe(kind: &str, namespace: &str, name: &str, e: &kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) if s.code == 404 => {
            anyhow::anyhow!("{kind} '{namespace}/{name}' not found")
        }
        kube::Error::Api(s) => anyhow::anyhow!("{kind} '{namespace}/{name}': {}", s.message),
        other => api_error(other),
    }
}

/// A request that failed without naming an object: the server's message, or, when it could
/// not be reached, the root cause.
pub fn api_error(e: &kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) => anyhow::anyhow!("{}", s.message),
        other => {
            let mut root: &dyn std::error::Error = other;
            while let Some(next) = root.source() {
                root = next;
            }
            anyhow::anyhow!("unable to reach the Kubernetes API: {root}")
        }
    }
}

/// Formats a table as Flux's printer does: left-aligned columns separated by a tab, every
/// column but the last padded to its widest cell; a cell with line breaks takes as many lines,
/// the row's other cells blank below their first line (tablewriter's layout).
pub fn format_table(lines: &[Vec<String>]) -> String {
    let columns = lines.first().map_or(0, Vec::len);
    let mut physical: Vec<Vec<&str>> = Vec::new();
    for l in lines {
        let pieces: Vec<Vec<&str>> = l.iter().map(|c| c.split('\n').collect()).collect();
        let height = pieces.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            physical.push(
                pieces
                    .iter()
                    .map(|p| p.get(k).copied().unwrap_or(""))
                    .collect(),
            );
        }
    }
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            physical
                .iter()
                .map(|l| l.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in &physical {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == columns {
                    c.to_string()
                } else {
                    format!("{c:<w$}", w = widths.get(i).copied().unwrap_or(0))
                }
            })
            .collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

/// Asks `question` on a terminal (`[y/N]`); `silent` skips it. Without a terminal and without
/// `silent` the operation is refused, as nothing could answer.
pub fn confirm(question: &str, silent: bool, verb: &str) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    if silent {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("refusing to {verb} without confirmation; use --silent");
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        anyhow::bail!("aborting");
    }
    Ok(())
}

/// The API resource of a kind given by group, version, kind and plural.
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> kube::api::ApiResource {
    kube::api::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    )
}

/// `customresourcedefinitions.apiextensions.k8s.io`.
pub fn crd_resource() -> kube::api::ApiResource {
    resource(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    )
}
