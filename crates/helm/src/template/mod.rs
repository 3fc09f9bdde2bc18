//! Go's `text/template`, as Helm uses it.

pub mod builtins;
pub mod exec;
pub mod fmt;
pub mod func;
pub mod lex;
pub mod node;
pub mod number;
pub mod parse;
pub mod quote;
pub mod value;

pub use exec::{MissingKey, Set, State};
pub use func::{Func, FuncMap, Ty};
pub use value::Value;
