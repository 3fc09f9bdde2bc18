//! Tidegate's kustomize engine: builds a kustomization into Kubernetes objects, printing the
//! same YAML stream as `kubectl kustomize` (kustomize v5.5), with no external binary.
//!
//! Safe on untrusted repositories: every file is read through a [`BuildRoot`] that refuses paths
//! leaving it (`..`, absolute paths, symlinks); remote bases, plugins, exec functions and Helm
//! chart inflation are refused with a clear error. The engine holds no global state: any number
//! of builds may run at once on different threads.
//!
//! ```no_run
//! use tidegate_kustomize::{Builder, Options};
//! let builder = Builder::new(std::path::Path::new("repo"), Options::default())?;
//! let resources = builder.build(std::path::Path::new("repo/overlays/prod"))?;
//! print!("{}", resources.to_yaml());
//! # Ok::<(), tidegate_kustomize::Error>(())
//! ```

pub mod envsubst;
pub mod error;
mod fieldspec;
mod flux;
pub mod fs;
mod generate;
pub mod kustomization;
mod plugins;
pub mod postbuild;
pub mod resmap;
pub mod resource;
mod scope;
mod target;
mod transform;
pub mod yaml;

pub use error::{Error, ErrorKind, Result};
pub use flux::Overlay;
pub use fs::{BuildRoot, Filter, ReadFilter};
pub use resmap::ResMap;
pub use target::{Builder, LoadRestrictions, Options};

impl ResMap {
    /// The build's output as a YAML stream, as `kubectl kustomize` prints it.
    pub fn to_yaml(&self) -> String {
        yaml::to_stream(self.resources.iter().map(|r| &r.obj))
    }
}

/// Builds `dir` with `root` as the build root.
pub fn build(root: &std::path::Path, dir: &std::path::Path, options: Options) -> Result<ResMap> {
    Builder::new(root, options)?.build(dir)
}
