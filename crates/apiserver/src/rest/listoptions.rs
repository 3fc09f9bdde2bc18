//! The query parameters of list and watch requests, decoded and validated as kube-apiserver
//! does (apimachinery's parameter codec, then `ValidateListOptions`): integers as Go's
//! `strconv.ParseInt` reads them (400 with its message), booleans as apimachinery's lenient
//! conversion reads them (only `0` and `false` in any case are false, and nothing is an
//! error), and `resourceVersionMatch` checked against the request (422).

use serde_json::Value;

use super::Req;
use crate::error::{ApiError, ApiResult, Cause};

/// A boolean query value as apimachinery's `Convert_Slice_string_To_bool` reads it.
pub fn go_bool(v: &str) -> bool {
    !(v == "0" || v.eq_ignore_ascii_case("false"))
}

/// An integer query value as Go's `strconv.ParseInt(v, 10, 64)` reads it, with its message.
pub fn parse_int(v: &str) -> Result<i64, String> {
    let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.ParseInt: parsing \"{v}\": invalid syntax"));
    }
    v.trim_start_matches('+')
        .parse::<i64>()
        .map_err(|_| format!("strconv.ParseInt: parsing \"{v}\": value out of range"))
}

/// What a list or watch request's parameters say, once they are known to be well formed.
#[derive(Debug, Default)]
pub struct ListOptions {
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<i64>,
    /// `limit`.
    pub limit: Option<i64>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`, when given.
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    /// Decodes and validates the parameters of `req`, a watch when `watch`.
    pub fn from_req(req: &Req, watch: bool) -> ApiResult<ListOptions> {
        // Decoding, in the order of ListOptions' fields: a malformed value is a 400.
        let int = |name: &str| -> ApiResult<Option<i64>> {
            match req.q(name) {
                None => Ok(None),
                Some(v) => parse_int(v).map(Some).map_err(ApiError::bad_request),
            }
        };
        let timeout_seconds = int("timeoutSeconds")?;
        let limit = int("limit")?;
        let options = ListOptions {
            timeout_seconds,
            limit,
            allow_watch_bookmarks: req.q("allowWatchBookmarks").is_some_and(go_bool),
            send_initial_events: req.q("sendInitialEvents").map(go_bool),
        };
        // Validation: 422 with every finding.
        let version = req.q("resourceVersion").unwrap_or("");
        let cont = req.q("continue").unwrap_or("");
        let matching = req.q("resourceVersionMatch").unwrap_or("");
        let field = "resourceVersionMatch";
        let mut causes = Vec::new();
        let unsupported = |allowed: &[&str]| {
            Cause::not_supported(
                field,
                &Value::String(matching.to_string()),
                &allowed.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        if watch {
            if options.send_initial_events.is_some() && matching != "NotOlderThan" {
                causes.push(Cause::forbidden(
                    field,
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !matching.is_empty() {
                if options.send_initial_events.is_none() {
                    causes.push(Cause::forbidden(
                        field,
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ));
                }
                if matching != "NotOlderThan" {
                    causes.push(unsupported(&["NotOlderThan"]));
                }
                if !cont.is_empty() {
                    causes.push(Cause::forbidden(
                        field,
                        "resourceVersionMatch is forbidden when continue is provided",
                    ));
                }
            }
        } else if !matching.is_empty() {
            if version.is_empty() {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matching != "Exact" && matching != "NotOlderThan" {
                causes.push(unsupported(&["Exact", "NotOlderThan", ""]));
            }
            if matching == "Exact" && version == "0" {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if !watch && options.send_initial_events.is_some() {
            causes.push(Cause::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes));
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_go_reads_them() {
        assert_eq!(parse_int("30"), Ok(30));
        assert_eq!(parse_int("+7"), Ok(7));
        assert_eq!(parse_int("-1"), Ok(-1));
        assert_eq!(
            parse_int("abc").unwrap_err(),
            "strconv.ParseInt: parsing \"abc\": invalid syntax"
        );
        assert_eq!(
            parse_int("").unwrap_err(),
            "strconv.ParseInt: parsing \"\": invalid syntax"
        );
        assert_eq!(
            parse_int("1.5").unwrap_err(),
            "strconv.ParseInt: parsing \"1.5\": invalid syntax"
        );
        assert_eq!(
            parse_int("99999999999999999999").unwrap_err(),
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
        );
    }

    #[test]
    fn booleans_as_apimachinery_reads_them() {
        for v in ["0", "false", "FALSE", "False"] {
            assert!(!go_bool(v), "{v}");
        }
        for v in ["1", "true", "maybe", "", "yes"] {
            assert!(go_bool(v), "{v}");
        }
    }
}
