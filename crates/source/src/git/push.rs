//! Pushing a commit: git's send-pack side of the receive-pack protocol (v0/v1), over the
//! transports gix connects (`http(s)://` with the same credentials, CA and timeout as fetching,
//! `ssh://` through the OpenSSH client, `git://`), and for `file://` repositories a direct
//! write of the objects and a compare-and-swap of the reference, with no `git` process.
//!
//! The pack holds the new commit and the trees and blobs its first parent lacks, undeltified.
//! A reference the remote holds at a commit that is not an ancestor of the new one is refused
//! before anything is sent (`non-fast-forward update`), unless the update forces it; the
//! command names the old value the remote advertised, so a concurrent change fails the push on
//! the server too.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

use gix::ObjectId;
use gix::protocol::transport::client::blocking_io::{ExtendedBufRead, Transport};
use gix::protocol::transport::client::{MessageKind, WriteMode};

use super::commit::{is_ancestor, new_objects};
use super::{Auth, GitError};

/// One reference to set on the remote.
#[derive(Debug, Clone)]
pub struct RefUpdate {
    /// The commit to point it at.
    pub commit: ObjectId,
    /// The full reference name (`refs/heads/main`).
    pub name: String,
    /// Whether a non-fast-forward update is allowed.
    pub force: bool,
}

/// Where and how to push.
pub struct PushOptions<'a> {
    /// The repository URL.
    pub url: &'a str,
    /// Credentials (as for fetching).
    pub auth: &'a Auth,
    /// Bound on each network operation.
    pub timeout: std::time::Duration,
    /// Push options (`git push -o key=value`), sent when the server accepts them.
    pub options: &'a BTreeMap<String, String>,
}

fn op(message: String) -> GitError {
    GitError::Operation(message)
}

/// Sets `update` on the remote from the objects of `repo`. `workdir` holds temporary files
/// (the SSH identity).
pub fn push(
    repo: &gix::Repository,
    workdir: &Path,
    opts: &PushOptions<'_>,
    update: &RefUpdate,
) -> Result<(), GitError> {
    let url = super::remote::with_default_user(opts.url)?;
    super::remote::check_proxy(&url, opts.auth)?;
    if url.scheme == gix::url::Scheme::File {
        return push_local(repo, Path::new(&url.path.to_string()), update);
    }
    push_remote(repo, workdir, &url, opts, update)
}

/// The fast-forward rule, shared by both paths.
fn check_fast_forward(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    update: &RefUpdate,
) -> Result<bool, GitError> {
    match old {
        Some(old) if old == update.commit => Ok(false),
        Some(old) if !update.force && !is_ancestor(repo, old, update.commit) => {
            Err(op(format!("non-fast-forward update: {}", update.name)))
        }
        _ => Ok(true),
    }
}

fn push_local(repo: &gix::Repository, path: &Path, update: &RefUpdate) -> Result<(), GitError> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    let target =
        gix::open(path).map_err(|e| op(format!("opening repository '{}': {e}", path.display())))?;
    let name: gix::refs::FullName = update
        .name
        .as_str()
        .try_into()
        .map_err(|e| GitError::Invalid(format!("invalid reference '{}': {e}", update.name)))?;
    let old = target
        .try_find_reference(name.as_ref())
        .map_err(|e| op(format!("reading {}: {e}", update.name)))?
        .and_then(|r| r.target().try_id().map(|id| id.to_owned()));
    if !check_fast_forward(repo, old, update)? {
        return Ok(());
    }
    for id in new_objects(repo, update.commit)? {
        let object = repo
            .find_object(id)
            .map_err(|e| op(format!("reading object {id}: {e}")))?;
        let written = gix::prelude::Write::write_buf(&target.objects, object.kind, &object.data)
            .map_err(|e| op(format!("writing object {id}: {e}")))?;
        if written != id {
            return Err(op(format!("object {id} was written as {written}")));
        }
    }
    let expected = match old {
        Some(old) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(old)),
        None => PreviousValue::MustNotExist,
    };
    target
        .edit_reference(RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "push".into(),
                },
                expected,
                new: gix::refs::Target::Object(update.commit),
            },
            name,
            deref: false,
        })
        .map_err(|e| op(format!("failed to update ref {}: {e}", update.name)))?;
    Ok(())
}

