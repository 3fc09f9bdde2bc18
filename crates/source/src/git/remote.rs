//! Fetching from a remote with gix into a fresh bare repository.

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{Arc, Mutex};

use gix::remote::Direction;
use gix::remote::fetch::Shallow;

use super::select::{self, ListedRef, Strategy, list_prefixes};
use super::{Auth, FetchOptions, GitError, Outcome, commit_of, finish, target_of, unchanged};

type Transport = Box<dyn gix::protocol::transport::client::blocking_io::Transport + Send>;

pub(super) fn fetch(opts: &FetchOptions<'_>, workdir: &Path) -> Result<Outcome, GitError> {
    let url = with_default_user(opts.url)?;
    check_proxy(&url, opts.auth)?;
    let mut repo =
        gix::init_bare(workdir).map_err(|e| op(format!("initialising a repository: {e}")))?;
    if url.scheme == gix::url::Scheme::Ssh {
        configure_ssh(&mut repo, opts.auth, workdir, opts.timeout)?;
    }
    let strategy = opts.reference.strategy();
    let shallow = !matches!(strategy, Strategy::Commit { .. });
    let specs: Vec<String> = match &strategy {
        Strategy::Commit { branch: None, .. } => {
            vec![
                "+refs/heads/*:refs/remotes/origin/*".into(),
                "+refs/tags/*:refs/tags/*".into(),
            ]
        }
        other => list_prefixes(other)
            .iter()
            .map(|p| format!("+{p}:{p}"))
            .collect(),
    };
    let first = remote_for(&repo, &url, &specs)?;
    let prepare = prepare(&first, &url, opts.auth, opts.timeout)?;
    let listed = listing(&prepare.ref_map().remote_refs);
    if prepare
        .ref_map()
        .remote_refs
        .iter()
        .all(|r| matches!(r, gix::protocol::handshake::Ref::Unborn { .. }))
    {
        return Err(GitError::Empty);
    }
    let selection = select::select(&strategy, &listed, opts.url)?;
    if let Some(outcome) = unchanged(&strategy, &selection, opts.last_revision) {
        return Ok(outcome);
    }
    let target = target_of(&selection, &listed);

    // One connection when the listing asked for exactly the reference to fetch; otherwise (a
    // semver range listed every tag) a second one fetches only the chosen tag.
    let exact = selection
        .fetch_ref
        .as_ref()
        .is_some_and(|r| specs.len() == 1 && specs[0] == format!("+{r}:{r}"));
    if exact || selection.fetch_ref.is_none() {
        receive(prepare, shallow, opts)?;
    } else {
        drop(prepare);
        let r = selection.fetch_ref.clone().unwrap_or_default();
        let second = remote_for(&repo, &url, &[format!("+{r}:{r}")])?;
        let again = self::prepare(&second, &url, opts.auth, opts.timeout)?;
        receive(again, shallow, opts)?;
    }
    let commit = commit_of(&strategy, &selection)?;
    finish(repo, &selection, commit, target)
}

fn op(message: String) -> GitError {
    GitError::Operation(message)
}

/// A proxy is used for HTTP(S) remotes only; with another transport it is refused rather than
/// ignored.
pub(super) fn check_proxy(url: &gix::Url, auth: &Auth) -> Result<(), GitError> {
    let networked = matches!(url.scheme, gix::url::Scheme::Ssh | gix::url::Scheme::Git);
    if auth.proxy.is_some() && networked {
        return Err(GitError::Invalid(format!(
            "a proxy (spec.proxySecretRef) is only supported for HTTP(S) Git repositories by Tidegate, not '{}'",
            url.scheme.as_str()
        )));
    }
    Ok(())
}

/// SSH URLs without a user connect as `git`, as Flux does.
pub(super) fn with_default_user(url: &str) -> Result<gix::Url, GitError> {
    let mut parsed = gix::url::parse(gix::bstr::ByteSlice::as_bstr(url.as_bytes()))
        .map_err(|e| GitError::Invalid(format!("failed to parse url '{url}': {e}")))?;
    if parsed.scheme == gix::url::Scheme::Ssh && parsed.user().is_none() {
        parsed.set_user(Some("git".into()));
    }
    Ok(parsed)
}

