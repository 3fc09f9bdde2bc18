//! `oci://` addresses: an OCIRepository's repository URL (no tag) and the CLI's artifact URLs
//! (`oci://<registry>/<repository>[:<tag>|@<digest>]`).

use oci_client::Reference;

/// An `oci://` address that cannot be used. Messages are Flux's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not `oci://…`, or no repository in it.
    #[error("URL must be in format 'oci://<domain>/<org>/<repo>'")]
    Format,
    /// An OCIRepository URL that names a tag (the tag belongs in `spec.ref`).
    #[error("URL must not contain a tag; remove ':{0}'")]
    Tag(String),
    /// Not a valid reference.
    #[error("'{url}' invalid URL: {reason}")]
    Invalid {
        /// The URL given.
        url: String,
        /// Why.
        reason: String,
    },
}

/// A repository in a registry: `registry` (`host[:port]`) and `repository` (`org/app`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path.
    pub repository: String,
}

impl Repository {
    /// `registry/repository`, the name credentials are looked up by.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The reference to `tag` in this repository.
    pub fn tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.registry.clone(),
            self.repository.clone(),
            tag.to_string(),
        )
    }

    /// The reference to `digest` (`sha256:<hex>`) in this repository.
    pub fn digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.registry.clone(),
            self.repository.clone(),
            digest.to_string(),
        )
    }
}

fn parse(url: &str) -> Result<Reference, UrlError> {
    let rest = url.strip_prefix("oci://").ok_or(UrlError::Format)?;
    if !rest.contains('/') || rest.ends_with('/') {
        return Err(UrlError::Format);
    }
    rest.parse::<Reference>().map_err(|e| UrlError::Invalid {
        url: rest.to_string(),
        reason: e.to_string(),
    })
}

fn repository_of(r: &Reference) -> Repository {
    Repository {
        registry: r.registry().to_string(),
        repository: r.repository().to_string(),
    }
}

/// An OCIRepository's `spec.url`: a repository with neither tag nor digest.
pub fn parse_repository_url(url: &str) -> Result<Repository, UrlError> {
    let r = parse(url)?;
    if let Some(tag) = r.tag() {
        // `oci://host:5000/app` parses with no tag; only an explicit `:tag` after the last `/`.
        let last = url.rsplit('/').next().unwrap_or("");
        if last.contains(':') {
            return Err(UrlError::Tag(tag.to_string()));
        }
    }
    if r.digest().is_some() {
        return Err(UrlError::Format);
    }
    Ok(repository_of(&r))
}

/// A CLI artifact URL: the repository and what it points at (`latest` when nothing is given).
pub fn parse_artifact_url(url: &str) -> Result<(Repository, Reference), UrlError> {
    let r = parse(url)?;
    let repo = repository_of(&r);
    let reference = match (r.digest(), r.tag()) {
        (Some(d), _) => repo.digest(d),
        (None, Some(t)) => repo.tag(t),
        (None, None) => repo.tag("latest"),
    };
    Ok((repo, reference))
}

/// `registry/repository[:tag][@digest]`, as Flux prints references (no `oci://`).
pub fn display(r: &Reference) -> String {
    let mut out = format!("{}/{}", r.registry(), r.repository());
    if let Some(t) = r.tag() {
        out.push(':');
        out.push_str(t);
    }
    if let Some(d) = r.digest() {
        out.push('@');
        out.push_str(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_urls() {
        let r = parse_repository_url("oci://localhost:5000/org/app").unwrap();
        assert_eq!(r.registry, "localhost:5000");
        assert_eq!(r.repository, "org/app");
        assert_eq!(
            parse_repository_url("oci://ghcr.io/org/app:1.0")
                .unwrap_err()
                .to_string(),
            "URL must not contain a tag; remove ':1.0'"
        );
        assert_eq!(
            parse_repository_url("https://ghcr.io/org/app")
                .unwrap_err()
                .to_string(),
            "URL must be in format 'oci://<domain>/<org>/<repo>'"
        );
        assert!(parse_repository_url("oci://ghcr.io").is_err());
        assert!(parse_repository_url("oci://ghcr.io/Org/App").is_err());
    }

    #[test]
    fn artifact_urls() {
        let (repo, r) = parse_artifact_url("oci://localhost:5000/app:v1").unwrap();
        assert_eq!(repo.name(), "localhost:5000/app");
        assert_eq!(display(&r), "localhost:5000/app:v1");
        let (_, r) = parse_artifact_url("oci://localhost:5000/app").unwrap();
        assert_eq!(display(&r), "localhost:5000/app:latest");
        let d = format!("sha256:{}", "a".repeat(64));
        let (_, r) = parse_artifact_url(&format!("oci://r.io/app@{d}")).unwrap();
        assert_eq!(r.digest(), Some(d.as_str()));
    }
}
