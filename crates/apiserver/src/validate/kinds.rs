//! Rules per kind.

use super::{Causes, items, pod, s, selector_empty, selector_matches};
use serde_json::{Value, json};

pub(super) fn validate(v: &mut Causes, group: &str, kind: &str, obj: &Value, old: Option<&Value>) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    match (group, kind) {
        ("", "Pod") => {
            pod::spec(v, "spec", &spec);
            pod::only_for_pod(v, &spec);
        }
        ("apps", "Deployment" | "ReplicaSet") => {
            v.non_negative("spec.replicas", spec.get("replicas"));
            selector_and_template(v, &spec, "deployment", true);
            if kind == "Deployment" {
                deployment_strategy(v, &spec);
                let min_ready = spec
                    .get("minReadySeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if let Some(p) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64)
                    && p <= min_ready
                {
                    v.invalid(
                        "spec.progressDeadlineSeconds",
                        &json!(p),
                        "must be greater than minReadySeconds",
                    );
                }
            }
        }
        ("apps", "StatefulSet") => stateful_set(v, &spec),
        ("apps", "DaemonSet") => selector_and_template(v, &spec, "daemonset", false),
        ("batch", "Job") => job_spec(v, "spec", &spec),
        ("batch", "CronJob") => cron_job(v, obj, &spec, old.is_none()),
        ("", "Service") => service(v, &spec),
        ("networking.k8s.io", "Ingress") => ingress(v, &spec),
        ("networking.k8s.io", "NetworkPolicy") => network_policy(v, &spec),
        ("", "ConfigMap") => {
            config_keys(v, obj, "data");
            config_keys(v, obj, "binaryData");
            // The whole object's path (`field.NewPath("")`) prints as `[]`.
            if stored_size(obj, "data", false) + stored_size(obj, "binaryData", true) > MAX_SIZE {
                v.too_long("[]", MAX_SIZE);
            }
        }
        ("", "Event") => event(v, obj),
        ("", "Secret") => secret(v, obj, old),
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => rules(v, obj, kind == "Role"),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            binding(v, obj, old, kind == "RoleBinding");
        }
        ("autoscaling", "HorizontalPodAutoscaler") => hpa(v, &spec),
        ("policy", "PodDisruptionBudget") => pdb(v, &spec),
        ("", "PersistentVolumeClaim") => pvc(v, &spec),
        _ => {}
    }
}

/// The selector, the template's labels matching it, the pod spec, and the restart policy a
/// controller allows (`Always`).
fn selector_and_template(v: &mut Causes, spec: &Value, what: &str, selector_required: bool) {
    selector_matching_template(v, spec, what, selector_required);
    if let Some(pod_spec) = spec.pointer("/template/spec") {
        pod::spec(v, "spec.template.spec", pod_spec);
        let owner = if what == "daemonset" {
            "DaemonSet"
        } else {
            "ReplicaSet"
        };
        long_running(v, pod_spec, owner);
    }
}

/// The selector (required, not empty) and the template's labels matching it; a missing
/// selector matches nothing, as `LabelSelectorAsSelector(nil)` does.
fn selector_matching_template(v: &mut Causes, spec: &Value, what: &str, selector_required: bool) {
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None if selector_required => v.required("spec.selector"),
        Some(sel) if selector_empty(sel) => {
            v.invalid(
                "spec.selector",
                &json!({}),
                &format!("empty selector is invalid for {what}"),
            );
        }
        _ => {}
    }
    let labels = spec.pointer("/template/metadata/labels");
    let matches = selector.is_some_and(|sel| selector_empty(sel) || selector_matches(sel, labels));
    if !matches {
        v.invalid(
            "spec.template.metadata.labels",
            labels.unwrap_or(&Value::Null),
            "`selector` does not match template `labels`",
        );
    }
}

