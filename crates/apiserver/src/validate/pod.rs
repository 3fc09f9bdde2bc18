//! Pod specs (`ValidatePodSpec`): volumes, containers and their ports, environment, mounts,
//! policies and resources, in kube-apiserver's order.

use super::{Causes, items, s};
use serde_json::{Value, json};
use std::collections::HashSet;

/// Validates the pod spec at `path` (`spec`, `spec.template.spec`, …).
pub(super) fn spec(v: &mut Causes, path: &str, spec: &Value) {
    let mut volumes = HashSet::new();
    for (i, vol) in items(spec.get("volumes")).iter().enumerate() {
        let field = format!("{path}.volumes[{i}].name");
        match s(vol, "name").filter(|n| !n.is_empty()) {
            None => v.required(&field),
            Some(name) => {
                v.dns_label(&field, name);
                if !volumes.insert(name.to_string()) {
                    v.duplicate(&field, &json!(name));
                }
            }
        }
    }
    let containers = items(spec.get("containers"));
    if containers.is_empty() {
        v.required(&format!("{path}.containers"));
    }
    containers_of(v, path, "containers", containers, &volumes);
    containers_of(
        v,
        path,
        "initContainers",
        items(spec.get("initContainers")),
        &volumes,
    );
    v.one_of(
        &format!("{path}.restartPolicy"),
        spec.get("restartPolicy"),
        &["Always", "OnFailure", "Never"],
    );
    v.one_of(
        &format!("{path}.dnsPolicy"),
        spec.get("dnsPolicy"),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    );
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        for value in sel.values() {
            let text = value.as_str().unwrap_or("");
            if !tidegate_core::labels::is_label_value(text) {
                v.invalid(
                    &format!("{path}.nodeSelector"),
                    value,
                    crate::validation::LABEL_VALUE_MSG,
                );
            }
        }
    }
    if let Some(n) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && n < 1
    {
        v.invalid(
            &format!("{path}.activeDeadlineSeconds"),
            &json!(n),
            "must be between 1 and 2147483647, inclusive",
        );
    }
}

/// What kube checks of a Pod's containers beyond `ValidatePodSpec` (`validateContainersOnlyForPod`):
/// images without surrounding whitespace.
pub(super) fn only_for_pod(v: &mut Causes, spec: &Value) {
    for list in ["containers", "initContainers"] {
        for (i, c) in items(spec.get(list)).iter().enumerate() {
            if let Some(image) = s(c, "image")
                && image.len() != image.trim().len()
            {
                v.invalid(
                    &format!("spec.{list}[{i}].image"),
                    &json!(image),
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
}

fn containers_of(
    v: &mut Causes,
    path: &str,
    list: &str,
    containers: &[Value],
    volumes: &HashSet<String>,
) {
    let mut names = HashSet::new();
    for (i, c) in containers.iter().enumerate() {
        let at = format!("{path}.{list}[{i}]");
        match s(c, "name").filter(|n| !n.is_empty()) {
            None => v.required(&format!("{at}.name")),
            Some(name) => v.dns_label(&format!("{at}.name"), name),
        }
        // Only an empty image is missing: " " is a placeholder pod templates may carry.
        if s(c, "image").is_none_or(str::is_empty) {
            v.required(&format!("{at}.image"));
        }
        v.one_of(
            &format!("{at}.terminationMessagePolicy"),
            c.get("terminationMessagePolicy"),
            &["File", "FallbackToLogsOnError"],
        );
        ports(v, &at, c);
        for (j, env) in items(c.get("env")).iter().enumerate() {
            let field = format!("{at}.env[{j}].name");
            match s(env, "name").filter(|n| !n.is_empty()) {
                None => v.required(&field),
                Some(name) => {
                    if name.contains('=') || !name.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                        v.invalid(
                            &field,
                            &json!(name),
                            "a valid environment variable name must consist only of printable ASCII characters other than '='",
                        );
                    }
                }
            }
        }
        for (j, m) in items(c.get("volumeMounts")).iter().enumerate() {
            let name = s(m, "name").unwrap_or("");
            if name.is_empty() {
                v.required(&format!("{at}.volumeMounts[{j}].name"));
            } else if !volumes.contains(name) {
                v.not_found(&format!("{at}.volumeMounts[{j}].name"), &json!(name));
            }
            if s(m, "mountPath").is_none_or(str::is_empty) {
                v.required(&format!("{at}.volumeMounts[{j}].mountPath"));
            }
        }
        v.one_of(
            &format!("{at}.imagePullPolicy"),
            c.get("imagePullPolicy"),
            &["Always", "IfNotPresent", "Never"],
        );
        resources(v, &at, c);
    }
    for (i, c) in containers.iter().enumerate() {
        if let Some(name) = s(c, "name").filter(|n| !n.is_empty())
            && !names.insert(name.to_string())
        {
            v.duplicate(&format!("{path}.{list}[{i}].name"), &json!(name));
        }
    }
}

fn ports(v: &mut Causes, at: &str, c: &Value) {
    let mut names = HashSet::new();
    for (k, p) in items(c.get("ports")).iter().enumerate() {
        let field = format!("{at}.ports[{k}]");
        if let Some(name) = s(p, "name").filter(|n| !n.is_empty()) {
            v.port_name(&format!("{field}.name"), name);
            if !names.insert(name.to_string()) {
                v.duplicate(&format!("{field}.name"), &json!(name));
            }
        }
        match p.get("containerPort").and_then(Value::as_i64) {
            None | Some(0) => v.required(&format!("{field}.containerPort")),
            Some(n) => v.port_number(&format!("{field}.containerPort"), n),
        }
        if let Some(n) = p.get("hostPort").and_then(Value::as_i64)
            && n != 0
        {
            v.port_number(&format!("{field}.hostPort"), n);
        }
        v.one_of(
            &format!("{field}.protocol"),
            p.get("protocol"),
            &["SCTP", "TCP", "UDP"],
        );
    }
}

/// A quantity in base units, for comparing requests with limits (`None`: not understood).
fn quantity(q: &str) -> Option<f64> {
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    let n: f64 = num.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        _ => return None,
    };
    Some(n * factor)
}

fn resources(v: &mut Causes, at: &str, c: &Value) {
    let requests = c.pointer("/resources/requests").and_then(Value::as_object);
    let limits = c.pointer("/resources/limits").and_then(Value::as_object);
    for (name, q) in requests.into_iter().flatten() {
        let text = q.as_str().map_or_else(|| q.to_string(), str::to_string);
        if quantity(&text).is_some_and(|n| n < 0.0) {
            v.invalid(
                &format!("{at}.resources.requests[{name}]"),
                &json!(text),
                "must be greater than or equal to 0",
            );
        }
    }
    for res in ["cpu", "memory"] {
        let req = requests.and_then(|r| r.get(res)).and_then(Value::as_str);
        let lim = limits.and_then(|l| l.get(res)).and_then(Value::as_str);
        if let (Some(r), Some(l)) = (req, lim)
            && let (Some(rn), Some(ln)) = (quantity(r), quantity(l))
            && rn > ln
        {
            v.invalid(
                &format!("{at}.resources.requests"),
                &json!(r),
                &format!("must be less than or equal to {res} limit of {l}"),
            );
        }
    }
}
