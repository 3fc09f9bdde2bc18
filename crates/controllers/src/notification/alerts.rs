//! Which Alerts an event goes to, as Flux's event server decides: not suspended, some event
//! source matching (kind, namespace defaulting to the Alert's, name or `*`, severity, and with
//! `matchLabels` the object's labels), the message matching the inclusion list when there is
//! one and no exclusion regex.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use tidegate_api::Alert;
use tidegate_api::alert::CrossNamespaceObjectReference;
use tidegate_api::event::{Event, ObjectReference, SEVERITY_INFO};

/// Reads the labels of an event's object (for `matchLabels`).
pub trait Labels {
    /// The labels of `obj`, or why they could not be read.
    fn labels(
        &self,
        obj: &ObjectReference,
    ) -> impl std::future::Future<Output = Result<BTreeMap<String, String>, String>> + Send;
}

/// A Warning event to record on an Alert: (reason, message).
pub type Complaint = (Arc<Alert>, &'static str, String);

/// Compiled Go-syntax regular expressions, kept between events.
#[derive(Default)]
pub struct Regexes {
    cache: Mutex<HashMap<String, Result<regex::Regex, String>>>,
}

impl Regexes {
    fn matches(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 4096 {
            cache.clear();
        }
        let re = cache
            .entry(pattern.to_string())
            .or_insert_with(|| regex::Regex::new(pattern).map_err(|e| e.to_string()));
        re.as_ref().map(|r| r.is_match(text)).map_err(Clone::clone)
    }
}

/// The Alerts `event` goes to, and the complaints about the others' configuration.
pub async fn filter<L: Labels>(
    alerts: &[Arc<Alert>],
    event: &Event,
    labels: &L,
    regexes: &Regexes,
) -> (Vec<Arc<Alert>>, Vec<Complaint>) {
    let mut out = Vec::new();
    let mut complaints = Vec::new();
    for alert in alerts {
        if alert.spec.suspend {
            continue;
        }
        let mut matched = false;
        for source in &alert.spec.event_sources {
            if source_matches(alert, source, event, labels, &mut complaints).await {
                matched = true;
                break;
            }
        }
        if !matched {
            continue;
        }
        if !alert.spec.inclusion_list.is_empty() {
            let mut included = false;
            for exp in &alert.spec.inclusion_list {
                match regexes.matches(exp, &event.message) {
                    Ok(true) => {
                        included = true;
                        break;
                    }
                    Ok(false) => {}
                    Err(_) => complaints.push((
                        alert.clone(),
                        "InvalidConfig",
                        format!("failed to compile inclusion regex: {exp}"),
                    )),
                }
            }
            if !included {
                continue;
            }
        }
        let mut excluded = false;
        for exp in &alert.spec.exclusion_list {
            match regexes.matches(exp, &event.message) {
                Ok(true) => {
                    excluded = true;
                    break;
                }
                Ok(false) => {}
                Err(_) => complaints.push((
                    alert.clone(),
                    "InvalidConfig",
                    format!("failed to compile exclusion regex: {exp}"),
                )),
            }
        }
        if !excluded {
            out.push(alert.clone());
        }
    }
    (out, complaints)
}

async fn source_matches<L: Labels>(
    alert: &Arc<Alert>,
    source: &CrossNamespaceObjectReference,
    event: &Event,
    labels: &L,
    complaints: &mut Vec<Complaint>,
) -> bool {
    let o = &event.involved_object;
    let alert_ns = alert.metadata.namespace.clone().unwrap_or_default();
    let namespace = source
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(&alert_ns);
    if o.namespace != namespace || o.kind != source.kind {
        return false;
    }
    let severity = alert.spec.severity();
    if event.severity != severity && severity != SEVERITY_INFO {
        return false;
    }
    if source.name != "*" && source.name != o.name {
        return false;
    }
    let Some(wanted) = &source.match_labels else {
        return true;
    };
    match labels.labels(o).await {
        Ok(have) => wanted.iter().all(|(k, v)| have.get(k) == Some(v)),
        Err(e) => {
            tracing::error!(error = %e, "error getting the involved object");
            complaints.push((
                alert.clone(),
                "SourceFetchFailed",
                format!(
                    "error getting source object {}/{}/{}",
                    o.kind, o.namespace, o.name
                ),
            ));
            false
        }
    }
}
