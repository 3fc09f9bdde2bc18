//! Status conditions as Flux's runtime keeps them: set with transition times kept when nothing
//! changed, sorted (`Stalled`, `Reconciling`, `Ready` first), and `Ready` summarised from the
//! other conditions.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// `Ready`.
pub const READY: &str = "Ready";
/// `Reconciling` (negative polarity).
pub const RECONCILING: &str = "Reconciling";
/// `Stalled` (negative polarity).
pub const STALLED: &str = "Stalled";

/// Longest condition message kept (the API's limit).
const MAX_MESSAGE: usize = 32768;

/// Sets condition `type_` on `conditions`. The transition time changes only when status,
/// reason or message change (Flux keeps it otherwise).
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    generation: Option<i64>,
) {
    let status = if status { "True" } else { "False" };
    set_status(conditions, type_, status, reason, message, generation);
}

/// Like [`set`] with an explicit status string (`True`, `False`, `Unknown`).
pub fn set_status(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    generation: Option<i64>,
) {
    let message = trim(message);
    let now = Time(now());
    if let Some(c) = conditions.iter_mut().find(|c| c.type_ == type_) {
        let changed = c.status != status || c.reason != reason || c.message != message;
        if changed {
            c.last_transition_time = now;
        }
        c.status = status.to_string();
        c.reason = reason.to_string();
        c.message = message;
        c.observed_generation = generation;
    } else {
        conditions.push(Condition {
            type_: type_.to_string(),
            status: status.to_string(),
            reason: reason.to_string(),
            message,
            observed_generation: generation,
            last_transition_time: now,
        });
    }
    sort(conditions);
}

/// Flux's conditions after a successful reconcile: `Ready=True` with `reason` and `message`,
/// `Reconciling` and `Stalled` removed.
pub fn mark_ready(
    conditions: &mut Vec<Condition>,
    reason: &str,
    message: &str,
    generation: Option<i64>,
) {
    set(conditions, READY, true, reason, message, generation);
    delete(conditions, RECONCILING);
    delete(conditions, STALLED);
}

/// Flux's conditions after a failed reconcile: `Ready=False` with `reason` and `message`; a
/// stalled one (no retry can help) gets `Stalled=True` and loses `Reconciling`, a retried one
/// gets `Reconciling=True` (`ProgressingWithRetry`, `progress`) and loses `Stalled`.
pub fn mark_failed(
    conditions: &mut Vec<Condition>,
    reason: &str,
    message: &str,
    stalled: bool,
    progress: &str,
    generation: Option<i64>,
) {
    set(conditions, READY, false, reason, message, generation);
    if stalled {
        set(conditions, STALLED, true, reason, message, generation);
        delete(conditions, RECONCILING);
    } else {
        delete(conditions, STALLED);
        set(
            conditions,
            RECONCILING,
            true,
            "ProgressingWithRetry",
            progress,
            generation,
        );
    }
}

/// Removes condition `type_`.
pub fn delete(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

/// The condition `type_`, if present.
pub fn get<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether `type_` is present with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_some_and(|c| c.status == "True")
}

/// How a condition type reads: negative polarity means `True` is bad (`FetchFailed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    /// `True` is good.
    Positive,
    /// `True` is bad.
    Negative,
}

/// Computes `Ready` from the conditions listed in `summarize` (in priority order), as Flux's
/// summary does: the first condition of the most important group gives reason and message;
/// groups rank True-negative, False-positive, True-positive, False-negative, Unknown. `Ready`
/// is left alone when none of them is present.
pub fn summarize(
    conditions: &mut Vec<Condition>,
    summarize: &[(&str, Polarity)],
    generation: Option<i64>,
) {
    let rank = |c: &Condition, p: Polarity| match (c.status.as_str(), p) {
        ("True", Polarity::Negative) => 0,
        ("False", Polarity::Positive) => 1,
        ("True", Polarity::Positive) => 2,
        ("False", Polarity::Negative) => 3,
        _ => 4,
    };
    let mut best: Option<(u8, &Condition, Polarity)> = None;
    for (type_, polarity) in summarize {
        let Some(c) = get(conditions, type_) else {
            continue;
        };
        let r = rank(c, *polarity);
        if best.as_ref().is_none_or(|(b, _, _)| r < *b) {
            best = Some((r, c, *polarity));
        }
    }
    let Some((r, c, polarity)) = best else { return };
    let status = match (r, polarity) {
        (4, _) => "Unknown",
        (_, Polarity::Negative) if c.status == "True" => "False",
        (_, Polarity::Negative) => "True",
        _ => c.status.as_str(),
    }
    .to_string();
    let (reason, message) = (c.reason.clone(), c.message.clone());
    set_status(conditions, READY, &status, &reason, &message, generation);
}

fn trim(message: &str) -> String {
    if message.len() <= MAX_MESSAGE {
        return message.to_string();
    }
    let mut end = MAX_MESSAGE - 3;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

fn sort(conditions: &mut [Condition]) {
    let first = |t: &str| match t {
        STALLED => 0,
        RECONCILING => 1,
        READY => 2,
        _ => 3,
    };
    conditions.sort_by(|a, b| {
        first(&a.type_)
            .cmp(&first(&b.type_))
            .then(b.observed_generation.cmp(&a.observed_generation))
            .then(a.type_.cmp(&b.type_))
    });
}

/// Now, truncated to seconds (condition times have second precision).
pub fn now() -> k8s_openapi::jiff::Timestamp {
    let now = k8s_openapi::jiff::Timestamp::now();
    k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_follows_the_most_important_condition() {
        let order = [
            ("FetchFailed", Polarity::Negative),
            ("ArtifactInStorage", Polarity::Positive),
        ];
        let mut cs = Vec::new();
        set(
            &mut cs,
            "ArtifactInStorage",
            true,
            "Succeeded",
            "stored",
            Some(1),
        );
        summarize(&mut cs, &order, Some(1));
        let ready = get(&cs, READY).unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "Succeeded")
        );
        set(
            &mut cs,
            "FetchFailed",
            true,
            "GitOperationFailed",
            "boom",
            Some(1),
        );
        summarize(&mut cs, &order, Some(1));
        let ready = get(&cs, READY).unwrap();
        assert_eq!(
            (
                ready.status.as_str(),
                ready.reason.as_str(),
                ready.message.as_str()
            ),
            ("False", "GitOperationFailed", "boom")
        );
        assert_eq!(cs[0].type_, READY);
        set(&mut cs, RECONCILING, true, "Progressing", "x", Some(1));
        assert_eq!(cs[0].type_, RECONCILING);
    }

    #[test]
    fn transition_time_kept_when_unchanged() {
        let mut cs = Vec::new();
        set(&mut cs, READY, true, "Succeeded", "ok", Some(1));
        let t0 = cs[0].last_transition_time.clone();
        cs[0].last_transition_time = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        set(&mut cs, READY, true, "Succeeded", "ok", Some(2));
        assert_ne!(cs[0].last_transition_time, t0);
        assert_eq!(cs[0].observed_generation, Some(2));
        set(&mut cs, READY, false, "Failed", "no", Some(2));
        assert_ne!(cs[0].last_transition_time.0.as_second(), 0);
    }
}
