//! The Git reference flags shared by `create source git` and `build artifact`.

use serde_json::{Map, Value, json};
use tidegate_source::git::GitReference;

/// `--branch`, `--tag`, `--tag-semver`, `--commit`.
#[derive(clap::Args, Debug, Clone)]
pub struct RefArgs {
    /// Git branch (`master` when no reference is given, as in Flux).
    #[arg(long)]
    pub branch: Option<String>,
    /// Git tag.
    #[arg(long)]
    pub tag: Option<String>,
    /// Git tag semver range.
    #[arg(long)]
    pub tag_semver: Option<String>,
    /// Git commit SHA.
    #[arg(long)]
    pub commit: Option<String>,
}

impl RefArgs {
    /// The reference to fetch.
    pub fn reference(&self) -> GitReference {
        GitReference {
            branch: self.branch.clone(),
            tag: self.tag.clone(),
            semver: self.tag_semver.clone(),
            name: None,
            commit: self.commit.clone(),
        }
    }

    /// A GitRepository's `spec.ref` as Flux writes it: keys in alphabetical order,
    /// `branch: master` when no flag is given.
    pub fn spec_ref(&self) -> Value {
        let mut r = Map::new();
        for (key, value) in [
            ("branch", &self.branch),
            ("commit", &self.commit),
            ("semver", &self.tag_semver),
            ("tag", &self.tag),
        ] {
            if let Some(v) = value {
                r.insert(key.into(), json!(v));
            }
        }
        if r.is_empty() {
            r.insert(
                "branch".into(),
                json!(tidegate_source::git::select::DEFAULT_BRANCH),
            );
        }
        Value::Object(r)
    }
}
