//! `tidegate install [--export] [--components …]`: the Namespace, the CRDs, RBAC, the artifact
//! Service and the controllers' Deployment (running `tidegate controllers`), printed for
//! `kubectl apply --server-side -f -` or applied with the apply manager and waited for.

use serde_json::Value;
use tidegate_apply::{ResourceManager, WaitOptions};

use crate::controllers::{
    HELM, IMAGE_AUTOMATION, IMAGE_REFLECTOR, KUSTOMIZE, NOTIFICATION, SOURCE, WATCHER,
};
use crate::flux::{Global, action, success, waiting};

/// The controllers' image.
pub const IMAGE: &str = concat!("ghcr.io/tidegate/tidegate:v", env!("CARGO_PKG_VERSION"));
/// The Deployment (and ServiceAccount) running the controllers.
pub const DEPLOYMENT: &str = "tidegate-controllers";

/// `tidegate install` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the manifests instead of applying them.
    #[arg(long)]
    export: bool,
    /// Controllers to install.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "source-controller,kustomize-controller,helm-controller,notification-controller"
    )]
    components: Vec<String>,
    /// Controllers in addition to `--components` (Flux's flag), e.g.
    /// `image-reflector-controller,image-automation-controller,source-watcher`.
    #[arg(long, value_delimiter = ',')]
    components_extra: Vec<String>,
    /// Lock the controllers down for multi-tenancy as Flux's setup does: no cross-namespace
    /// references, no remote bases, Kustomizations and HelmReleases without a
    /// `serviceAccountName` impersonate their namespace's `default` service account.
    #[arg(long)]
    multi_tenant: bool,
    #[command(flatten)]
    global: Global,
}

/// The service accounts Flux's controllers run as and Kustomizations impersonate: ours runs
/// the controllers; `kustomize-controller` and `helm-controller` are what Flux's multi-tenancy
/// setup names in the `flux-system` Kustomization's `serviceAccountName`.
pub const SERVICE_ACCOUNTS: [&str; 3] = [DEPLOYMENT, "kustomize-controller", "helm-controller"];

/// The API groups of the toolkit, as Flux's `flux-view`/`flux-edit` and `crd-controller`
/// roles list them.
const TOOLKIT_GROUPS: [&str; 6] = [
    "notification.toolkit.fluxcd.io",
    "source.toolkit.fluxcd.io",
    "source.extensions.fluxcd.io",
    "helm.toolkit.fluxcd.io",
    "image.toolkit.fluxcd.io",
    "kustomize.toolkit.fluxcd.io",
];

