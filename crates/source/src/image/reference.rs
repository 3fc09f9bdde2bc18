//! An ImageRepository's `spec.image`, read as Flux reads it (go-containerregistry's
//! `name.ParseReference` behind Flux's own checks): no URL scheme, no tag or digest; the
//! canonical name Docker Hub images get (`nginx` → `index.docker.io/library/nginx`).

use crate::oci::reference::Repository;

/// Docker Hub, as go-containerregistry names it.
pub const DEFAULT_REGISTRY: &str = "index.docker.io";

/// Why an image name is refused (Flux's `ImageURLInvalid` messages).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImageError {
    /// `https://…`.
    #[error("image '{image}' should not include URL scheme; remove '{scheme}://'")]
    Scheme {
        /// The image as given.
        image: String,
        /// The text before `://`.
        scheme: String,
    },
    /// Not a reference at all.
    #[error("could not parse reference: {0}")]
    Parse(String),
    /// `app:1.0` or `app@sha256:…`.
    #[error("image '{image}' should not include a tag; remove ':{tag}'")]
    Tag {
        /// The image as given.
        image: String,
        /// What follows the first `:` after the registry.
        tag: String,
    },
}

/// A parsed image repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// The registry host (`index.docker.io` for Docker Hub).
    pub registry: String,
    /// The repository path (`library/nginx`).
    pub repository: String,
}

impl ImageRef {
    /// `registry/repository`: `status.canonicalImageName`.
    pub fn canonical(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The repository as the registry client addresses it.
    pub fn oci_repository(&self) -> Repository {
        Repository {
            registry: if self.registry == DEFAULT_REGISTRY {
                "docker.io".into()
            } else {
                self.registry.clone()
            },
            repository: self.repository.clone(),
        }
    }
}

fn valid_repository(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 255
        && r.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-./".contains(&b))
}

fn valid_tag(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 128
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// Parses `spec.image`.
pub fn parse_image(image: &str) -> Result<ImageRef, ImageError> {
    if let Some((scheme, _)) = image.split_once("://") {
        return Err(ImageError::Scheme {
            image: image.into(),
            scheme: scheme.into(),
        });
    }
    let parse_err = || ImageError::Parse(image.into());
    // A digest, else a tag after the last `/`.
    let (name, has_reference) = match image.split_once('@') {
        Some((n, d)) => {
            let (algo, hex) = d.split_once(':').ok_or_else(parse_err)?;
            if algo.is_empty() || hex.is_empty() {
                return Err(parse_err());
            }
            (n, true)
        }
        None => {
            let last = image.rsplit('/').next().unwrap_or(image);
            match last.rsplit_once(':') {
                Some((_, tag)) => {
                    if !valid_tag(tag) {
                        return Err(parse_err());
                    }
                    (&image[..image.len() - tag.len() - 1], true)
                }
                None => (image, false),
            }
        }
    };
    let (registry, repository) = match name.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_string(), rest.to_string())
        }
        _ => (String::new(), name.to_string()),
    };
    if !valid_repository(&repository) || registry.contains(['/', '@']) {
        return Err(parse_err());
    }
    let registry = match registry.as_str() {
        "" | "docker.io" => DEFAULT_REGISTRY.to_string(),
        _ => registry,
    };
    let repository = if registry == DEFAULT_REGISTRY && !repository.contains('/') {
        format!("library/{repository}")
    } else {
        repository
    };
    if has_reference {
        // Flux's check: anything after a `:` once the registry is stripped is a tag.
        let stripped = image.strip_prefix(&registry).unwrap_or(image);
        if let Some(tag) = stripped.split(':').nth(1) {
            return Err(ImageError::Tag {
                image: image.into(),
                tag: tag.into(),
            });
        }
    }
    Ok(ImageRef {
        registry,
        repository,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_and_refusals_as_flux() {
        for (image, canonical) in [
            ("nginx", "index.docker.io/library/nginx"),
            ("alpine", "index.docker.io/library/alpine"),
            ("docker.io/nginx", "index.docker.io/library/nginx"),
            ("fluxcd/flux", "index.docker.io/fluxcd/flux"),
            ("ghcr.io/org/app", "ghcr.io/org/app"),
            ("localhost:5000/foo", "localhost:5000/foo"),
            ("127.0.0.1:5000/team/app", "127.0.0.1:5000/team/app"),
        ] {
            assert_eq!(
                parse_image(image).unwrap().canonical(),
                canonical,
                "{image}"
            );
        }
        assert_eq!(
            parse_image("https://ghcr.io/org/app")
                .unwrap_err()
                .to_string(),
            "image 'https://ghcr.io/org/app' should not include URL scheme; remove 'https://'"
        );
        assert_eq!(
            parse_image("ghcr.io/org/app:1.0").unwrap_err().to_string(),
            "image 'ghcr.io/org/app:1.0' should not include a tag; remove ':1.0'"
        );
        assert_eq!(
            parse_image("localhost:5000/app:v2")
                .unwrap_err()
                .to_string(),
            "image 'localhost:5000/app:v2' should not include a tag; remove ':v2'"
        );
        assert_eq!(
            parse_image("ghcr.io/org/app@sha256:abc")
                .unwrap_err()
                .to_string(),
            "image 'ghcr.io/org/app@sha256:abc' should not include a tag; remove ':abc'"
        );
        assert_eq!(
            parse_image("Ghcr.io/Org/App").unwrap_err().to_string(),
            "could not parse reference: Ghcr.io/Org/App"
        );
        assert_eq!(
            parse_image("localhost:5000/foo")
                .unwrap()
                .oci_repository()
                .name(),
            "localhost:5000/foo"
        );
    }
}
