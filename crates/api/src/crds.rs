//! The CRD manifests of the kinds Tidegate implements, as YAML documents.

/// `gitrepositories.source.toolkit.fluxcd.io`.
pub const GIT_REPOSITORY: &str =
    include_str!("../crds/source.toolkit.fluxcd.io_gitrepositories.yaml");

/// `kustomizations.kustomize.toolkit.fluxcd.io`.
pub const KUSTOMIZATION: &str =
    include_str!("../crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml");

/// Every CRD, in install order.
pub fn all() -> Vec<&'static str> {
    vec![GIT_REPOSITORY, KUSTOMIZATION]
}

/// Every CRD as one multi-document YAML stream.
pub fn stream() -> String {
    all()
        .iter()
        .map(|d| d.trim_end())
        .collect::<Vec<_>>()
        .join("\n---\n")
        + "\n"
}
