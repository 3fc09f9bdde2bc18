//! Go's `text/template`, as Helm uses it.

pub mod lex;