/// SSH goes through the OpenSSH client with the secret's identity and known_hosts, and nothing
/// from the user's own configuration.
fn configure_ssh(
    repo: &mut gix::Repository,
    auth: &Auth,
    workdir: &Path,
    timeout: std::time::Duration,
) -> Result<(), GitError> {
    let command = ssh_command(auth, workdir, timeout)?;
    let mut config = repo.config_snapshot_mut();
    config
        .set_raw_value("core.sshCommand", command.as_str())
        .map_err(|e| op(format!("configuring ssh: {e}")))?;
    config
        .set_raw_value("ssh.variant", "ssh")
        .map_err(|e| op(format!("configuring ssh: {e}")))?;
    config
        .commit()
        .map_err(|e| op(format!("configuring ssh: {e}")))?;
    Ok(())
}

/// The OpenSSH command line: the secret's identity and known_hosts written to 0600 files in
/// `workdir`, strict host key checking, no agent and no user configuration.
pub(super) fn ssh_command(
    auth: &Auth,
    workdir: &Path,
    timeout: std::time::Duration,
) -> Result<String, GitError> {
    let write = |name: &str, data: &[u8]| -> Result<std::path::PathBuf, GitError> {
        let path = workdir.join(name);
        let mut bytes = data.to_vec();
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        std::fs::write(&path, bytes).map_err(|e| op(format!("writing {name}: {e}")))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(path)
    };
    let identity = write("ssh-identity", auth.identity.as_deref().unwrap_or_default())?;
    let known_hosts = write(
        "ssh-known-hosts",
        auth.known_hosts.as_deref().unwrap_or_default(),
    )?;
    Ok(format!(
        "ssh -F /dev/null -i '{}' -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes \
         -o StrictHostKeyChecking=yes -o UserKnownHostsFile='{}' -o GlobalKnownHostsFile=/dev/null \
         -o ConnectTimeout={secs} -o ServerAliveInterval={alive} -o ServerAliveCountMax=3",
        identity.display(),
        known_hosts.display(),
        secs = timeout.as_secs().max(1),
        alive = (timeout.as_secs() / 3).max(1),
    ))
}

type Prepared<'a> = gix::remote::fetch::Prepare<'a, 'a, Transport>;

/// An anonymous remote for `url` fetching `specs`, without tags.
fn remote_for<'r>(
    repo: &'r gix::Repository,
    url: &gix::Url,
    specs: &[String],
) -> Result<gix::Remote<'r>, GitError> {
    repo.remote_at(url.clone())
        .map_err(|e| GitError::Invalid(format!("failed to parse url '{url}': {e}")))?
        .with_fetch_tags(gix::remote::fetch::Tags::None)
        .with_refspecs(specs.iter().map(String::as_str), Direction::Fetch)
        .map_err(|e| op(format!("refspec: {e}")))
}

/// Connects, authenticates and lists the remote's references.
fn prepare<'a>(
    remote: &'a gix::Remote<'a>,
    url: &gix::Url,
    auth: &'a Auth,
    timeout: std::time::Duration,
) -> Result<Prepared<'a>, GitError> {
    let mut connection = remote
        .connect(Direction::Fetch)
        .map_err(|e| classify(url, chain(&e)))?;
    if url.scheme == gix::url::Scheme::Http || url.scheme == gix::url::Scheme::Https {
        connection = connection.with_transport_options(Box::new(http_options(auth, timeout)));
    }
    let username = auth.username.clone();
    let password = auth.password.clone();
    let connection = connection.with_credentials(move |action| match action {
        gix::credentials::helper::Action::Get(ctx) => match (&username, &password) {
            (Some(u), p) => Ok(Some(gix::credentials::protocol::Outcome {
                identity: gix::sec::identity::Account {
                    username: u.clone(),
                    password: p.clone().unwrap_or_default(),
                    oauth_refresh_token: None,
                },
                next: ctx.into(),
            })),
            (None, _) => Ok(None),
        },
        _ => Ok(None),
    });
    connection
        .prepare_fetch(
            gix::progress::Discard,
            gix::remote::ref_map::Options {
                // List every reference: an empty listing must mean an empty repository.
                prefix_from_spec_as_filter_on_remote: false,
                ..Default::default()
            },
        )
        .map_err(|e| classify(url, chain(&e)))
}

