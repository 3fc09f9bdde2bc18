//! Tidegate's Helm chart engine, being built: Go's `text/template` first (its lexer so far),
//! then Sprig and Helm's functions, charts, values and `tidegate helm template`.

pub mod template;
