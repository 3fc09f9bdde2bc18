//! `tidegate install [--export] [--components …]`: the Namespace, the CRDs, RBAC, the artifact
//! Service and the controllers' Deployment (running `tidegate controllers`), printed for
//! `kubectl apply --server-side -f -` or applied with the apply manager and waited for.

use serde_json::Value;
use tidegate_apply::{ResourceManager, WaitOptions};

use crate::controllers::{HELM, KUSTOMIZE, NOTIFICATION, SOURCE, WATCHER};
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
    #[command(flatten)]
    global: Global,
}

/// Every manifest of an installation in `namespace`, as one YAML stream.
pub fn manifests(namespace: &str, components: &[String]) -> String {
    let labels = format!(
        "    app.kubernetes.io/instance: {namespace}\n    app.kubernetes.io/part-of: tidegate\n"
    );
    let ns = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n  labels:\n{labels}"
    );
    let rbac = format!(
        "apiVersion: v1
kind: ServiceAccount
metadata:
  name: {DEPLOYMENT}
  namespace: {namespace}
  labels:
{labels}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-reconciler-{namespace}
  labels:
{labels}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: ServiceAccount
  name: {DEPLOYMENT}
  namespace: {namespace}
"
    );
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
{notification_args}        env:
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
        components = components.join(",")
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
/// notification-controller and source-watcher.
pub fn check_components(components: &[String]) -> anyhow::Result<()> {
    for c in components {
        if ![SOURCE, KUSTOMIZE, HELM, NOTIFICATION, WATCHER].contains(&c.as_str()) {
            anyhow::bail!(
                "unknown component {c:?} (available: {SOURCE}, {KUSTOMIZE}, {HELM}, {NOTIFICATION}, {WATCHER})"
            );
        }
    }
    Ok(())
}

/// Prints the manifests (`--export`); no cluster needed.
pub fn export(args: &Args) -> anyhow::Result<bool> {
    check_components(&args.components)?;
    if args.export {
        print!("{}", manifests(&args.global.namespace, &args.components));
    }
    Ok(args.export)
}

/// Applies the manifests and waits for the controllers.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.global.cluster.client().await?;
    let ns = &args.global.namespace;
    action(&format!("installing components in {ns} namespace"));
    let objects: Vec<Value> = tidegate_core::yaml::parse_stream(&manifests(ns, &args.components))
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
