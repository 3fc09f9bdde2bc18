//! The example repository (`examples/` in the source tree), compiled into the binary so that
//! `tidegate up --example` works from any directory.

/// Every file of the example, by path relative to `examples/`.
pub const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../../examples/README.md")),
    (
        "clusters/local/kustomization.yaml",
        include_str!("../../../examples/clusters/local/kustomization.yaml"),
    ),
    (
        "clusters/local/infrastructure.yaml",
        include_str!("../../../examples/clusters/local/infrastructure.yaml"),
    ),
    (
        "clusters/local/apps.yaml",
        include_str!("../../../examples/clusters/local/apps.yaml"),
    ),
    (
        "infrastructure/kustomization.yaml",
        include_str!("../../../examples/infrastructure/kustomization.yaml"),
    ),
    (
        "infrastructure/namespaces.yaml",
        include_str!("../../../examples/infrastructure/namespaces.yaml"),
    ),
    (
        "infrastructure/crds/greetings.yaml",
        include_str!("../../../examples/infrastructure/crds/greetings.yaml"),
    ),
    (
        "apps/base/kustomization.yaml",
        include_str!("../../../examples/apps/base/kustomization.yaml"),
    ),
    (
        "apps/base/deployment.yaml",
        include_str!("../../../examples/apps/base/deployment.yaml"),
    ),
    (
        "apps/base/service.yaml",
        include_str!("../../../examples/apps/base/service.yaml"),
    ),
    (
        "apps/base/greeting.yaml",
        include_str!("../../../examples/apps/base/greeting.yaml"),
    ),
    (
        "apps/staging/kustomization.yaml",
        include_str!("../../../examples/apps/staging/kustomization.yaml"),
    ),
    (
        "apps/production/kustomization.yaml",
        include_str!("../../../examples/apps/production/kustomization.yaml"),
    ),
];

/// The path the flux-system Kustomization builds.
pub const PATH: &str = "./clusters/local";

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }

    #[test]
    fn every_file_of_the_example_is_embedded() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut on_disk = Vec::new();
        walk(&base, &base, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }
}