/// What a controller that keeps its pods running allows of their spec: `restartPolicy:
/// Always` and no `activeDeadlineSeconds` (`owner` names the controller as kube's message does).
fn long_running(v: &mut Causes, pod_spec: &Value, owner: &str) {
    match pod_spec.get("restartPolicy").and_then(Value::as_str) {
        None | Some("Always") => {}
        Some(other) => v.not_supported(
            "spec.template.spec.restartPolicy",
            &json!(other),
            &["Always"],
        ),
    }
    if pod_spec
        .get("activeDeadlineSeconds")
        .is_some_and(|d| !d.is_null())
    {
        v.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {owner} is not Supported"),
        );
    }
}

/// `ValidateStatefulSetSpec`: kube-apiserver does not validate a StatefulSet's pod spec (its
/// containers may mount the volumeClaimTemplates, which are not among the template's volumes);
/// it checks the selector against the template's labels, the restart policy and
/// `activeDeadlineSeconds`.
fn stateful_set(v: &mut Causes, spec: &Value) {
    if let Some(p) = spec.get("podManagementPolicy").and_then(Value::as_str)
        && p != "OrderedReady"
        && p != "Parallel"
    {
        v.invalid(
            "spec.podManagementPolicy",
            &json!(p),
            "must be 'OrderedReady' or 'Parallel'",
        );
    }
    for key in ["whenDeleted", "whenScaled"] {
        v.one_of(
            &format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
            spec.pointer(&format!("/persistentVolumeClaimRetentionPolicy/{key}")),
            &["Retain", "Delete"],
        );
    }
    v.non_negative("spec.replicas", spec.get("replicas"));
    selector_matching_template(v, spec, "statefulset", true);
    if let Some(pod_spec) = spec.pointer("/template/spec") {
        long_running(v, pod_spec, "StatefulSet");
    }
}

/// A percentage or count of a rolling update (`maxSurge`, `maxUnavailable`).
fn int_or_percent(v: &mut Causes, field: &str, value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => {
            let n = n.as_i64()?;
            if n < 0 {
                v.invalid(field, &json!(n), "must be greater than or equal to 0");
            }
            Some(n)
        }
        Value::String(p) => {
            let Some(num) = p.strip_suffix('%').and_then(|n| n.parse::<i64>().ok()) else {
                v.invalid(
                    field,
                    &json!(p),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                );
                return None;
            };
            Some(num)
        }
        _ => None,
    }
}

fn deployment_strategy(v: &mut Causes, spec: &Value) {
    if s(spec.get("strategy").unwrap_or(&Value::Null), "type") != Some("RollingUpdate") {
        return;
    }
    let base = "spec.strategy.rollingUpdate";
    let unavailable = spec.pointer("/strategy/rollingUpdate/maxUnavailable");
    let surge = spec.pointer("/strategy/rollingUpdate/maxSurge");
    let u = int_or_percent(v, &format!("{base}.maxUnavailable"), unavailable);
    let g = int_or_percent(v, &format!("{base}.maxSurge"), surge);
    if let (Some(Value::String(_)), Some(n)) = (unavailable, u)
        && n > 100
    {
        v.invalid(
            &format!("{base}.maxUnavailable"),
            unavailable.unwrap_or(&Value::Null),
            "must not be greater than 100%",
        );
    }
    if u == Some(0) && g == Some(0) {
        v.invalid(
            &format!("{base}.maxUnavailable"),
            unavailable.unwrap_or(&Value::Null),
            "may not be 0 when `maxSurge` is 0",
        );
    }
}

fn job_spec(v: &mut Causes, path: &str, spec: &Value) {
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        v.non_negative(&format!("{path}.{key}"), spec.get(key));
    }
    v.one_of(
        &format!("{path}.completionMode"),
        spec.get("completionMode"),
        &["NonIndexed", "Indexed"],
    );
    if spec.get("completionMode") == Some(&json!("Indexed"))
        && spec.get("completions").is_none_or(Value::is_null)
    {
        v.required_because(
            &format!("{path}.completions"),
            "when completion mode is Indexed",
        );
    }
    if let Some(pod_spec) = spec.pointer("/template/spec") {
        let at = format!("{path}.template.spec");
        pod::spec(v, &at, pod_spec);
        match pod_spec.get("restartPolicy").and_then(Value::as_str) {
            Some("OnFailure" | "Never") => {}
            Some(p) if !matches!(p, "Always") => {
                v.not_supported(
                    &format!("{at}.restartPolicy"),
                    &json!(p),
                    &["OnFailure", "Never"],
                );
            }
            _ => v.required_because(
                &format!("{at}.restartPolicy"),
                "valid values: \"OnFailure\", \"Never\"",
            ),
        }
    }
}

