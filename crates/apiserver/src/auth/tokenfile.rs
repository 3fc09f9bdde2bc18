//! Static bearer tokens from a file (`--token-auth-file`), in kube-apiserver's CSV format: one
//! user per line, `token,user,uid[,"group1,group2"]`; more columns are ignored. Read once at
//! start, as kube-apiserver reads it.

use std::collections::HashMap;
use std::path::Path;

use super::UserInfo;

/// The token file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// It could not be read.
    #[error("token file '{path}': {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is malformed.
    #[error("token file '{path}' line {line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Splits one CSV record as Go's `encoding/csv` reads it with `TrimLeadingSpace`: fields
/// separated by commas, double-quoted fields may hold commas and `""` for a quote.
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("extraneous or missing \" in quoted-field".into()),
                }
            }
            match chars.next() {
                None => {
                    out.push(field);
                    return Ok(out);
                }
                Some(',') => out.push(field),
                Some(_) => return Err("extraneous or missing \" in quoted-field".into()),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        out.push(field);
                        return Ok(out);
                    }
                    Some(',') => break,
                    Some('"') => return Err("bare \" in non-quoted-field".into()),
                    Some(c) => field.push(c),
                }
            }
            out.push(field);
        }
    }
}

/// Parses a token file's text (`path` names it in errors): the users by token. Empty tokens
/// are skipped and a repeated token keeps its last line, as kube-apiserver does (with a
/// warning).
pub fn parse(path: &str, text: &str) -> Result<HashMap<String, UserInfo>, TokenFileError> {
    let mut users = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |message: String| TokenFileError::Line {
            path: path.to_string(),
            line: i + 1,
            message,
        };
        let record = fields(line).map_err(err)?;
        if record.len() < 3 {
            return Err(err(format!(
                "must have at least 3 columns (token, user name, user uid), found {}",
                record.len()
            )));
        }
        let token = record[0].clone();
        if token.is_empty() {
            tracing::warn!(path, line = i + 1, "empty token in the token file; skipped");
            continue;
        }
        let mut groups: Vec<String> = record
            .get(3)
            .map(|g| {
                g.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        groups.push("system:authenticated".into());
        let user = UserInfo {
            username: record[1].clone(),
            uid: record[2].clone(),
            groups,
            extra: serde_json::json!({}),
        };
        if users.insert(token, user).is_some() {
            tracing::warn!(
                path,
                line = i + 1,
                "duplicate token in the token file; the last wins"
            );
        }
    }
    Ok(users)
}

/// Reads and parses the token file at `path`.
pub fn load(path: &Path) -> Result<HashMap<String, UserInfo>, TokenFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&shown, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_token_file_lines() {
        let users = parse(
            "tokens.csv",
            "abc,jane,1001,\"devs, ops\"\n\n  def,joe,1002\nghi,\"bob, the builder\",3,grp,ignored\n,nobody,4\n",
        )
        .expect("parses");
        assert_eq!(users.len(), 3);
        assert_eq!(users["abc"].username, "jane");
        assert_eq!(users["abc"].uid, "1001");
        assert_eq!(
            users["abc"].groups,
            vec!["devs", "ops", "system:authenticated"]
        );
        assert_eq!(users["def"].groups, vec!["system:authenticated"]);
        assert_eq!(users["ghi"].username, "bob, the builder");
        assert_eq!(users["ghi"].groups, vec!["grp", "system:authenticated"]);
        let e = parse("tokens.csv", "ok,u,1\nshort,user\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "token file 'tokens.csv' line 2: must have at least 3 columns (token, user name, user uid), found 2"
        );
        let e = parse("t.csv", "a,\"open,1\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
