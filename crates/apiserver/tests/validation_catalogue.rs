//! Invalid built-in objects, each answered with kube-apiserver's code, reason and message
//! (Kubernetes 1.34+ value rendering), and none of them stored. The cases and their messages
//! are taken from Kubernetes' validation code and tests.

mod common;

use serde_json::{Value, json};

const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// `base` with the JSON merge patch `patch` applied.
fn with(base: &Value, patch: Value) -> Value {
    let mut out = base.clone();
    json_patch::merge(&mut out, &patch);
    out
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
}

fn containers(list: Value) -> Value {
    with(
        &deployment(),
        json!({"spec": {"template": {"spec": {"containers": list}}}}),
    )
}

fn pod_spec(patch: Value) -> Value {
    with(
        &deployment(),
        json!({"spec": {"template": {"spec": patch}}}),
    )
}

fn service(patch: Value) -> Value {
    with(
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
        patch,
    )
}

fn job(patch: Value) -> Value {
    with(
        &json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "pi", "image": "perl"}]}}}}),
        patch,
    )
}

fn cron(schedule: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
}

fn ingress_path(path: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
        "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [path]}}]}})
}

fn collection(obj: &Value) -> String {
    let api_version = obj["apiVersion"].as_str().unwrap_or("v1");
    let kind = obj["kind"].as_str().unwrap_or("");
    let plural = match kind {
        "Ingress" => "ingresses".to_string(),
        "NetworkPolicy" => "networkpolicies".to_string(),
        "PodDisruptionBudget" => "poddisruptionbudgets".to_string(),
        "HorizontalPodAutoscaler" => "horizontalpodautoscalers".to_string(),
        k => format!("{}s", k.to_lowercase()),
    };
    let base = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    let namespaced = !matches!(kind, "Namespace" | "ClusterRole" | "ClusterRoleBinding");
    if namespaced {
        format!("{base}/namespaces/default/{plural}")
    } else {
        format!("{base}/{plural}")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_built_in_objects_get_kube_apiserver_messages() {
    let d = "Deployment.apps \"web\" is invalid: ";
    let c = "spec.template.spec.containers[0]";
    let cases: Vec<(Value, String)> = vec![
        (
            with(&deployment(), json!({"spec": {"template": {"metadata": {"labels": {"app": "x"}}}}})),
            format!("{d}spec.template.metadata.labels: Invalid value: {{\"app\":\"x\"}}: `selector` does not match template `labels`"),
        ),
        (
            with(&deployment(), json!({"spec": {"selector": null}})),
            format!("{d}[spec.selector: Required value, spec.template.metadata.labels: Invalid value: {{\"app\":\"web\"}}: `selector` does not match template `labels`]"),
        ),
        (containers(json!([])), format!("{d}spec.template.spec.containers: Required value")),
        (containers(json!([{"name": "app"}])), format!("{d}{c}.image: Required value")),
        (
            with(&deployment(), json!({"spec": {"replicas": -1}})),
            format!("{d}spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ),
        (
            with(&containers(json!([{"name": "app"}])), json!({"spec": {"replicas": -1}})),
            format!("{d}[spec.replicas: Invalid value: -1: must be greater than or equal to 0, {c}.image: Required value]"),
        ),
        (
            containers(json!([{"name": "Web_App", "image": "nginx"}])),
            format!("{d}{c}.name: Invalid value: \"Web_App\": {DNS1123_LABEL}"),
        ),
        (
            containers(json!([{"name": "my.app", "image": "nginx"}])),
            format!("{d}{c}.name: Invalid value: \"my.app\": must not contain dots"),
        ),
        (
            containers(json!([{"name": "app", "image": "a"}, {"name": "app", "image": "b"}])),
            format!("{d}spec.template.spec.containers[1].name: Duplicate value: \"app\""),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "ports": [{"containerPort": 0}]}])),
            format!("{d}{c}.ports[0].containerPort: Required value"),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "ports": [{"containerPort": 70000}]}])),
            format!("{d}{c}.ports[0].containerPort: Invalid value: 70000: {PORT_RANGE}"),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "ports": [{"name": "http_web", "containerPort": 80}]}])),
            format!("{d}{c}.ports[0].name: Invalid value: \"http_web\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "ports": [
                {"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]}])),
            format!("{d}{c}.ports[1].name: Duplicate value: \"http\""),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}])),
            format!("{d}{c}.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""),
        ),
        (
            pod_spec(json!({"restartPolicy": "Never"})),
            format!("{d}spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "imagePullPolicy": "Sometimes"}])),
            format!("{d}{c}.imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx",
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}])),
            format!("{d}{c}.resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "env": [{"name": "MY=VAR", "value": "x"}]}])),
            format!("{d}{c}.env[0].name: Invalid value: \"MY=VAR\": a valid environment variable name must consist only of printable ASCII characters other than '='"),
        ),
        (
            containers(json!([{"name": "app", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}])),
            format!("{d}{c}.volumeMounts[0].name: Not found: \"data\""),
        ),
        (
            with(&deployment(), json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": "150%"}}}})),
            format!("{d}spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"),
        ),
        (
            with(&deployment(), json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}}})),
            format!("{d}spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"),
        ),
        (
            with(&deployment(), json!({"spec": {"selector": {"matchLabels": null}}})),
            format!("{d}spec.selector: Invalid value: {{}}: empty selector is invalid for deployment"),
        ),
        (
            with(&deployment(), json!({"spec": {"minReadySeconds": 10, "progressDeadlineSeconds": 5}})),
            format!("{d}spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"),
        ),
        (
            pod_spec(json!({"activeDeadlineSeconds": 10})),
            format!("{d}spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"),
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                "spec": {"serviceName": "db", "podManagementPolicy": "Sequential",
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                        "spec": {"containers": [{"name": "db", "image": "postgres"}]}}}}),
            "StatefulSet.apps \"db\" is invalid: spec.podManagementPolicy: Invalid value: \"Sequential\": must be 'OrderedReady' or 'Parallel'".into(),
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "web"},
                "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}),
            "DaemonSet.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`".into(),
        ),
        (
            job(json!({"spec": {"template": {"spec": {"restartPolicy": "Always"}}}})),
            "Job.batch \"pi\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"".into(),
        ),
        (
            job(json!({"spec": {"backoffLimit": -1}})),
            "Job.batch \"pi\" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0".into(),
        ),
        (
            job(json!({"spec": {"completionMode": "Foo"}})),
            "Job.batch \"pi\" is invalid: spec.completionMode: Unsupported value: \"Foo\": supported values: \"NonIndexed\", \"Indexed\"".into(),
        ),
        (
            cron("bad"),
            "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"bad\": expected exactly 5 fields, found 1: [bad]".into(),
        ),
        (
            cron("* * * * * *"),
            "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"* * * * * *\": expected exactly 5 fields, found 6: [* * * * * *]".into(),
        ),
        (
            cron("61 * * * *"),
            "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61".into(),
        ),
        (
            cron("@foo"),
            "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"@foo\": unrecognized descriptor: @foo".into(),
        ),
        (
            cron("CRON_TZ=UTC 0 * * * *"),
            "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"CRON_TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"restartPolicy": "always", "containers": [{"name": "app", "image": "nginx"}]}}),
            "Pod \"web\" is invalid: spec.restartPolicy: Unsupported value: \"always\": supported values: \"Always\", \"OnFailure\", \"Never\"".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}],
                    "containers": [{"name": "app", "image": "nginx"}]}}),
            "Pod \"web\" is invalid: spec.volumes[1].name: Duplicate value: \"v\"".into(),
        ),
        (
            service(json!({"spec": {"ports": []}})),
            "Service \"web\" is invalid: spec.ports: Required value".into(),
        ),
        (
            service(json!({"spec": {"ports": [{"port": 70000}]}})),
            format!("Service \"web\" is invalid: [spec.ports[0].port: Invalid value: 70000: {PORT_RANGE}, spec.ports[0].targetPort: Invalid value: 70000: {PORT_RANGE}]"),
        ),
        (
            service(json!({"spec": {"ports": [{"port": 80}, {"port": 81}]}})),
            "Service \"web\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]".into(),
        ),
        (
            service(json!({"spec": {"type": "ExternalName", "ports": null}})),
            "Service \"web\" is invalid: spec.externalName: Required value".into(),
        ),
        (
            service(json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}})),
            "Service \"web\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767".into(),
        ),
        (
            service(json!({"spec": {"ports": [{"port": 80, "nodePort": 30080}]}})),
            "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'".into(),
        ),
        (
            service(json!({"spec": {"sessionAffinity": "Sticky"}})),
            "Service \"web\" is invalid: spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"".into(),
        ),
        (
            ingress_path(json!({"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}})),
            "Ingress.networking.k8s.io \"web\" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified".into(),
        ),
        (
            ingress_path(json!({"path": "foo", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 80}}}})),
            "Ingress.networking.k8s.io \"web\" is invalid: spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path".into(),
        ),
        (
            ingress_path(json!({"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web"}}})),
            "Ingress.networking.k8s.io \"web\" is invalid: spec.rules[0].http.paths[0].backend: Required value: port name or number is required".into(),
        ),
        (
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
                "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 70000}]}]}}),
            format!("NetworkPolicy.networking.k8s.io \"np\" is invalid: spec.ingress[0].ports[0].port: Invalid value: 70000: {PORT_RANGE}"),
        ),
        (
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
                "spec": {"podSelector": {}, "ingress": [{"from": [{}]}]}}),
            "NetworkPolicy.networking.k8s.io \"np\" is invalid: spec.ingress[0].from[0]: Required value: must specify a peer".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"bad key": "v"}}),
            format!("ConfigMap \"cm\" is invalid: data[bad key]: Invalid value: \"bad key\": {CONFIG_KEY}"),
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"..x": "v"}}),
            "ConfigMap \"cm\" is invalid: data[..x]: Invalid value: \"..x\": must not start with '..'".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/tls"}),
            "Secret \"s\" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]".into(),
        ),
        (
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
                "rules": [{"apiGroups": [""], "resources": ["pods"]}]}),
            "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: verbs must contain at least one value".into(),
        ),
        (
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Foo", "name": "r"}}),
            "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: roleRef.kind: Unsupported value: \"Foo\": supported values: \"Role\", \"ClusterRole\"".into(),
        ),
        (
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
                "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "Robot", "name": "x"}]}),
            "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"".into(),
        ),
        (
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 5, "maxReplicas": 2}}),
            "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`".into(),
        ),
        (
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "maxReplicas": 0}}),
            "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.maxReplicas: Invalid value: 0: must be greater than 0, spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`]".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"}, "spec": {}}),
            "PersistentVolumeClaim \"pvc\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"},
                "spec": {"accessModes": ["ReadWriteAlways"], "resources": {"requests": {"storage": "1Gi"}}}}),
            "PersistentVolumeClaim \"pvc\" is invalid: spec.accessModes: Unsupported value: \"ReadWriteAlways\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"".into(),
        ),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let t = common::start().await;
    let client = t.client().await;
    let before = t.server.state().store.revision();
    let mut failures = Vec::new();
    for (obj, want) in &cases {
        let req = axum::http::Request::post(collection(obj))
            .header("content-type", "application/json")
            .body(obj.to_string().into_bytes())
            .expect("request");
        match client.request_text(req).await {
            Err(kube::Error::Api(s))
                if s.code == 422 && s.reason == "Invalid" && &s.message == want => {}
            Err(kube::Error::Api(s)) => failures.push(format!(
                "{}: got {} {}: {}\n   want 422 Invalid: {want}",
                obj["kind"], s.code, s.reason, s.message
            )),
            Ok(body) => failures.push(format!("{}: accepted: {body}\n   want {want}", obj["kind"])),
            Err(e) => failures.push(format!("{}: {e}", obj["kind"])),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert_eq!(
        t.server.state().store.revision(),
        before,
        "nothing was stored"
    );
}

/// An update that changes a RoleBinding's roleRef is refused.
#[tokio::test(flavor = "multi_thread")]
async fn role_refs_cannot_change() {
    let t = common::start().await;
    t.ok(&["create", "rolebinding", "rb", "--role=a", "--user=u"]);
    let err = t.fails(&[
        "patch",
        "rolebinding",
        "rb",
        "--type=merge",
        "-p",
        r#"{"roleRef":{"name":"b"}}"#,
    ]);
    assert!(
        err.contains(r#"roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"b"}: cannot change roleRef"#),
        "{err}"
    );
}

/// A value of the wrong type for its Go field is a 400 with Go's decoding error.
#[tokio::test(flavor = "multi_thread")]
async fn type_errors_are_refused_as_go_decodes_them() {
    let t = common::start().await;
    let client = t.client().await;
    let cases = [
        (
            with(&deployment(), json!({"spec": {"replicas": "two"}})),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            containers(
                json!([{"name": "app", "image": "nginx", "ports": [{"containerPort": "80"}]}]),
            ),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32",
        ),
        (
            service(json!({"spec": {"ports": {"port": 80}}})),
            "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal object into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": {"a": "b"}}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct field ConfigMap.data of type string",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"enabled": true}}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string",
        ),
    ];
    let before = t.server.state().store.revision();
    for (obj, want) in cases {
        let req = axum::http::Request::post(collection(&obj))
            .header("content-type", "application/json")
            .body(obj.to_string().into_bytes())
            .expect("request");
        match client.request_text(req).await {
            Err(kube::Error::Api(s)) => {
                assert_eq!(
                    (s.code, s.reason.as_str()),
                    (400, "BadRequest"),
                    "{}",
                    s.message
                );
                assert_eq!(s.message, want);
            }
            other => panic!("{want}: got {other:?}"),
        }
    }
    assert_eq!(
        t.server.state().store.revision(),
        before,
        "nothing was stored"
    );
    // kubectl shows the same message.
    let err = t.fails_stdin(
        &["create", "--validate=false", "-f", "-"],
        &with(&deployment(), json!({"spec": {"replicas": "two"}})).to_string(),
    );
    assert!(err.contains("cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"), "{err}");
}