/// `ValidateCronJobCreate`/`Update`: the spec in kube's order, then (on create only) the name's
/// length, which leaves room for the Jobs' suffix.
fn cron_job(v: &mut Causes, obj: &Value, spec: &Value, create: bool) {
    match spec
        .get("schedule")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        None => v.required("spec.schedule"),
        Some(schedule) => {
            if let Err(why) = check_schedule(schedule) {
                v.invalid("spec.schedule", &json!(schedule), &why);
            }
        }
    }
    v.non_negative(
        "spec.startingDeadlineSeconds",
        spec.get("startingDeadlineSeconds"),
    );
    v.one_of(
        "spec.concurrencyPolicy",
        spec.get("concurrencyPolicy"),
        &["Allow", "Forbid", "Replace"],
    );
    if let Some(job) = spec.pointer("/jobTemplate/spec") {
        job_spec(v, "spec.jobTemplate.spec", job);
    }
    v.non_negative(
        "spec.successfulJobsHistoryLimit",
        spec.get("successfulJobsHistoryLimit"),
    );
    v.non_negative(
        "spec.failedJobsHistoryLimit",
        spec.get("failedJobsHistoryLimit"),
    );
    if create
        && let Some(name) = obj.pointer("/metadata/name").and_then(Value::as_str)
        && name.len() > 52
    {
        v.invalid(
            "metadata.name",
            &json!(name),
            "must be no more than 52 characters",
        );
    }
}

/// A standard cron schedule as robfig/cron's `ParseStandard` reads it.
fn check_schedule(schedule: &str) -> Result<(), String> {
    if schedule.contains("TZ=") {
        return Err("cannot use TZ or CRON_TZ in schedule, use timeZone field instead".into());
    }
    if let Some(d) = schedule.strip_prefix('@') {
        return match d {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ if d.starts_with("every ") => Ok(()),
            _ => Err(format!("unrecognized descriptor: {schedule}")),
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let bounds = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)];
    let names: [&[&str]; 5] = [
        &[],
        &[],
        &[],
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
        &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    ];
    for ((field, (min, max)), names) in fields.iter().zip(bounds).zip(names) {
        for part in field.split(',') {
            let (range, step) = match part.split_once('/') {
                Some((r, st)) => (r, Some(st)),
                None => (part, None),
            };
            if let Some(st) = step {
                st.parse::<u32>().map_err(|_| {
                    format!("failed to parse int from {st}: strconv.Atoi: parsing \"{st}\": invalid syntax")
                })?;
            }
            if range == "*" || range == "?" {
                continue;
            }
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (a, Some(b)),
                None => (range, None),
            };
            let num = |t: &str| -> Result<i64, String> {
                if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(t)) {
                    return Ok(i as i64 + if names.len() == 12 { 1 } else { 0 });
                }
                t.parse::<i64>().map_err(|_| {
                    format!("failed to parse int from {t}: strconv.Atoi: parsing \"{t}\": invalid syntax")
                })
            };
            let start = num(lo)?;
            let end = match hi {
                Some(h) => num(h)?,
                None => start,
            };
            if start < min {
                return Err(format!(
                    "beginning of range ({start}) below minimum ({min}): {part}"
                ));
            }
            if end > max {
                return Err(format!(
                    "end of range ({end}) above maximum ({max}): {part}"
                ));
            }
            if start > end {
                return Err(format!(
                    "beginning of range ({start}) beyond end of range ({end}): {part}"
                ));
            }
        }
    }
    Ok(())
}

