//! The flux-style verbs (`get`, `reconcile`, `suspend`, `resume`, `version`): Flux's names,
//! flags and output (`►` progress, `✔` success, `✗` failure, `◎` waiting, on stderr; tables
//! on stdout).

pub mod build;
pub mod check;
pub mod create;
pub mod delete;
pub mod diff;
pub mod events;
pub mod export;
pub mod get;
pub mod reconcile;
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
    #[arg(short = 'n', long, default_value = "flux-system")]
    pub namespace: String,
    /// How long to wait for the operation.
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    pub timeout: Duration,
}

/// `► message` (an action starts).
pub fn action(message: &str) {
    eprintln!("► {message}");
}

/// `✔ message`.
pub fn success(message: &str) {
    eprintln!("✔ {message}");
}

/// `◎ message` (waiting).
pub fn waiting(message: &str) {
    eprintln!("◎ {message}");
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
/// column but the last padded to its widest cell.
pub fn format_table(lines: &[Vec<String>]) -> String {
    let columns = lines.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            lines
                .iter()
                .map(|l| l.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == columns {
                    c.clone()
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
