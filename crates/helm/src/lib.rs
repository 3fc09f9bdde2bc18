//! Tidegate's Helm chart engine, being built: Go's `text/template` (lexer, parser, executor,
//! builtins, `fmt`), Sprig's functions, then Helm's functions, charts, values and
//! `tidegate helm template`.

pub mod sprig;
pub mod template;
