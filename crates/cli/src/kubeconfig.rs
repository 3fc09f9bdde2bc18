//! `tidegate kubeconfig`: a kubeconfig for a named user of an API server started from a data
//! directory (`up` or `apiserver`): a client certificate signed by its client CA, the common
//! name the user and each organization a group, as kube-apiserver reads them.

use std::path::PathBuf;

use anyhow::Context as _;
use base64::Engine as _;

/// Flags of `tidegate kubeconfig`.
#[derive(clap::Args)]
pub struct Args {
    /// The data directory of the API server.
    #[arg(long, default_value = "./tidegate-data")]
    data_dir: PathBuf,
    /// The user name (the certificate's common name).
    #[arg(long)]
    user: String,
    /// Groups of the user (the certificate's organizations); repeatable or comma-separated.
    #[arg(long = "group", value_delimiter = ',')]
    groups: Vec<String>,
    /// Days the certificate is valid.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Write the kubeconfig to this file (mode 0600) instead of printing it.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// Writes or prints the user's kubeconfig.
pub fn run(args: Args) -> anyhow::Result<()> {
    let admin = args.data_dir.join("kubeconfig");
    let text = std::fs::read_to_string(&admin).with_context(|| {
        format!(
            "no API server has run in {} ({} is missing)",
            args.data_dir.display(),
            admin.display()
        )
    })?;
    let kc = kube::config::Kubeconfig::from_yaml(&text)
        .with_context(|| format!("reading {}", admin.display()))?;
    let server = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone())
        .with_context(|| format!("{} names no server", admin.display()))?;
    let creds = tidegate_apiserver::tls::load_or_create(Some(&args.data_dir))?;
    let groups: Vec<String> = args.groups.into_iter().filter(|g| !g.is_empty()).collect();
    let (cert, key) =
        tidegate_apiserver::tls::client_certificate(&creds, &args.user, &groups, args.days)?;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let ca_line = if server.starts_with("https://") {
        format!("    certificate-authority-data: {}\n", b64(&creds.ca_pem))
    } else {
        String::new()
    };
    let user = &args.user;
    let out = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: tidegate\n  cluster:\n    server: {server}\n{ca_line}contexts:\n- name: {user}@tidegate\n  context:\n    cluster: tidegate\n    user: {user:?}\n    namespace: default\ncurrent-context: {user}@tidegate\nusers:\n- name: {user:?}\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\npreferences: {{}}\n",
        b64(&cert),
        b64(&key)
    );
    match args.output {
        Some(path) => {
            tidegate_apiserver::tls::write_kubeconfig(&path, &out)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("✔ kubeconfig for {user} written to {}", path.display());
        }
        None => print!("{out}"),
    }
    Ok(())
}
