//! Go's `text/template`, as Helm uses it.

pub mod lex;
pub mod node;
pub mod number;
pub mod parse;
pub mod quote;