fn push_remote(
    repo: &gix::Repository,
    workdir: &Path,
    url: &gix::Url,
    opts: &PushOptions<'_>,
    update: &RefUpdate,
) -> Result<(), GitError> {
    use gix::protocol::transport::client::blocking_io::{connect, ssh};
    let ssh_command = if url.scheme == gix::url::Scheme::Ssh {
        Some(super::remote::ssh_command(
            opts.auth,
            workdir,
            opts.timeout,
        )?)
    } else {
        None
    };
    let mut transport = connect::connect(
        url.clone(),
        connect::Options {
            version: gix::protocol::transport::Protocol::V1,
            ssh: ssh::connect::Options {
                command: ssh_command.map(Into::into),
                disallow_shell: false,
                kind: Some(ssh::ProgramKind::Ssh),
            },
            trace: false,
        },
    )
    .map_err(|e| remote_error(url, &e.to_string()))?;
    let http = matches!(url.scheme, gix::url::Scheme::Http | gix::url::Scheme::Https);
    if http {
        transport
            .configure(&super::remote::http_options(opts.auth, opts.timeout))
            .map_err(|e| remote_error(url, &e.to_string()))?;
        if let Some(user) = &opts.auth.username {
            transport
                .set_identity(gix::sec::identity::Account {
                    username: user.clone(),
                    password: opts.auth.password.clone().unwrap_or_default(),
                    oauth_refresh_token: None,
                })
                .map_err(|e| remote_error(url, &e.to_string()))?;
        }
    }
    let handshake = gix::protocol::handshake(
        &mut transport,
        gix::protocol::transport::Service::ReceivePack,
        |_| Ok(None),
        Vec::new(),
        &mut gix::progress::Discard,
    )
    .map_err(|e| {
        let text = super::remote::chain(&e);
        if text.contains("No credentials were returned") || text.contains("not accepted") {
            GitError::Auth(format!(
                "failed to push to '{}': authentication required",
                url.to_bstring()
            ))
        } else {
            remote_error(url, &text)
        }
    })?;
    let old = handshake
        .refs
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find_map(|r| {
            use gix::protocol::handshake::Ref;
            match r {
                Ref::Direct {
                    full_ref_name,
                    object,
                }
                | Ref::Peeled {
                    full_ref_name,
                    object,
                    ..
                } if full_ref_name == update.name.as_str() => Some(*object),
                Ref::Symbolic {
                    full_ref_name,
                    object,
                    ..
                } if full_ref_name == update.name.as_str() => Some(*object),
                _ => None,
            }
        });
    if !check_fast_forward(repo, old, update)? {
        return Ok(());
    }
    let caps = &handshake.capabilities;
    if !opts.options.is_empty() && !caps.contains("push-options") {
        return Err(op("the receiving end does not support push options".into()));
    }
    let pack = super::pack::write(repo, &new_objects(repo, update.commit)?)?;

    let request = transport
        .request(WriteMode::Binary, MessageKind::Flush, false)
        .map_err(|e| remote_error(url, &e.to_string()))?;
    let (mut writer, mut reader) = request.into_parts();
    let zero = ObjectId::null(gix::hash::Kind::Sha1);
    let mut capabilities = String::from("report-status");
    if !opts.options.is_empty() {
        capabilities.push_str(" push-options");
    }
    capabilities.push_str(concat!(" agent=tidegate/", env!("CARGO_PKG_VERSION")));
    let command = format!(
        "{} {} {}\0{capabilities}\n",
        old.unwrap_or(zero),
        update.commit,
        update.name
    );
    let io = |e: std::io::Error| remote_error(url, &format!("sending the pack: {e}"));
    pkt_line(&mut writer, command.as_bytes()).map_err(io)?;
    writer.write_all(b"0000").map_err(io)?;
    if !opts.options.is_empty() {
        for (k, v) in opts.options {
            let line = if v.is_empty() {
                format!("{k}\n")
            } else {
                format!("{k}={v}\n")
            };
            pkt_line(&mut writer, line.as_bytes()).map_err(io)?;
        }
        writer.write_all(b"0000").map_err(io)?;
    }
    writer.write_all(&pack).map_err(io)?;
    writer.flush().map_err(io)?;
    drop(writer);
    read_report(&mut reader, url, &update.name)
}

fn pkt_line(w: &mut dyn Write, data: &[u8]) -> std::io::Result<()> {
    write!(w, "{:04x}", data.len() + 4)?;
    w.write_all(data)
}

/// Reads receive-pack's `report-status`: `unpack ok`, then `ok <ref>` or `ng <ref> <why>`.
fn read_report(
    reader: &mut Box<dyn ExtendedBufRead<'_> + Unpin + '_>,
    url: &gix::Url,
    name: &str,
) -> Result<(), GitError> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        match reader.readline_str(&mut line) {
            Ok(0) => break,
            Ok(_) => lines.push(line.trim_end_matches('\n').to_string()),
            Err(e) => {
                // The stream ends with a flush; some transports report it as the end.
                if lines.is_empty() {
                    return Err(remote_error(url, &format!("reading the push result: {e}")));
                }
                break;
            }
        }
    }
    // Drain whatever follows, so the connection closes cleanly.
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    let mut unpacked = false;
    let mut updated = false;
    for line in &lines {
        if let Some(status) = line.strip_prefix("unpack ") {
            if status != "ok" {
                return Err(op(format!("failed to push: unpack {status}")));
            }
            unpacked = true;
        } else if let Some(r) = line.strip_prefix("ok ") {
            if r == name {
                updated = true;
            }
        } else if let Some(r) = line.strip_prefix("ng ") {
            let (r, why) = r.split_once(' ').unwrap_or((r, "rejected"));
            return Err(op(format!("failed to push: {r} {why}")));
        }
    }
    if !unpacked || !updated {
        return Err(op(format!(
            "failed to push: no report for {name} from the remote ({})",
            lines.join("; ")
        )));
    }
    Ok(())
}

fn remote_error(url: &gix::Url, message: &str) -> GitError {
    GitError::Operation(format!(
        "failed to push to '{}': {message}",
        url.to_bstring()
    ))
}
