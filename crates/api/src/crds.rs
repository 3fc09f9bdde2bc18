//! The CRD manifests of the kinds Tidegate implements, as YAML documents.

/// `gitrepositories.source.toolkit.fluxcd.io`.
pub const GIT_REPOSITORY: &str =
    include_str!("../crds/source.toolkit.fluxcd.io_gitrepositories.yaml");

/// `ocirepositories.source.toolkit.fluxcd.io`.
pub const OCI_REPOSITORY: &str =
    include_str!("../crds/source.toolkit.fluxcd.io_ocirepositories.yaml");

/// `helmrepositories.source.toolkit.fluxcd.io`.
pub const HELM_REPOSITORY: &str =
    include_str!("../crds/source.toolkit.fluxcd.io_helmrepositories.yaml");

/// `helmcharts.source.toolkit.fluxcd.io`.
pub const HELM_CHART: &str = include_str!("../crds/source.toolkit.fluxcd.io_helmcharts.yaml");

/// `buckets.source.toolkit.fluxcd.io`.
pub const BUCKET: &str = include_str!("../crds/source.toolkit.fluxcd.io_buckets.yaml");

/// `externalartifacts.source.toolkit.fluxcd.io`.
pub const EXTERNAL_ARTIFACT: &str =
    include_str!("../crds/source.toolkit.fluxcd.io_externalartifacts.yaml");

/// `artifactgenerators.source.extensions.fluxcd.io`.
pub const ARTIFACT_GENERATOR: &str =
    include_str!("../crds/source.extensions.fluxcd.io_artifactgenerators.yaml");

/// `kustomizations.kustomize.toolkit.fluxcd.io`.
pub const KUSTOMIZATION: &str =
    include_str!("../crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml");

/// `helmreleases.helm.toolkit.fluxcd.io`.
pub const HELM_RELEASE: &str = include_str!("../crds/helm.toolkit.fluxcd.io_helmreleases.yaml");

/// `providers.notification.toolkit.fluxcd.io`.
pub const PROVIDER: &str = include_str!("../crds/notification.toolkit.fluxcd.io_providers.yaml");

/// `alerts.notification.toolkit.fluxcd.io`.
pub const ALERT: &str = include_str!("../crds/notification.toolkit.fluxcd.io_alerts.yaml");

/// `receivers.notification.toolkit.fluxcd.io`.
pub const RECEIVER: &str = include_str!("../crds/notification.toolkit.fluxcd.io_receivers.yaml");

/// `clusterresourcesets.addons.cluster.x-k8s.io` (Cluster API).
pub const CLUSTER_RESOURCE_SET: &str =
    include_str!("../crds/addons.cluster.x-k8s.io_clusterresourcesets.yaml");

/// `clusterresourcesetbindings.addons.cluster.x-k8s.io` (Cluster API).
pub const CLUSTER_RESOURCE_SET_BINDING: &str =
    include_str!("../crds/addons.cluster.x-k8s.io_clusterresourcesetbindings.yaml");

/// `clusters.cluster.x-k8s.io` (Cluster API; the fields ClusterResourceSets read).
pub const CLUSTER: &str = include_str!("../crds/cluster.x-k8s.io_clusters.yaml");

/// Cluster API's CRDs that the ClusterResourceSet controller needs; installed only where the
/// cluster lacks them (a cluster running Cluster API has its own).
pub fn cluster_api() -> Vec<&'static str> {
    vec![CLUSTER, CLUSTER_RESOURCE_SET, CLUSTER_RESOURCE_SET_BINDING]
}

/// The `metadata.name` of a CRD manifest.
pub fn name_of(crd: &str) -> Option<&str> {
    crd.lines()
        .skip_while(|l| !l.starts_with("metadata:"))
        .find_map(|l| l.strip_prefix("  name: "))
        .map(str::trim)
}

/// `image.toolkit.fluxcd.io/v1` ImageRepository.
pub const IMAGE_REPOSITORY: &str =
    include_str!("../crds/image.toolkit.fluxcd.io_imagerepositories.yaml");
/// `image.toolkit.fluxcd.io/v1` ImagePolicy.
pub const IMAGE_POLICY: &str = include_str!("../crds/image.toolkit.fluxcd.io_imagepolicies.yaml");
/// `image.toolkit.fluxcd.io/v1` ImageUpdateAutomation.
pub const IMAGE_UPDATE_AUTOMATION: &str =
    include_str!("../crds/image.toolkit.fluxcd.io_imageupdateautomations.yaml");

/// Every CRD, in install order.
pub fn all() -> Vec<&'static str> {
    vec![
        GIT_REPOSITORY,
        OCI_REPOSITORY,
        HELM_REPOSITORY,
        HELM_CHART,
        BUCKET,
        EXTERNAL_ARTIFACT,
        ARTIFACT_GENERATOR,
        KUSTOMIZATION,
        HELM_RELEASE,
        PROVIDER,
        ALERT,
        RECEIVER,
        IMAGE_REPOSITORY,
        IMAGE_POLICY,
        IMAGE_UPDATE_AUTOMATION,
    ]
}

/// The names (`<plural>.<group>`) of every CRD, in install order.
pub fn names() -> Vec<&'static str> {
    all().into_iter().filter_map(name_of).collect()
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

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_the_metadata_names() {
        assert_eq!(
            super::names(),
            [
                "gitrepositories.source.toolkit.fluxcd.io",
                "ocirepositories.source.toolkit.fluxcd.io",
                "helmrepositories.source.toolkit.fluxcd.io",
                "helmcharts.source.toolkit.fluxcd.io",
                "buckets.source.toolkit.fluxcd.io",
                "externalartifacts.source.toolkit.fluxcd.io",
                "artifactgenerators.source.extensions.fluxcd.io",
                "kustomizations.kustomize.toolkit.fluxcd.io",
                "helmreleases.helm.toolkit.fluxcd.io",
                "providers.notification.toolkit.fluxcd.io",
                "alerts.notification.toolkit.fluxcd.io",
                "receivers.notification.toolkit.fluxcd.io",
                "imagerepositories.image.toolkit.fluxcd.io",
                "imagepolicies.image.toolkit.fluxcd.io",
                "imageupdateautomations.image.toolkit.fluxcd.io"
            ]
        );
    }
}