fn receive(prepare: Prepared<'_>, shallow: bool, opts: &FetchOptions<'_>) -> Result<(), GitError> {
    let prepare = if shallow {
        prepare.with_shallow(Shallow::DepthAtRemote(NonZeroU32::MIN))
    } else {
        prepare
    };
    prepare
        .receive(gix::progress::Discard, opts.interrupt)
        .map(|_| ())
        .map_err(|e| op(format!("unable to clone '{}': {}", opts.url, chain(&e))))
}

pub(super) fn http_options(
    auth: &Auth,
    timeout: std::time::Duration,
) -> gix::protocol::transport::client::blocking_io::http::Options {
    use gix::protocol::transport::client::blocking_io::http;
    let mut reqwest_opts = http::reqwest::Options::default();
    let ca = auth.ca_pem.clone();
    let proxy = auth.proxy.clone();
    let client_pem = auth.client_pem.clone();
    reqwest_opts.configure_client = Some(Box::new(move |builder| {
        let builder = builder.timeout(timeout);
        let builder = match &client_pem {
            Some(pem) => builder.identity(
                reqwest::Identity::from_pem(pem)
                    .map_err(|e| gix_message(format!("invalid client certificate or key: {e}")))?,
            ),
            None => builder,
        };
        let builder = match &proxy {
            Some(url) => builder.proxy(
                reqwest::Proxy::all(url.as_str())
                    .map_err(|e| gix_message(format!("invalid proxy URL: {e}")))?,
            ),
            None => builder,
        };
        match &ca {
            Some(pem) => {
                let certs = reqwest::Certificate::from_pem_bundle(pem)
                    .map_err(|e| gix_message(format!("reading the CA certificate: {e}")))?;
                Ok(builder.tls_certs_merge(certs))
            }
            None => Ok(builder),
        }
    }));
    if let Some(token) = auth.bearer_token.clone() {
        reqwest_opts.configure_request = Some(Box::new(move |req| {
            let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|e| gix_message(format!("bearer token: {e}")))?;
            req.headers_mut()
                .insert(reqwest::header::AUTHORIZATION, value);
            Ok(())
        }));
    }
    http::Options {
        connect_timeout: Some(std::time::Duration::from_secs(20)),
        user_agent: Some(concat!("tidegate/", env!("CARGO_PKG_VERSION")).to_string()),
        backend: Some(Arc::new(Mutex::new(reqwest_opts))),
        ..Default::default()
    }
}

/// A transport error, as Flux words it (every checkout error is `GitOperationFailed`).
fn classify(url: &gix::Url, message: String) -> GitError {
    // gix asks for credentials when ssh is denied; there are none to give over SSH, so say
    // what happened instead of gix's words for an empty credential helper.
    let message = if url.scheme == gix::url::Scheme::Ssh
        && message.contains("No credentials were returned")
    {
        "ssh: unable to authenticate: the server refused the key in 'identity' (publickey)"
            .to_string()
    } else {
        message
    };
    GitError::Operation(format!("unable to clone '{}': {message}", url.to_bstring()))
}

/// The remote's references as a flat list.
fn listing(refs: &[gix::protocol::handshake::Ref]) -> Vec<ListedRef> {
    use gix::protocol::handshake::Ref;
    refs.iter()
        .filter_map(|r| match r {
            Ref::Peeled {
                full_ref_name,
                tag,
                object,
            } => Some(ListedRef {
                name: full_ref_name.to_string(),
                target: *tag,
                peeled: Some(*object),
            }),
            Ref::Direct {
                full_ref_name,
                object,
            } => Some(ListedRef {
                name: full_ref_name.to_string(),
                target: *object,
                peeled: None,
            }),
            Ref::Symbolic {
                full_ref_name,
                tag,
                object,
                ..
            } => Some(ListedRef {
                name: full_ref_name.to_string(),
                target: tag.unwrap_or(*object),
                peeled: tag.map(|_| *object),
            }),
            Ref::Unborn { .. } => None,
        })
        .collect()
}

fn gix_message(message: String) -> gix::error::Error {
    gix::error::Error::from_error(std::io::Error::other(message))
}

/// An error with its causes, `outer: inner: root`, without repeats.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
