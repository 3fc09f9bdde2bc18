//! What applying to a Cluster came to, and how it shows in `ResourcesApplied` (the v1beta2
//! condition and its v1beta1 twin under `status.deprecated`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tidegate_api::clusterresourceset::{
    APPLIED_REASON, ClusterResourceSetStatus, Deprecated, DeprecatedV1Beta1, NOT_APPLIED_MESSAGE,
    NOT_APPLIED_REASON, RESOURCES_APPLIED, V1Beta1Condition, v1beta1_reasons,
};
use tidegate_api::conditions;

/// One update of `ResourcesApplied`: the v1beta2 reason and message, and the v1beta1 reason,
/// severity and message (`None` reason: True).
#[derive(Debug, Clone)]
pub(super) struct Applied {
    reason: &'static str,
    message: String,
    v1beta1: Option<(&'static str, &'static str, String)>,
}

impl Applied {
    pub(super) fn ok() -> Applied {
        Applied {
            reason: APPLIED_REASON,
            message: String::new(),
            v1beta1: None,
        }
    }
    pub(super) fn failed(
        reason: &'static str,
        message: &str,
        v1_reason: &'static str,
        severity: &'static str,
        v1_message: String,
    ) -> Applied {
        Applied {
            reason,
            message: message.to_string(),
            v1beta1: Some((v1_reason, severity, v1_message)),
        }
    }
    /// Applying failed: NotApplied (v1beta1 ApplyFailed with the details).
    pub(super) fn not_applied(message: String) -> Applied {
        Applied::failed(
            NOT_APPLIED_REASON,
            NOT_APPLIED_MESSAGE,
            v1beta1_reasons::APPLY_FAILED,
            "Warning",
            message,
        )
    }
    pub(super) fn is_true(&self) -> bool {
        self.v1beta1.is_none()
    }
}

/// What applying to one Cluster came to: the last condition update and the errors.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) applied: Option<Applied>,
    pub(super) errors: Vec<String>,
    /// Only the binding write lost a race with another ClusterResourceSet.
    pub(super) conflict: bool,
    /// `ContinuousApply`: the applied objects that are not healthy (`None`: not checked).
    pub(super) health: Option<Vec<(tidegate_apply::health::Status, String)>>,
}

/// Errors as Go's `kerrors.NewAggregate` prints them: one as itself, several in brackets.
pub(super) fn aggregate<'a>(errors: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = errors.collect();
    match all.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Sets `ResourcesApplied` (v1beta2) and its v1beta1 twin.
pub(super) fn set_applied(
    status: &mut ClusterResourceSetStatus,
    a: &Applied,
    generation: Option<i64>,
) {
    conditions::set(
        &mut status.conditions,
        RESOURCES_APPLIED,
        a.is_true(),
        a.reason,
        &a.message,
        generation,
    );
    let v1 = status
        .deprecated
        .get_or_insert_with(Deprecated::default)
        .v1beta1
        .get_or_insert_with(DeprecatedV1Beta1::default);
    let (state, severity, reason, message) = match &a.v1beta1 {
        None => ("True", None, None, None),
        Some((reason, severity, message)) => (
            "False",
            Some(severity.to_string()),
            Some(reason.to_string()),
            Some(message.clone()),
        ),
    };
    let now = Time(conditions::now());
    match v1
        .conditions
        .iter_mut()
        .find(|c| c.type_ == RESOURCES_APPLIED)
    {
        Some(c) => {
            if c.status != state {
                c.last_transition_time = now;
            }
            c.status = state.into();
            c.severity = severity;
            c.reason = reason;
            c.message = message;
        }
        None => v1.conditions.push(V1Beta1Condition {
            type_: RESOURCES_APPLIED.into(),
            status: state.into(),
            severity,
            last_transition_time: now,
            reason,
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_aggregates() {
        assert_eq!(aggregate(["a"].into_iter()), "a");
        assert_eq!(aggregate(["a", "b"].into_iter()), "[a, b]");
    }
}