fn service(v: &mut Causes, spec: &Value) {
    let ty = s(spec, "type").unwrap_or("ClusterIP");
    if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&ty) {
        v.not_supported(
            "spec.type",
            &json!(ty),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        );
    }
    let ports = items(spec.get("ports"));
    let headless = s(spec, "clusterIP") == Some("None");
    if ty == "ExternalName" {
        // A fully qualified name's trailing dot is allowed: the rest must be a subdomain.
        match s(spec, "externalName")
            .map(|n| n.strip_suffix('.').unwrap_or(n))
            .filter(|n| !n.is_empty())
        {
            None => v.required("spec.externalName"),
            Some(n) if !crate::validation::is_subdomain(n) => {
                v.invalid(
                    "spec.externalName",
                    &json!(n),
                    crate::validation::SUBDOMAIN_MSG,
                );
            }
            _ => {}
        }
    } else if ports.is_empty() && !headless {
        v.required("spec.ports");
    }
    let mut names = std::collections::HashSet::new();
    let mut keys = std::collections::HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        match s(p, "name").filter(|n| !n.is_empty()) {
            None if ports.len() > 1 => v.required(&format!("{at}.name")),
            None => {}
            Some(name) => {
                v.dns_label(&format!("{at}.name"), name);
                if !names.insert(name.to_string()) {
                    v.duplicate(&format!("{at}.name"), &json!(name));
                }
            }
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        v.port_number(&format!("{at}.port"), port);
        v.one_of(
            &format!("{at}.protocol"),
            p.get("protocol"),
            &["SCTP", "TCP", "UDP"],
        );
        match p.get("targetPort") {
            Some(Value::Number(n)) => {
                v.port_number(&format!("{at}.targetPort"), n.as_i64().unwrap_or(0))
            }
            Some(Value::String(name)) => v.port_name(&format!("{at}.targetPort"), name),
            _ => {}
        }
        if let Some(n) = p.get("nodePort").and_then(Value::as_i64)
            && n != 0
        {
            if ty == "ClusterIP" {
                v.forbidden(
                    &format!("{at}.nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                );
            } else if !(30000..=32767).contains(&n) {
                v.invalid(
                    &format!("{at}.nodePort"),
                    &json!(n),
                    "provided port is not in the valid range. The range of valid ports is 30000-32767",
                );
            }
        }
        let key = (s(p, "protocol").unwrap_or("TCP").to_string(), port);
        if !keys.insert(key) {
            v.duplicate(
                &at,
                &json!({"port": port, "protocol": s(p, "protocol").unwrap_or("TCP")}),
            );
        }
    }
    v.one_of(
        "spec.sessionAffinity",
        spec.get("sessionAffinity"),
        &["ClientIP", "None"],
    );
}

fn ingress(v: &mut Causes, spec: &Value) {
    let rules = items(spec.get("rules"));
    if rules.is_empty() && spec.get("defaultBackend").is_none_or(Value::is_null) {
        v.invalid(
            "spec",
            &Value::Null,
            "either `defaultBackend` or `rules` must be specified",
        );
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        if let Some(host) = s(rule, "host").filter(|h| !h.is_empty())
            && host.parse::<std::net::IpAddr>().is_ok()
        {
            v.invalid(
                &format!("{at}.host"),
                &json!(host),
                "must be a DNS name, not an IP address",
            );
        }
        let Some(http) = rule.get("http").filter(|h| !h.is_null()) else {
            continue;
        };
        let paths = items(http.get("paths"));
        if paths.is_empty() {
            v.required(&format!("{at}.http.paths"));
        }
        for (j, p) in paths.iter().enumerate() {
            let pat = format!("{at}.http.paths[{j}]");
            let Some(kind) = s(p, "pathType") else {
                v.required_because(&format!("{pat}.pathType"), "pathType must be specified");
                continue;
            };
            if !["Exact", "ImplementationSpecific", "Prefix"].contains(&kind) {
                v.not_supported(
                    &format!("{pat}.pathType"),
                    &json!(kind),
                    &["Exact", "ImplementationSpecific", "Prefix"],
                );
                continue;
            }
            let path = s(p, "path").unwrap_or("");
            if kind != "ImplementationSpecific" {
                if !path.starts_with('/') {
                    v.invalid(
                        &format!("{pat}.path"),
                        &json!(path),
                        "must be an absolute path",
                    );
                } else if path.contains("//") {
                    v.invalid(
                        &format!("{pat}.path"),
                        &json!(path),
                        "must not contain '//'",
                    );
                }
            }
            let backend = p.get("backend").cloned().unwrap_or(Value::Null);
            match backend.get("service") {
                Some(svc) => {
                    let port = svc.get("port");
                    // An empty name and a zero number are unset, as Go's zero values.
                    let name = port
                        .and_then(|p| p.get("name"))
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty());
                    let number = port
                        .and_then(|p| p.get("number"))
                        .and_then(Value::as_i64)
                        .filter(|n| *n != 0);
                    match (name, number) {
                        (None, None) => v.required_because(
                            &format!("{pat}.backend"),
                            "port name or number is required",
                        ),
                        (Some(_), Some(_)) => v.invalid(
                            &format!("{pat}.backend"),
                            &json!(""),
                            "cannot set both port name & port number",
                        ),
                        (None, Some(n)) => {
                            v.port_number(&format!("{pat}.backend.service.port.number"), n)
                        }
                        _ => {}
                    }
                }
                None if backend.get("resource").is_none() => v.invalid(
                    &format!("{pat}.backend"),
                    &json!(""),
                    "resource or service backend is required",
                ),
                None => {}
            }
        }
    }
}