/// Flux's RBAC (`manifests/rbac`), named as `flux install` names it in `namespace`: the
/// service accounts; `crd-controller-<ns>` (what every controller needs) and
/// `cluster-reconciler-<ns>` (cluster-admin, for the reconcilers, whose tenants' syncs are
/// confined by impersonation) bound to them; `flux-view-<ns>` and `flux-edit-<ns>`, which
/// aggregate the toolkit's kinds into `view`, `edit` and `admin`.
pub fn rbac_manifests(namespace: &str) -> String {
    let labels = format!(
        "    app.kubernetes.io/instance: {namespace}\n    app.kubernetes.io/part-of: tidegate\n"
    );
    let subjects: String = SERVICE_ACCOUNTS
        .iter()
        .map(|sa| format!("- kind: ServiceAccount\n  name: {sa}\n  namespace: {namespace}\n"))
        .collect();
    let groups: String = TOOLKIT_GROUPS
        .iter()
        .map(|g| format!("  - {g}\n"))
        .collect();
    let crd_rules: String = TOOLKIT_GROUPS
        .iter()
        .map(|g| format!("- apiGroups: ['{g}']\n  resources: ['*']\n  verbs: ['*']\n"))
        .collect();
    let mut docs: Vec<String> = SERVICE_ACCOUNTS
        .iter()
        .map(|sa| {
            format!(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {sa}\n  namespace: {namespace}\n  labels:\n{labels}"
            )
        })
        .collect();
    docs.push(format!(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: crd-controller-{namespace}
  labels:
{labels}rules:
{crd_rules}- apiGroups: ['']
  resources: [namespaces, secrets, configmaps, serviceaccounts]
  verbs: [get, list, watch]
- apiGroups: ['']
  resources: [events]
  verbs: [create, patch]
- apiGroups: ['']
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: ['']
  resources: [configmaps/status]
  verbs: [get, update, patch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: ['']
  resources: [serviceaccounts/token]
  verbs: [create]
- nonResourceURLs: [/livez/ping]
  verbs: [head]
"
    ));
    for (name, role) in [
        ("crd-controller", "crd-controller-{ns}"),
        ("cluster-reconciler", "cluster-admin"),
    ] {
        let role = role.replace("{ns}", namespace);
        docs.push(format!(
            "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {name}-{namespace}
  labels:
{labels}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {role}
subjects:
{subjects}"
        ));
    }
    for (name, aggregate, verbs) in [
        (
            "flux-edit",
            ["admin", "edit"].as_slice(),
            "[create, delete, deletecollection, patch, update]",
        ),
        (
            "flux-view",
            ["admin", "edit", "view"].as_slice(),
            "[get, list, watch]",
        ),
    ] {
        let aggregate: String = aggregate
            .iter()
            .map(|a| format!("    rbac.authorization.k8s.io/aggregate-to-{a}: \"true\"\n"))
            .collect();
        docs.push(format!(
            "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {name}-{namespace}
  labels:
{labels}{aggregate}rules:
- apiGroups:
{groups}  resources: ['*']
  verbs: {verbs}
"
        ));
    }
    docs.iter()
        .map(|d| d.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The controllers' flags that lock a multi-tenant installation down, as Flux's multi-tenancy
/// setup patches them in.
pub const MULTI_TENANT_ARGS: [&str; 3] = [
    "--no-cross-namespace-refs=true",
    "--no-remote-bases=true",
    "--default-service-account=default",
];

/// Every manifest of an installation in `namespace`, as one YAML stream; `multi_tenant` adds
/// the lockdown flags.
pub fn manifests(namespace: &str, components: &[String], multi_tenant: bool) -> String {
    let labels = format!(
        "    app.kubernetes.io/instance: {namespace}\n    app.kubernetes.io/part-of: tidegate\n"
    );
    let ns = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n  labels:\n{labels}"
    );
    let rbac = rbac_manifests(namespace);
    let service = |name: &str, target_port: &str| {
        format!(
            "apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {namespace}
  labels:
{labels}spec:
  type: ClusterIP
  selector:
    app: {DEPLOYMENT}
  ports:
  - name: http
    port: 80
    protocol: TCP
    targetPort: {target_port}
"
        )
    };
    let notification = components.iter().any(|c| c == NOTIFICATION);
    // Flux's notification-controller Services: events in on :9090 (shared with the artifact
    // server, which answers GETs), webhooks in on :9292.
    let notification_services = [
        service("notification-controller", "http"),
        service("webhook-receiver", "http-webhook"),
    ];
    let (notification_args, notification_port) = if notification {
        (
            "        - --events-addr=http://notification-controller.$(RUNTIME_NAMESPACE).svc.cluster.local./
        - --receiver-addr=:9292
",
            "        - containerPort: 9292
          name: http-webhook
          protocol: TCP
",
        )
    } else {
        ("", "")
    };
    let deployment = format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {DEPLOYMENT}
  namespace: {namespace}
  labels:
{labels}spec:
  replicas: 1
  selector:
    matchLabels:
      app: {DEPLOYMENT}
  template:
    metadata:
      labels:
        app: {DEPLOYMENT}
    spec:
      serviceAccountName: {DEPLOYMENT}
      terminationGracePeriodSeconds: 10
      containers:
      - name: manager
        image: {IMAGE}
        args:
        - controllers
        - --components={components}
        - --enable-leader-election
        - --watch-all-namespaces=true
        - --log-json
        - --storage-path=/data
        - --storage-addr=:9090
        - --storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local.
{notification_args}{lockdown}        env:
        - name: RUNTIME_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        ports:
        - containerPort: 9090
          name: http
          protocol: TCP
{notification_port}        - containerPort: 8080
          name: http-prom
          protocol: TCP
        - containerPort: 9440
          name: healthz
          protocol: TCP
        livenessProbe:
          httpGet:
            path: /healthz
            port: healthz
        readinessProbe:
          httpGet:
            path: /readyz
            port: healthz
        resources:
          limits:
            cpu: 1000m
            memory: 1Gi
          requests:
            cpu: 100m
            memory: 64Mi
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          runAsNonRoot: true
          capabilities:
            drop: [ALL]
        volumeMounts:
        - name: data
          mountPath: /data
        - name: tmp
          mountPath: /tmp
      volumes:
      - name: data
        emptyDir: {{}}
      - name: tmp
        emptyDir: {{}}
",
        components = components.join(","),
        lockdown = if multi_tenant {
            MULTI_TENANT_ARGS
                .iter()
                .map(|a| format!("        - {a}\n"))
                .collect::<String>()
        } else {
            String::new()
        },
    );
    let mut docs = vec![
        ns,
        tidegate_api::crds::stream(),
        rbac,
        service("source-controller", "http"),
    ];
    if notification {
        docs.extend(notification_services);
    }
    docs.push(deployment);
    docs.iter()
        .map(|d| d.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n---\n")
        + "\n"
}

/// Refuses components other than source-controller, kustomize-controller, helm-controller,
/// notification-controller, source-watcher, image-reflector-controller and
/// image-automation-controller.
pub fn check_components(components: &[String]) -> anyhow::Result<()> {
    for c in components {
        if ![
            SOURCE,
            KUSTOMIZE,
            HELM,
            NOTIFICATION,
            WATCHER,
            IMAGE_REFLECTOR,
            IMAGE_AUTOMATION,
        ]
        .contains(&c.as_str())
        {
            anyhow::bail!(
                "unknown component {c:?} (available: {SOURCE}, {KUSTOMIZE}, {HELM}, {NOTIFICATION}, {WATCHER}, {IMAGE_REFLECTOR}, {IMAGE_AUTOMATION})"
            );
        }
    }
    Ok(())
}

impl Args {
    /// `--components` then `--components-extra`, each once.
    fn all_components(&self) -> Vec<String> {
        let mut all = self.components.clone();
        for c in &self.components_extra {
            if !c.is_empty() && !all.contains(c) {
                all.push(c.clone());
            }
        }
        all
    }
}

/// Prints the manifests (`--export`); no cluster needed.
pub fn export(args: &Args) -> anyhow::Result<bool> {
    let components = args.all_components();
    check_components(&components)?;
    if args.export {
        print!(
            "{}",
            manifests(&args.global.namespace, &components, args.multi_tenant)
        );
    }
    Ok(args.export)
}

/// Applies the manifests and waits for the controllers.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.global.cluster.client().await?;
    let ns = &args.global.namespace;
    action(&format!("installing components in {ns} namespace"));
    let components = args.all_components();
    let objects: Vec<Value> =
        tidegate_core::yaml::parse_stream(&manifests(ns, &components, args.multi_tenant))
            .map_err(|e| anyhow::anyhow!("the built-in manifests: {e}"))?;
    let cs = crate::cluster::apply(&client, objects, "installing").await?;
    let manager = ResourceManager::new(client, crate::cluster::manager_options());
    for e in &cs.entries {
        eprintln!("{e}");
    }
    success("install finished");
    waiting("verifying installation");
    let deployment = (
        tidegate_core::ObjectRef::new("apps", "Deployment", ns, DEPLOYMENT),
        "apps/v1".to_string(),
    );
    manager
        .wait(
            &[deployment],
            &WaitOptions {
                timeout: args.global.timeout,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    success(&format!("{DEPLOYMENT}: deployment ready"));
    success("install finished");
    Ok(())
}
