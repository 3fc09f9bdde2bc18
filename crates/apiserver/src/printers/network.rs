//! Columns of Services and networking kinds.

use super::{
    AGE, Column, NAME, col, format_labels, format_selector, items, list_with_more, or, s, wide,
};
use serde_json::{Value, json};

pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("", "Service") => vec![
            NAME,
            col("Type", "string", |o| json!(s(o, "/spec/type"))),
            col("Cluster-IP", "string", |o| {
                json!(or(
                    o,
                    "/spec/clusterIPs/0",
                    or(o, "/spec/clusterIP", "<none>")
                ))
            }),
            col("External-IP", "string", |o| json!(external_ip(o))),
            col("Port(s)", "string", |o| json!(service_ports(o))),
            AGE,
            wide("Selector", |o| {
                json!(format_labels(o.pointer("/spec/selector")))
            }),
        ],
        ("", "Endpoints") => vec![
            NAME,
            col("Endpoints", "string", |o| json!(endpoints(o))),
            AGE,
        ],
        ("discovery.k8s.io", "EndpointSlice") => vec![
            NAME,
            col("AddressType", "string", |o| json!(s(o, "/addressType"))),
            col("Ports", "string", |o| {
                let ports: Vec<String> = items(o, "/ports")
                    .iter()
                    .map(|p| match p.get("port").and_then(Value::as_i64) {
                        Some(n) => n.to_string(),
                        None => or(p, "/name", "*").to_string(),
                    })
                    .collect();
                json!(list_with_more(&ports, 3))
            }),
            col("Endpoints", "string", |o| {
                let addrs: Vec<String> = items(o, "/endpoints")
                    .iter()
                    .flat_map(|e| items(e, "/addresses"))
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect();
                json!(list_with_more(&addrs, 3))
            }),
            AGE,
        ],
        ("networking.k8s.io", "Ingress") => vec![
            NAME,
            col("Class", "string", |o| {
                json!(or(o, "/spec/ingressClassName", "<none>"))
            }),
            col("Hosts", "string", |o| json!(ingress_hosts(o))),
            col("Address", "string", |o| json!(load_balancer(o).join(","))),
            col("Ports", "string", |o| {
                json!(if items(o, "/spec/tls").is_empty() {
                    "80"
                } else {
                    "80, 443"
                })
            }),
            AGE,
        ],
        ("networking.k8s.io", "IngressClass") => vec![
            NAME,
            col("Controller", "string", |o| json!(s(o, "/spec/controller"))),
            col("Parameters", "string", |o| {
                json!(match o.pointer("/spec/parameters") {
                    Some(p) if p.is_object() => {
                        let group = s(p, "/apiGroup");
                        let kind = s(p, "/kind");
                        let gk = if group.is_empty() {
                            kind.to_string()
                        } else {
                            format!("{kind}.{group}")
                        };
                        format!("{gk}/{}", s(p, "/name"))
                    }
                    _ => "<none>".to_string(),
                })
            }),
            AGE,
        ],
        ("networking.k8s.io", "NetworkPolicy") => vec![
            NAME,
            col("Pod-Selector", "string", |o| {
                json!(format_selector(o.pointer("/spec/podSelector")))
            }),
            AGE,
        ],
        _ => return None,
    })
}

/// The load balancer's addresses (IP, else hostname), deduplicated and sorted.
fn load_balancer(o: &Value) -> Vec<String> {
    let mut out: Vec<String> = items(o, "/status/loadBalancer/ingress")
        .iter()
        .map(|i| or(i, "/ip", s(i, "/hostname")).to_string())
        .filter(|a| !a.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn external_ip(o: &Value) -> String {
    let external: Vec<&str> = items(o, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match s(o, "/spec/type") {
        "ClusterIP" | "NodePort" | "" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut lb = load_balancer(o);
            if !external.is_empty() {
                lb.extend(external.iter().map(|e| e.to_string()));
                lb.join(",")
            } else if !lb.is_empty() {
                lb.join(",")
            } else {
                "<pending>".into()
            }
        }
        "ExternalName" => s(o, "/spec/externalName").to_string(),
        _ => "<unknown>".into(),
    }
}

fn service_ports(o: &Value) -> String {
    let ports: Vec<String> = items(o, "/spec/ports")
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let proto = or(p, "/protocol", "TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(n) if n > 0 => format!("{port}:{n}/{proto}"),
                _ => format!("{port}/{proto}"),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

fn endpoints(o: &Value) -> String {
    let subsets = items(o, "/subsets");
    if subsets.is_empty() {
        return "<none>".into();
    }
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    for ss in subsets {
        let addrs: Vec<&str> = items(ss, "/addresses")
            .iter()
            .map(|a| s(a, "/ip"))
            .collect();
        let ports = items(ss, "/ports");
        if ports.is_empty() {
            count += addrs.len();
            for a in &addrs {
                if list.len() == 3 {
                    more = true;
                    break;
                }
                list.push(a.to_string());
            }
            continue;
        }
        for p in ports {
            count += addrs.len();
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            for a in &addrs {
                if list.len() == 3 {
                    more = true;
                    break;
                }
                list.push(if a.contains(':') {
                    format!("[{a}]:{port}")
                } else {
                    format!("{a}:{port}")
                });
            }
        }
    }
    let mut out = list.join(",");
    if more {
        out.push_str(&format!(" + {} more...", count - 3));
    }
    out
}

fn ingress_hosts(o: &Value) -> String {
    let rules = items(o, "/spec/rules");
    let mut list = Vec::new();
    let mut more = false;
    for r in rules {
        if list.len() == 3 {
            more = true;
        }
        let host = s(r, "/host");
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let mut out = list.join(",");
    if more {
        out.push_str(&format!(" + {} more...", rules.len() - 3));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_cells() {
        let svc = json!({"spec": {"type": "NodePort", "clusterIPs": ["10.96.0.9"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}});
        assert_eq!(service_ports(&svc), "80:30080/TCP,53/UDP");
        assert_eq!(external_ip(&svc), "<none>");
        let lb = json!({"spec": {"type": "LoadBalancer"}});
        assert_eq!(external_ip(&lb), "<pending>");
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"port": 80}, {"port": 443}]}]});
        assert_eq!(
            endpoints(&ep),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
    }
}
