//! `images`: new names, tags and digests for container images.
//!
//! Like kustomize, an entry rewrites every `image` of every list under a `containers` or
//! `initContainers` key anywhere in an object, then the fields of the `images` configuration.
//! The entry's `name` is matched as a regular expression against the image name.

use regex::Regex;
use serde_json::{Map, Value};

use crate::error::{Result, invalid};
use crate::fieldspec::FieldSpec;
use crate::kustomization::Image;
use crate::resmap::ResMap;

/// Applies one `images` entry.
pub fn set(res: &mut ResMap, image: &Image, specs: &[FieldSpec]) -> Result<()> {
    let pattern = format!(
        "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
        image.name
    );
    let re = Regex::new(&pattern).map_err(|e| {
        invalid(format!(
            "images: name {:?} is not a valid pattern: {e}",
            image.name
        ))
    })?;
    let update = |v: &mut Value| {
        if let Value::String(s) = v
            && re.is_match(s)
        {
            *s = rewrite(s, image);
        }
    };
    for r in &mut res.resources {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        legacy_walk(&mut r.obj, &update);
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.applies_to(&gvk)) {
            let mut no_create = spec.clone();
            no_create.create = false;
            no_create.visit(&mut r.obj, &mut |v| {
                update(v);
                Ok(())
            })?;
        }
    }
    Ok(())
}

fn legacy_walk(m: &mut Map<String, Value>, update: &dyn Fn(&mut Value)) {
    for (k, v) in m.iter_mut() {
        match v {
            Value::Array(items) if k == "containers" || k == "initContainers" => {
                for item in items.iter_mut() {
                    if let Value::Object(c) = item {
                        if let Some(image) = c.get_mut("image") {
                            update(image);
                        }
                        legacy_walk(c, update);
                    } else if let Value::Array(_) = item {
                        walk_value(item, update);
                    }
                }
            }
            other => walk_value(other, update),
        }
    }
}

fn walk_value(v: &mut Value, update: &dyn Fn(&mut Value)) {
    match v {
        Value::Object(m) => legacy_walk(m, update),
        Value::Array(items) => {
            for i in items.iter_mut() {
                walk_value(i, update);
            }
        }
        _ => {}
    }
}

/// Splits `name[:tag][@digest]`, looking for `:` and `@` only after the first `/`.
pub fn split(image: &str) -> (&str, &str, &str) {
    let start = match image.find('/') {
        Some(i) if i > 0 => i,
        _ => 0,
    };
    let rest = &image[start..];
    match (rest.find(':'), rest.find('@')) {
        (None, None) => (image, "", ""),
        (Some(c), None) => (&image[..start + c], &rest[c + 1..], ""),
        (None, Some(a)) => (&image[..start + a], "", &rest[a + 1..]),
        (Some(c), Some(a)) if a < c => (&image[..start + a], "", &rest[a + 1..]),
        (Some(c), Some(a)) => (&image[..start + c], &rest[c + 1..a], &rest[a + 1..]),
    }
}

fn rewrite(current: &str, image: &Image) -> String {
    let (name, tag, digest) = split(current);
    let name = if image.new_name.is_empty() {
        name
    } else {
        image.new_name.as_str()
    };
    let (tag, digest) = match (image.new_tag.is_empty(), image.digest.is_empty()) {
        (false, false) => (image.new_tag.as_str(), image.digest.as_str()),
        (false, true) => (image.new_tag.as_str(), ""),
        (true, false) => ("", image.digest.as_str()),
        (true, true) => (tag, digest),
    };
    let mut out = name.to_string();
    if !tag.is_empty() {
        out.push(':');
        out.push_str(tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(digest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_kustomize() {
        assert_eq!(split("nginx"), ("nginx", "", ""));
        assert_eq!(split("nginx:1.2"), ("nginx", "1.2", ""));
        assert_eq!(split("host:5000/app"), ("host:5000/app", "", ""));
        assert_eq!(
            split("host:5000/app:v1@sha256:ab"),
            ("host:5000/app", "v1", "sha256:ab")
        );
        assert_eq!(split("app@sha256:ab"), ("app", "", "sha256:ab"));
    }
}
