//! Errors of the apply manager. Every message names the object it is about, in the
//! `Kind/Namespace/Name` form.

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One object could not be applied, validated, read or deleted; the message names it.
    #[error("{0}")]
    Object(String),
    /// The set failed validation; nothing was written. One entry per invalid object, in the
    /// set's order; the message is the first, as Flux reports the first failed dry-run.
    #[error("{}", .0.first().map(String::as_str).unwrap_or("validation failed"))]
    Validation(Vec<String>),
    /// A wait for health or readiness did not succeed (Flux's wording).
    #[error("{0}")]
    Wait(String),
    /// Prune could not delete every stale object (Flux's wording).
    #[error("{0}")]
    Prune(String),
    /// A request about no object in particular failed (discovery, the inventory).
    #[error("{context}: {message}")]
    Cluster {
        /// What was being done.
        context: String,
        /// The server's or the client's message.
        message: String,
    },
}

/// The readable part of a kube-rs error: the server's message for API errors.
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// The HTTP status code of an API error.
pub fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// The `reason` of an API error (`Invalid`, `Conflict`, …), `FieldManagerConflict` when a
/// cause says so.
pub fn reason(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => {
            let conflict = status
                .details
                .as_ref()
                .is_some_and(|d| d.causes.iter().any(|c| c.reason == "FieldManagerConflict"));
            if conflict {
                "FieldManagerConflict".into()
            } else {
                status.reason.clone()
            }
        }
        _ => String::new(),
    }
}

/// Whether the error rejects a change of an immutable field: kube-apiserver's immutability
/// messages (`field is immutable`, `spec is immutable`, `… is set`, StatefulSet and Pod
/// update rules) or a webhook's `immutable field`. Flux also counts every Conflict and Invalid
/// answer; with force that deletes objects whose change is merely invalid, so Tidegate does not.
pub fn is_immutable(e: &kube::Error) -> bool {
    if !matches!(code(e), Some(409 | 422)) {
        return false;
    }
    let text = describe(e);
    text.contains("immutable")
        || text.contains("Forbidden: updates to statefulset spec")
        || text.contains("Forbidden: pod updates may not change fields")
}

/// Whether the error is a 404.
pub fn is_not_found(e: &kube::Error) -> bool {
    code(e) == Some(404)
}

/// Flux's dry-run error: `<subject> dry-run failed (<Reason>): <message>`.
pub fn dry_run_failed(subject: &str, e: &kube::Error) -> Error {
    let reason = reason(e);
    let message = describe(e);
    if is_not_found(e) {
        return Error::Object(format!("{subject} not found: {message}"));
    }
    if reason.is_empty() {
        Error::Object(format!("{subject} dry-run failed: {message}"))
    } else {
        Error::Object(format!("{subject} dry-run failed ({reason}): {message}"))
    }
}
