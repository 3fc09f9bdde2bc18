//! The CEL environment Tidegate evaluates expressions in (Flux's health checks, CRD
//! validation rules): the standard library with cel-go's string, encoder, list and math
//! extensions.

use std::sync::{Arc, LazyLock};

pub use cel::{Context, Env, Program, Value};

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    for ext in [
        cel::extensions::strings as fn(&mut Env) -> Result<(), cel::DeclarationError>,
        cel::extensions::encoders,
        cel::extensions::lists,
        cel::extensions::math,
    ] {
        // Registration fails only on a name declared twice; these extensions declare
        // disjoint names, so a failure would leave the standard library working.
        let _ = env.add_extension(ext);
    }
    Arc::new(env)
});

/// The shared environment.
pub fn env() -> Arc<Env> {
    ENV.clone()
}

/// A fresh activation over the shared environment.
pub fn context() -> Context<'static, 'static> {
    Context::with_env(ENV.clone())
}
