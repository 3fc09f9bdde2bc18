//! Tidegate's Helm chart engine: Go's `text/template` (lexer, parser, executor, builtins,
//! `fmt`), Sprig's functions, charts and values, Helm's rendering, and `helm template`.

pub mod action;
pub mod chart;
pub mod engine;
pub mod log;
pub mod release;
pub mod repo;
pub mod sprig;
pub mod storage;
pub mod template;
pub mod values;

mod parallel;

pub use parallel::set_one_shot;