fn network_policy(v: &mut Causes, spec: &Value) {
    for dir in ["ingress", "egress"] {
        let peers_key = if dir == "ingress" { "from" } else { "to" };
        for (i, rule) in items(spec.get(dir)).iter().enumerate() {
            for (j, p) in items(rule.get("ports")).iter().enumerate() {
                let at = format!("spec.{dir}[{i}].ports[{j}]");
                v.one_of(
                    &format!("{at}.protocol"),
                    p.get("protocol"),
                    &["TCP", "UDP", "SCTP"],
                );
                if let Some(n) = p.get("port").and_then(Value::as_i64) {
                    v.port_number(&format!("{at}.port"), n);
                    if let Some(end) = p.get("endPort").and_then(Value::as_i64)
                        && end < n
                    {
                        v.invalid(
                            &format!("{at}.endPort"),
                            &json!(n),
                            "must be greater than or equal to `port`",
                        );
                    }
                }
            }
            for (j, peer) in items(rule.get(peers_key)).iter().enumerate() {
                let at = format!("spec.{dir}[{i}].{peers_key}[{j}]");
                let set = ["podSelector", "namespaceSelector", "ipBlock"]
                    .iter()
                    .filter(|k| peer.get(**k).is_some_and(|v| !v.is_null()))
                    .count();
                if set == 0 {
                    v.required_because(&at, "must specify a peer");
                } else if peer.get("ipBlock").is_some_and(|b| !b.is_null()) && set > 1 {
                    v.forbidden(&at, "may not specify both ipBlock and another peer");
                }
            }
        }
    }
    for (i, t) in items(spec.get("policyTypes")).iter().enumerate() {
        v.one_of(
            &format!("spec.policyTypes[{i}]"),
            Some(t),
            &["Ingress", "Egress"],
        );
    }
}

fn config_keys(v: &mut Causes, obj: &Value, field: &str) {
    let Some(map) = obj.get(field).and_then(Value::as_object) else {
        return;
    };
    for key in map.keys() {
        let at = format!("{field}[{key}]");
        let k = json!(key);
        if key == "." || key == ".." {
            v.invalid(&at, &k, &format!("must not be '{key}'"));
        } else if key.starts_with("..") {
            v.invalid(&at, &k, "must not start with '..'");
        } else if key.is_empty()
            || !key
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        {
            v.invalid(
                &at,
                &k,
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            );
        }
        if field == "data"
            && obj
                .pointer(&format!(
                    "/binaryData/{}",
                    key.replace('~', "~0").replace('/', "~1")
                ))
                .is_some()
        {
            v.invalid(&at, &k, "duplicate of key present in binaryData");
        }
    }
}

/// The most a ConfigMap's or Secret's values may hold (`core.MaxSecretSize`).
const MAX_SIZE: usize = 1024 * 1024;

