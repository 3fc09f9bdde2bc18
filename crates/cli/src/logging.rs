//! Logs on stderr: plain text (colours only on a terminal) or JSON, at a level that `up` can
//! raise once it hands over.

use std::io::IsTerminal as _;
use std::sync::OnceLock;

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Registry, reload};

/// The level to switch to at hand-over, and the handle that switches it.
static LATER: OnceLock<(String, reload::Handle<EnvFilter, Registry>)> = OnceLock::new();

/// Installs the logger at `level`; `later` is the level [`hand_over`] switches to.
pub fn init(level: &str, json: bool, later: Option<&str>) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(level)
        .map_err(|e| anyhow::anyhow!("invalid --log-level {level:?}: {e}"))?;
    let (filter, handle) = reload::Layer::new(filter);
    let registry = tracing_subscriber::registry().with(filter);
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if json {
        registry.with(fmt.json()).init();
    } else {
        registry.with(fmt).init();
    }
    if let Some(later) = later {
        let _ = LATER.set((later.to_string(), handle));
    }
    Ok(())
}

/// Switches to the level chosen for after the hand-over, if one was.
pub fn hand_over() {
    if let Some((level, handle)) = LATER.get()
        && let Ok(filter) = EnvFilter::try_new(level)
    {
        let _ = handle.reload(filter);
    }
}
