//! What kube-apiserver's Service registry allocates: a ClusterIP from the service range
//! (`10.96.0.0/16` here; `10.96.0.1` is `default/kubernetes`) and NodePorts from
//! 30000–32767 for `NodePort` and `LoadBalancer` Services. Addresses in use are those of the
//! stored Services, so deleting a Service releases its address.

use crate::error::{ApiError, Cause};
use crate::server::ServerState;
use serde_json::{Value, json};
use std::collections::HashSet;

/// The address of `default/kubernetes`.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

const NODE_PORTS: std::ops::RangeInclusive<u32> = 30000..=32767;

/// Fills in a Service's ClusterIP (and family fields) and NodePorts; on update, keeps those the
/// stored Service has when the new one leaves them empty. An address or port asked for that
/// another Service holds is refused with the allocator's words.
pub fn service(state: &ServerState, obj: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    let me = (
        obj.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    );
    let seed = seed(&format!(
        "{}/{}",
        obj.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or(""),
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
    ));
    let has_selector = obj
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty());
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    if ty == "ExternalName" {
        return Ok(());
    }
    let empty = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
    if empty(spec.get("clusterIP"))
        && let Some(prev) = old.and_then(|o| o.pointer("/spec/clusterIP"))
    {
        spec.insert("clusterIP".into(), prev.clone());
    }
    let (ips, ports) = in_use(state, &me);
    let asked = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty() && *ip != "None")
        .map(str::to_string);
    if let Some(ip) = asked
        && ips.contains(&ip)
        && old.and_then(|o| o.pointer("/spec/clusterIP")) != Some(&json!(ip))
    {
        return Err(invalid(
            &me.1,
            vec![Cause::invalid(
                "spec.clusterIPs",
                &json!([ip]),
                &format!("failed to allocate IP {ip}: provided IP is already allocated"),
            )],
        ));
    }
    if empty(spec.get("clusterIP")) {
        let ip = (0..65_000u32)
            .map(|i| {
                let n = (seed.wrapping_add(i) % 65_000) + 10;
                format!("10.96.{}.{}", n / 256, n % 256)
            })
            .find(|ip| !ips.contains(ip))
            .unwrap_or_default();
        spec.insert("clusterIP".into(), json!(ip));
    }
    let ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
    if spec.get("clusterIPs").is_none_or(Value::is_null) {
        spec.insert("clusterIPs".into(), json!([ip]));
    }
    // Families as kube's allocator sets them on this single-stack cluster; a headless
    // Service without a selector asks for both families it may have.
    spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
    let policy = if ip == json!("None") && !has_selector {
        "RequireDualStack"
    } else {
        "SingleStack"
    };
    spec.entry("ipFamilyPolicy")
        .or_insert_with(|| json!(policy));
    if ty != "NodePort" && ty != "LoadBalancer" {
        return Ok(());
    }
    let old_ports = old
        .and_then(|o| o.pointer("/spec/ports"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut taken = ports;
    for (i, p) in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        // A port that is not an object is refused by validation; nothing to allocate for it.
        if !p.is_object() {
            continue;
        }
        let asked = p.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
        if asked != 0 {
            let own = old_ports
                .iter()
                .any(|o| o.get("nodePort") == Some(&json!(asked)));
            if !own && taken.contains(&u32::try_from(asked).unwrap_or(0)) {
                return Err(invalid(
                    &me.1,
                    vec![Cause::invalid(
                        &format!("spec.ports[{i}].nodePort"),
                        &json!(asked),
                        "provided port is already allocated",
                    )],
                ));
            }
            continue;
        }
        let kept = old_ports
            .get(i)
            .filter(|o| o.get("port") == p.get("port"))
            .and_then(|o| o.get("nodePort"))
            .cloned();
        let port = kept.unwrap_or_else(|| {
            let free = NODE_PORTS.clone().find(|n| !taken.contains(n)).unwrap_or(0);
            taken.insert(free);
            json!(free)
        });
        p["nodePort"] = port;
    }
    Ok(())
}

fn invalid(name: &str, causes: Vec<Cause>) -> ApiError {
    ApiError::invalid("", "Service", name, causes)
}

fn seed(text: &str) -> u32 {
    text.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

/// The ClusterIPs and NodePorts the stored Services other than `me` (namespace, name) hold.
fn in_use(state: &ServerState, me: &(String, String)) -> (HashSet<String>, HashSet<u32>) {
    let (services, _) = state.store.list("/services", None, None);
    let mut ips = HashSet::from([KUBERNETES_SERVICE_IP.to_string()]);
    let mut ports = HashSet::new();
    for (k, s) in services {
        if k.namespace == me.0 && k.name == me.1 {
            continue;
        }
        if let Some(ip) = s.pointer("/spec/clusterIP").and_then(Value::as_str) {
            ips.insert(ip.to_string());
        }
        for p in s
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = p.get("nodePort").and_then(Value::as_u64) {
                ports.insert(u32::try_from(n).unwrap_or(0));
            }
        }
    }
    (ips, ports)
}