/// The bytes the values of map `field` hold (`base64`: values are base64, counted decoded).
fn stored_size(obj: &Value, field: &str, base64: bool) -> usize {
    obj.get(field)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str())
        .map(|s| {
            if base64 {
                let padding = s.bytes().rev().take_while(|b| *b == b'=').count();
                (s.len() / 4 * 3).saturating_sub(padding)
            } else {
                s.len()
            }
        })
        .sum()
}

/// A core Event (`legacyValidateEvent`): one without `eventTime` must sit in its involved
/// object's namespace (or, for a cluster-scoped object, in `default`); one with it, about a
/// cluster-scoped object, in `default` or `kube-system`.
fn event(v: &mut Causes, obj: &Value) {
    let namespace = s(obj.get("metadata").unwrap_or(&Value::Null), "namespace").unwrap_or("");
    let involved = obj
        .pointer("/involvedObject/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let new_style = obj.get("eventTime").is_some_and(|t| !t.is_null());
    let ok = match (new_style, involved.is_empty()) {
        (false, true) => namespace.is_empty() || namespace == "default",
        (false, false) => namespace == involved,
        (true, true) => namespace == "default" || namespace == "kube-system",
        (true, false) => true,
    };
    if !ok {
        v.invalid(
            "involvedObject.namespace",
            &json!(involved),
            "does not match event.namespace",
        );
    }
}

fn secret(v: &mut Causes, obj: &Value, old: Option<&Value>) {
    config_keys(v, obj, "data");
    if stored_size(obj, "data", true) > MAX_SIZE {
        v.too_long("data", MAX_SIZE);
    }
    let ty = s(obj, "type").unwrap_or("Opaque");
    if let Some(old_ty) = old.and_then(|o| s(o, "type"))
        && old_ty != ty
    {
        v.invalid("type", &json!(ty), "field is immutable");
    }
    let has = |k: &str| obj.pointer("/data").and_then(|d| d.get(k)).is_some();
    let required: &[&str] = match ty {
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            &["username", "password"]
        }
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        _ => &[],
    };
    for key in required {
        if !has(key) {
            v.required(&format!("data[{key}]"));
        }
    }
    if ty == "kubernetes.io/service-account-token"
        && obj
            .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
            .is_none()
    {
        v.required("metadata.annotations[kubernetes.io/service-account.name]");
    }
}

fn rules(v: &mut Causes, obj: &Value, namespaced: bool) {
    for (i, rule) in items(obj.get("rules")).iter().enumerate() {
        let at = format!("rules[{i}]");
        if items(rule.get("verbs")).is_empty() {
            v.required_because(
                &format!("{at}.verbs"),
                "verbs must contain at least one value",
            );
        }
        let urls = items(rule.get("nonResourceURLs"));
        if !urls.is_empty() {
            if namespaced {
                v.invalid(
                    &format!("{at}.nonResourceURLs"),
                    &json!(urls),
                    "namespaced rules cannot apply to non-resource URLs",
                );
            }
            continue;
        }
        if items(rule.get("apiGroups")).is_empty() {
            v.required_because(
                &format!("{at}.apiGroups"),
                "resource rules must supply at least one api group",
            );
        }
        if items(rule.get("resources")).is_empty() {
            v.required_because(
                &format!("{at}.resources"),
                "resource rules must supply at least one resource",
            );
        }
    }
}

