//! `spec.pathPattern`: one set of artifacts per directory of a source that matches
//! `@alias/<path with {captures}>`, the artifact templates rendered with the captured values
//! (lowercased in names and labels, as found in `from` and `to`). Messages are
//! source-watcher's.

use std::collections::BTreeMap;
use std::path::Path;

use tidegate_api::artifactgenerator::OutputArtifact;

/// One artifact to build: the rendered template and the capture labels.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Request {
    pub artifact: OutputArtifact,
    pub labels: BTreeMap<String, String>,
}

/// Why expansion failed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PatternError {
    /// Needs a spec change (stalls the generator).
    Terminal(String),
    /// Reading the source failed (retried).
    Walk(String),
}

fn capture_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
fn qualified_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Kubernetes' `IsLabelValue` messages, joined by `; `.
fn label_value_errors(v: &str) -> Option<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !v.is_empty() && !qualified_ok(v) {
        errs.push(LABEL_VALUE.to_string());
    }
    (!errs.is_empty()).then(|| errs.join("; "))
}

/// Kubernetes' `IsLabelKey` messages for a key without prefix, joined by `; `.
fn label_key_errors(k: &str) -> Option<String> {
    let mut errs = Vec::new();
    if k.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !qualified_ok(k) {
        errs.push(NAME_PART.to_string());
    }
    (!errs.is_empty()).then(|| errs.join("; "))
}

/// The capture names of `pattern`, checked as source-watcher checks them.
fn captures(full: &str, pattern: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                let Some(end) = pattern[i + 1..].find('}') else {
                    return Err(format!(
                        "pathPattern {full:?}: invalid capture starting at offset {i}: missing closing brace"
                    ));
                };
                let name = &pattern[i + 1..i + 1 + end];
                if name.is_empty() {
                    return Err(format!("pathPattern {full:?}: empty capture variable"));
                }
                if !capture_name_ok(name) {
                    return Err(format!(
                        "pathPattern {full:?}: capture variable {name:?} must be a valid capture name matching [A-Za-z_][A-Za-z0-9_]*"
                    ));
                }
                if names.iter().any(|n| n == name) {
                    return Err(format!(
                        "pathPattern {full:?}: duplicate capture variable {name:?}"
                    ));
                }
                names.push(name.to_string());
                i += end + 2;
            }
            b'}' => {
                return Err(format!(
                    "pathPattern {full:?}: invalid capture ending at offset {i}: missing opening brace"
                ));
            }
            _ => i += 1,
        }
    }
    Ok(names)
}

/// `tmpl` with each `{name}` replaced from `data`.
fn render(tmpl: &str, data: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let bytes = tmpl.as_bytes();
    let mut i = 0;
    let mut literal_start = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                out.push_str(&tmpl[literal_start..i]);
                let Some(end) = tmpl[i + 1..].find('}') else {
                    return Err(format!(
                        "invalid template {tmpl:?}: capture starting at offset {i} is missing closing brace"
                    ));
                };
                let name = &tmpl[i + 1..i + 1 + end];
                if name.is_empty() {
                    return Err(format!("invalid template {tmpl:?}: empty capture variable"));
                }
                if !capture_name_ok(name) {
                    return Err(format!(
                        "invalid template {tmpl:?}: capture variable {name:?} must be a valid capture name matching [A-Za-z_][A-Za-z0-9_]*"
                    ));
                }
                let Some(value) = data.get(name) else {
                    return Err(format!(
                        "invalid template {tmpl:?}: capture variable {name:?} is not defined by pathPattern"
                    ));
                };
                out.push_str(value);
                i += end + 2;
                literal_start = i;
            }
            b'}' => {
                return Err(format!(
                    "invalid template {tmpl:?}: capture ending at offset {i} is missing opening brace"
                ));
            }
            _ => i += 1,
        }
    }
    out.push_str(&tmpl[literal_start..]);
    Ok(out)
}

/// Every directory under `root` (relative, `/`-separated), in lexical walk order.
fn directories(root: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    for name in names {
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        out.push(child.clone());
        directories(root, &child, out)?;
    }
    Ok(())
}

