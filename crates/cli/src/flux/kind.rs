//! The toolkit kinds the verbs act on, and the `source git NAME | kustomization NAME` choice
//! that `reconcile`, `suspend`, `resume`, `export` and `delete` share.

use kube::api::{ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use kube::{Api, Client};
use serde_json::Value;

/// A toolkit kind the verbs act on.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// `Kustomization`, `GitRepository`.
    pub kind: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    /// Where its revision is.
    pub revision: &'static str,
    /// `applied` or `fetched`.
    pub verb: &'static str,
}

/// Kustomizations.
pub const KUSTOMIZATION: Kind = Kind {
    kind: "Kustomization",
    group: "kustomize.toolkit.fluxcd.io",
    version: "v1",
    plural: "kustomizations",
    revision: "/status/lastAppliedRevision",
    verb: "applied",
};

/// GitRepositories.
pub const GIT_REPOSITORY: Kind = Kind {
    kind: "GitRepository",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "gitrepositories",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// OCIRepositories.
pub const OCI_REPOSITORY: Kind = Kind {
    kind: "OCIRepository",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "ocirepositories",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// HelmRepositories.
pub const HELM_REPOSITORY: Kind = Kind {
    kind: "HelmRepository",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "helmrepositories",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// HelmCharts.
pub const HELM_CHART: Kind = Kind {
    kind: "HelmChart",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "helmcharts",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// Buckets.
pub const BUCKET: Kind = Kind {
    kind: "Bucket",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "buckets",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// ExternalArtifacts.
pub const EXTERNAL_ARTIFACT: Kind = Kind {
    kind: "ExternalArtifact",
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "externalartifacts",
    revision: "/status/artifact/revision",
    verb: "fetched",
};

/// `notification.toolkit.fluxcd.io/v1` Receiver.
pub const RECEIVER: Kind = Kind {
    kind: "Receiver",
    group: "notification.toolkit.fluxcd.io",
    version: "v1",
    plural: "receivers",
    revision: "/status/webhookPath",
    verb: "initialized",
};

/// `notification.toolkit.fluxcd.io/v1beta3` Alert (no status: always ready, as Flux shows it).
pub const ALERT: Kind = Kind {
    kind: "Alert",
    group: "notification.toolkit.fluxcd.io",
    version: "v1beta3",
    plural: "alerts",
    revision: "/status/none",
    verb: "initialized",
};

/// `notification.toolkit.fluxcd.io/v1beta3` Provider (no status).
pub const PROVIDER: Kind = Kind {
    kind: "Provider",
    group: "notification.toolkit.fluxcd.io",
    version: "v1beta3",
    plural: "providers",
    revision: "/status/none",
    verb: "initialized",
};

/// ArtifactGenerators.
pub const ARTIFACT_GENERATOR: Kind = Kind {
    kind: "ArtifactGenerator",
    group: "source.extensions.fluxcd.io",
    version: "v1beta1",
    plural: "artifactgenerators",
    revision: "/status/observedSourcesDigest",
    verb: "generated",
};

/// HelmReleases.
pub const HELM_RELEASE: Kind = Kind {
    kind: "HelmRelease",
    group: "helm.toolkit.fluxcd.io",
    version: "v2",
    plural: "helmreleases",
    revision: "/status/lastAttemptedRevision",
    verb: "applied",
};

/// `image.toolkit.fluxcd.io/v1` ImageRepositories.
pub const IMAGE_REPOSITORY: Kind = Kind {
    kind: "ImageRepository",
    group: "image.toolkit.fluxcd.io",
    version: "v1",
    plural: "imagerepositories",
    revision: "/status/lastScanResult/revision",
    verb: "scan fetched",
};

/// `image.toolkit.fluxcd.io/v1` ImagePolicies.
pub const IMAGE_POLICY: Kind = Kind {
    kind: "ImagePolicy",
    group: "image.toolkit.fluxcd.io",
    version: "v1",
    plural: "imagepolicies",
    revision: "/status/latestRef/tag",
    verb: "latest tag",
};

/// `image.toolkit.fluxcd.io/v1` ImageUpdateAutomations.
pub const IMAGE_UPDATE: Kind = Kind {
    kind: "ImageUpdateAutomation",
    group: "image.toolkit.fluxcd.io",
    version: "v1",
    plural: "imageupdateautomations",
    revision: "/status/lastPushCommit",
    verb: "last pushed commit",
};

/// The source kinds, by the kind name a `sourceRef` uses.
pub fn source_kind(kind: &str) -> Option<Kind> {
    match kind {
        "GitRepository" => Some(GIT_REPOSITORY),
        "OCIRepository" => Some(OCI_REPOSITORY),
        "HelmRepository" => Some(HELM_REPOSITORY),
        "HelmChart" => Some(HELM_CHART),
        "Bucket" => Some(BUCKET),
        "ExternalArtifact" => Some(EXTERNAL_ARTIFACT),
        _ => None,
    }
}

impl Kind {
    /// The object's revision (applied or fetched), empty when none yet.
    pub fn revision_of<'a>(&self, obj: &'a DynamicObject) -> &'a str {
        obj.data
            .pointer(self.revision)
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The resource of this kind.
    pub fn resource(&self) -> ApiResource {
        let gvk = GroupVersionKind::gvk(self.group, self.version, self.kind);
        ApiResource::from_gvk_with_plural(&gvk, self.plural)
    }

    /// The namespaced API of this kind.
    pub fn api(&self, client: &Client, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), namespace, &self.resource())
    }

    /// Reads one object, with Flux's not-found line.
    pub async fn get(
        &self,
        client: &Client,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<DynamicObject> {
        self.api(client, namespace)
            .get(name)
            .await
            .map_err(|e| super::describe(self.kind, namespace, name, &e))
    }
}

/// `source git …`, `kustomization …` (alias `ks`) or `helmrelease …` (alias `hr`), with the
/// verb's flags: `S` for sources, `K` for Kustomizations, `H` for HelmReleases.
#[derive(clap::Subcommand, Debug)]
pub enum Target<S: clap::Args, K: clap::Args, H: clap::Args = K> {
    /// A source.
    #[command(subcommand)]
    Source(SourceTarget<S>),
    /// A Kustomization.
    #[command(alias = "ks")]
    Kustomization(K),
    /// A HelmRelease.
    #[command(alias = "hr")]
    Helmrelease(H),
    /// An image automation object (`image repository|policy|update NAME`).
    #[command(subcommand)]
    Image(ImageTarget<S>),
}

/// Image automation kinds.
#[derive(clap::Subcommand, Debug)]
pub enum ImageTarget<S: clap::Args> {
    /// An ImageRepository.
    Repository(S),
    /// An ImagePolicy.
    Policy(S),
    /// An ImageUpdateAutomation.
    Update(S),
}

impl<S: clap::Args> ImageTarget<S> {
    /// The kind, Flux's noun for it (`image repository`) and the flags.
    pub fn pick(self) -> (Kind, &'static str, S) {
        match self {
            ImageTarget::Repository(a) => (IMAGE_REPOSITORY, "image repository", a),
            ImageTarget::Policy(a) => (IMAGE_POLICY, "image policy", a),
            ImageTarget::Update(a) => (IMAGE_UPDATE, "image update automation", a),
        }
    }
}

/// Source kinds.
#[derive(clap::Subcommand, Debug)]
pub enum SourceTarget<S: clap::Args> {
    /// A GitRepository.
    Git(S),
    /// An OCIRepository.
    Oci(S),
    /// A HelmRepository.
    Helm(S),
    /// A HelmChart.
    Chart(S),
    /// A Bucket.
    Bucket(S),
}

impl<S: clap::Args> SourceTarget<S> {
    /// The kind, Flux's noun for it (`source git`) and the flags.
    pub fn pick(self) -> (Kind, &'static str, S) {
        match self {
            SourceTarget::Git(a) => (GIT_REPOSITORY, "source git", a),
            SourceTarget::Oci(a) => (OCI_REPOSITORY, "source oci", a),
            SourceTarget::Helm(a) => (HELM_REPOSITORY, "source helm", a),
            SourceTarget::Chart(a) => (HELM_CHART, "source chart", a),
            SourceTarget::Bucket(a) => (BUCKET, "source bucket", a),
        }
    }
}

impl<A: clap::Args> Target<A, A, A> {
    /// The kind, Flux's noun for it (`source git`, `kustomization`) and the flags.
    pub fn pick(self) -> (Kind, &'static str, A) {
        match self {
            Target::Source(t) => t.pick(),
            Target::Kustomization(a) => (KUSTOMIZATION, "kustomization", a),
            Target::Helmrelease(a) => (HELM_RELEASE, "helmrelease", a),
            Target::Image(t) => t.pick(),
        }
    }
}

/// A Kustomization's inventory: each entry's id with the object it names, in the recorded
/// order (malformed ids are left out).
pub fn inventory(obj: &DynamicObject) -> Vec<(String, tidegate_core::ObjectRef)> {
    obj.data
        .pointer("/status/inventory/entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let id = e["id"].as_str()?;
            Some((id.to_string(), tidegate_apply::inventory::parse_id(id)?))
        })
        .collect()
}

/// The object's `Ready` condition, if it has one.
pub fn ready_condition(obj: &Value) -> Option<&Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// Whether `spec.suspend` is true.
pub fn is_suspended(obj: &Value) -> bool {
    obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
}
