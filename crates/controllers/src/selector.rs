//! A `metav1.LabelSelector` (matchLabels and matchExpressions) as a selector that matches
//! labels, with apimachinery's `LabelSelectorAsSelector` errors.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
use tidegate_core::labels::LabelSelector;

/// The selector's string form (`app=web,tier in (a,b),!legacy`), checked.
pub fn to_string(selector: &K8sSelector) -> Result<String, String> {
    let mut parts = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        parts.push(format!("{k}={v}"));
    }
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default();
        let part = match e.operator.as_str() {
            "In" | "NotIn" => {
                if values.is_empty() {
                    return Err(format!(
                        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty (key {:?})",
                        e.key
                    ));
                }
                let op = if e.operator == "In" { "in" } else { "notin" };
                format!("{} {op} ({})", e.key, values.join(","))
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    return Err(format!(
                        "values: Invalid value: {values:?}: values set must be empty for exists and does not exist (key {:?})",
                        e.key
                    ));
                }
                if e.operator == "Exists" {
                    e.key.clone()
                } else {
                    format!("!{}", e.key)
                }
            }
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        };
        parts.push(part);
    }
    let text = parts.join(",");
    LabelSelector::parse(&text).map_err(|e| e.to_string())?;
    Ok(text)
}

/// The parsed selector; `None` for an empty one (which selects nothing here, as in Cluster
/// API).
pub fn parse(selector: &K8sSelector) -> Result<Option<LabelSelector>, String> {
    let text = to_string(selector)?;
    if text.is_empty() {
        return Ok(None);
    }
    LabelSelector::parse(&text)
        .map(Some)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn labels_and_expressions() {
        let s = K8sSelector {
            match_labels: Some([("cni".to_string(), "calico".to_string())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "In".into(),
                    values: Some(vec!["dev".into(), "prod".into()]),
                },
                LabelSelectorRequirement {
                    key: "legacy".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        let sel = parse(&s).unwrap().unwrap();
        let labels = [("cni", "calico"), ("env", "dev")];
        let get = |k: &str| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v);
        assert!(sel.matches(get));
        let other = [("cni", "calico"), ("env", "test")];
        assert!(!sel.matches(|k: &str| other.iter().find(|(l, _)| *l == k).map(|(_, v)| *v)));
        assert!(parse(&K8sSelector::default()).unwrap().is_none());
        let bad = K8sSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "a".into(),
                operator: "Bogus".into(),
                values: None,
            }]),
            ..Default::default()
        };
        assert_eq!(
            parse(&bad).unwrap_err(),
            "\"Bogus\" is not a valid label selector operator"
        );
    }
}
