//! Image automation's engines, with no cluster access: reading an ImageRepository's image
//! name, keeping scanned tag lists, and ImagePolicy's tag selection (Flux's
//! image-reflector-controller's rules). The registry is spoken to through [`crate::oci`].

pub mod expand;
pub mod policy;
pub mod reference;
pub mod setters;
pub mod tags;
pub mod update;