/// The artifacts of `templates` for every directory of the sources (`dirs` by alias) that
/// `path_pattern` matches.
pub(super) fn expand(
    path_pattern: &str,
    templates: &[OutputArtifact],
    dirs: &std::collections::HashMap<String, std::path::PathBuf>,
) -> Result<Vec<Request>, PatternError> {
    let terminal = PatternError::Terminal;
    let Some((alias, pattern)) = path_pattern
        .strip_prefix('@')
        .and_then(|rest| rest.split_once('/'))
    else {
        return Err(terminal(format!(
            "invalid pathPattern format: {path_pattern}"
        )));
    };
    let Some(root) = dirs.get(alias) else {
        return Err(terminal(format!(
            "pathPattern {path_pattern:?}: source alias {alias} not found in local sources"
        )));
    };
    let names = captures(path_pattern, pattern).map_err(terminal)?;
    for name in &names {
        if let Some(errs) = label_key_errors(name) {
            return Err(terminal(format!(
                "pathPattern {path_pattern:?}: capture variable {name:?} is not a valid Kubernetes label key: {errs}"
            )));
        }
    }
    // The pattern as a regular expression: literal text escaped, each capture one segment.
    let mut regex = String::from("^");
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        regex.push_str(&regex::escape(&rest[..open]));
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .unwrap_or(rest.len() - 1);
        regex.push_str(&format!("(?P<{}>[^/]+)", &rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    regex.push_str(&regex::escape(rest));
    regex.push('$');
    let matcher = regex::Regex::new(&regex).map_err(|e| {
        terminal(format!(
            "pathPattern {path_pattern:?}: failed to compile path pattern: {e}"
        ))
    })?;
    let mut all = Vec::new();
    directories(root, "", &mut all)
        .map_err(|e| PatternError::Walk(format!("failed to walk source directory: {e}")))?;
    let mut requests = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for rel in all {
        let Some(m) = matcher.captures(&rel) else {
            continue;
        };
        let raw: BTreeMap<String, String> = names
            .iter()
            .filter_map(|n| Some((n.clone(), m.name(n)?.as_str().to_string())))
            .collect();
        let lower: BTreeMap<String, String> = raw
            .iter()
            .map(|(k, v)| (k.clone(), v.to_lowercase()))
            .collect();
        for (k, v) in &lower {
            if let Some(errs) = label_value_errors(v) {
                return Err(terminal(format!(
                    "pathPattern {path_pattern:?}: captured value {v:?} for variable {k:?} is not a valid Kubernetes label value: {errs}"
                )));
            }
        }
        for t in templates {
            let failed = |e: String| {
                terminal(format!(
                    "pathPattern {path_pattern:?}: failed to render artifact {} for match {rel}: {e}",
                    t.name
                ))
            };
            let mut artifact = t.clone();
            artifact.name = render(&t.name, &lower).map_err(failed)?;
            for (op, template) in artifact.copy.iter_mut().zip(&t.copy) {
                op.from = render(&template.from, &raw).map_err(failed)?;
                op.to = render(&template.to, &raw).map_err(failed)?;
            }
            if let Some(errs) = super::reconcile::dns1123_subdomain(&artifact.name) {
                return Err(terminal(format!(
                    "pathPattern {path_pattern:?}: rendered artifact name {:?} is not a valid Kubernetes object name: {errs}",
                    artifact.name
                )));
            }
            if let Some(previous) = seen.insert(artifact.name.clone(), rel.clone()) {
                return Err(terminal(format!(
                    "pathPattern {path_pattern:?}: directories {previous:?} and {rel:?} both resolve to artifact name {:?}",
                    artifact.name
                )));
            }
            requests.push(Request {
                artifact,
                labels: lower.clone(),
            });
        }
    }
    Ok(requests)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use tidegate_api::artifactgenerator::CopyOperation;

    use super::*;

    fn template(name: &str, from: &str, to: &str) -> OutputArtifact {
        OutputArtifact {
            name: name.into(),
            copy: vec![CopyOperation {
                from: from.into(),
                to: to.into(),
                exclude: vec!["*.md".into()],
                strategy: Some("Merge".into()),
            }],
            ..Default::default()
        }
    }

    fn repo(
        dirs: &[&str],
        files: &[&str],
    ) -> (tempfile::TempDir, HashMap<String, std::path::PathBuf>) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("repo");
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in files {
            std::fs::write(root.join(f), "x").unwrap();
        }
        (t, HashMap::from([("repo".to_string(), root)]))
    }

    fn terminal_message(r: Result<Vec<Request>, PatternError>) -> String {
        match r {
            Err(PatternError::Terminal(m)) => m,
            other => panic!("expected a terminal error, got {other:?}"),
        }
    }

    /// source-watcher's pathpattern tests.
    #[test]
    fn expands_as_source_watcher() {
        let (_t, dirs) = repo(
            &[
                "apps/auth/envs/dev",
                "apps/auth/envs/prod",
                "apps/payments",
                "apps/ignore",
            ],
            &["apps/auth/envs/ignore"],
        );
        let reqs = expand(
            "@repo/apps/{app}",
            &[template("app-{app}", "apps/{app}", ".")],
            &dirs,
        )
        .unwrap();
        let names: Vec<&str> = reqs.iter().map(|r| r.artifact.name.as_str()).collect();
        assert_eq!(names, ["app-auth", "app-ignore", "app-payments"]);
        assert_eq!(reqs[0].labels["app"], "auth");
        assert_eq!(reqs[0].artifact.copy[0].from, "apps/auth");
        assert_eq!(reqs[0].artifact.copy[0].exclude, ["*.md"]);
        assert_eq!(reqs[0].artifact.copy[0].strategy.as_deref(), Some("Merge"));
        let reqs = expand(
            "@repo/apps/{app}/envs/{env}",
            &[template("{app}-{env}", "x", "y")],
            &dirs,
        )
        .unwrap();
        let names: Vec<&str> = reqs.iter().map(|r| r.artifact.name.as_str()).collect();
        assert_eq!(names, ["auth-dev", "auth-prod"]);
        assert_eq!(reqs[1].labels["env"], "prod");

        for (pattern, want) in [
            ("invalid-no-at-sign", "invalid pathPattern format"),
            ("@unknown/apps/{app}", "not found in local sources"),
            ("@repo/apps/{_app}", "not a valid Kubernetes label key"),
            ("@repo/apps/{}", "empty capture variable"),
            ("@repo/apps/{app-name}", "valid capture name"),
            ("@repo/apps/{1app}", "valid capture name"),
            ("@repo/apps/{app", "missing closing brace"),
            ("@repo/apps/app}", "missing opening brace"),
            ("@repo/apps/{app}/envs/{app}", "duplicate capture variable"),
        ] {
            let m = terminal_message(expand(pattern, &[template("a-{app}", "x", "y")], &dirs));
            assert!(m.contains(want), "{pattern}: {m}");
        }
        let m = terminal_message(expand(
            "@repo/apps/{app}",
            &[template("{missing}", "x", "y")],
            &dirs,
        ));
        assert!(
            m.contains("capture variable \"missing\" is not defined by pathPattern"),
            "{m}"
        );
        let m = terminal_message(expand(
            "@repo/apps/{app}",
            &[template("same", "x", "y")],
            &dirs,
        ));
        assert!(m.contains("both resolve to artifact name"), "{m}");
    }

    #[test]
    fn captured_values_are_lowercased_for_names_only() {
        let (_t, dirs) = repo(&["apps/Auth/envs/Dev", "apps/Payments/envs/Prod"], &[]);
        let reqs = expand(
            "@repo/apps/{app}/envs/{env}",
            &[template(
                "{app}-{env}",
                "@repo/apps/{app}/envs/{env}/**",
                "@artifact/{app}/{env}/",
            )],
            &dirs,
        )
        .unwrap();
        assert_eq!(reqs[0].artifact.name, "auth-dev");
        assert_eq!(reqs[0].labels["app"], "auth");
        assert_eq!(reqs[0].artifact.copy[0].from, "@repo/apps/Auth/envs/Dev/**");
        assert_eq!(reqs[1].artifact.copy[0].to, "@artifact/Payments/Prod/");
        for bad in [".hidden", "my app", &"a".repeat(64)] {
            let (_t, dirs) = repo(&[&format!("apps/{bad}")], &[]);
            let m = terminal_message(expand(
                "@repo/apps/{app}",
                &[template("app-{app}", "x", "y")],
                &dirs,
            ));
            assert!(
                m.contains("not a valid Kubernetes label value"),
                "{bad}: {m}"
            );
        }
    }
}