fn binding(v: &mut Causes, obj: &Value, old: Option<&Value>, namespaced: bool) {
    let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
    if s(&role_ref, "apiGroup").unwrap_or("") != "rbac.authorization.k8s.io" {
        v.not_supported(
            "roleRef.apiGroup",
            role_ref.get("apiGroup").unwrap_or(&json!("")),
            &["rbac.authorization.k8s.io"],
        );
    }
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    match s(&role_ref, "kind") {
        Some(k) if kinds.contains(&k) => {}
        other => v.not_supported("roleRef.kind", &json!(other.unwrap_or("")), kinds),
    }
    if s(&role_ref, "name").is_none_or(str::is_empty) {
        v.required("roleRef.name");
    }
    for (i, sub) in items(obj.get("subjects")).iter().enumerate() {
        let at = format!("subjects[{i}]");
        match s(sub, "kind") {
            Some("ServiceAccount") => {
                if let Some(g) = s(sub, "apiGroup").filter(|g| !g.is_empty()) {
                    v.not_supported(&format!("{at}.apiGroup"), &json!(g), &[""]);
                }
            }
            Some("User" | "Group") => {}
            other => v.not_supported(
                &format!("{at}.kind"),
                &json!(other.unwrap_or("")),
                &["ServiceAccount", "User", "Group"],
            ),
        }
        if s(sub, "name").is_none_or(str::is_empty) {
            v.required(&format!("{at}.name"));
        }
    }
    if let Some(old) = old
        && old.get("roleRef") != obj.get("roleRef")
    {
        let shown = json!({"APIGroup": s(&role_ref, "apiGroup").unwrap_or(""),
            "Kind": s(&role_ref, "kind").unwrap_or(""), "Name": s(&role_ref, "name").unwrap_or("")});
        v.invalid("roleRef", &shown, "cannot change roleRef");
    }
}

fn hpa(v: &mut Causes, spec: &Value) {
    let min = spec.get("minReplicas").and_then(Value::as_i64).unwrap_or(1);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if min < 1 {
        v.invalid(
            "spec.minReplicas",
            &json!(min),
            "must be greater than or equal to 1",
        );
    }
    if max < 1 {
        v.invalid("spec.maxReplicas", &json!(max), "must be greater than 0");
    }
    if max < min {
        v.invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        );
    }
    if s(spec.get("scaleTargetRef").unwrap_or(&Value::Null), "kind").is_none_or(str::is_empty) {
        v.required("spec.scaleTargetRef.kind");
    }
    if s(spec.get("scaleTargetRef").unwrap_or(&Value::Null), "name").is_none_or(str::is_empty) {
        v.required("spec.scaleTargetRef.name");
    }
}

fn pdb(v: &mut Causes, spec: &Value) {
    let min = spec.get("minAvailable").filter(|x| !x.is_null());
    let max = spec.get("maxUnavailable").filter(|x| !x.is_null());
    if min.is_some() && max.is_some() {
        v.invalid(
            "spec",
            &json!({"minAvailable": min, "maxUnavailable": max}),
            "minAvailable and maxUnavailable cannot be both set",
        );
    }
    for (key, value) in [("minAvailable", min), ("maxUnavailable", max)] {
        let field = format!("spec.{key}");
        if let Some(n) = int_or_percent(v, &field, value)
            && matches!(value, Some(Value::String(_)))
            && n > 100
        {
            v.invalid(
                &field,
                value.unwrap_or(&Value::Null),
                "must not be greater than 100%",
            );
        }
    }
}

fn pvc(v: &mut Causes, spec: &Value) {
    let modes = items(spec.get("accessModes"));
    if modes.is_empty() {
        v.required_because("spec.accessModes", "at least 1 access mode is required");
    }
    let known = [
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    for m in modes {
        if !m.as_str().is_some_and(|m| known.contains(&m)) {
            v.not_supported("spec.accessModes", m, &known);
        }
    }
    // ReadWriteOncePod beside another supported mode (unknown modes and repeats don't count).
    let other_supported = modes.iter().any(|m| {
        m.as_str()
            .is_some_and(|m| m != "ReadWriteOncePod" && known.contains(&m))
    });
    if other_supported && modes.iter().any(|m| m == "ReadWriteOncePod") {
        v.forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        );
    }
    match spec.pointer("/resources/requests/storage") {
        None => {
            if spec.get("dataSource").is_none() {
                v.required("spec.resources[storage]");
            }
        }
        Some(q) => {
            let text = q.as_str().map_or_else(|| q.to_string(), str::to_string);
            if text.trim_start_matches(['0', '.']).is_empty() || text.starts_with('-') {
                v.invalid(
                    "spec.resources[storage]",
                    &json!(text),
                    "must be greater than zero",
                );
            }
        }
    }
}
