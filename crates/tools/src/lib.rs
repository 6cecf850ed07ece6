//! quiver's native coding tools. One file per tool: an input struct whose doc
//! comments become the argument schema, and a handler implementing
//! [`quiver_engine::Tool`]. [`register_all`] puts every tool in a registry.

use quiver_engine::Registry;

mod util;

pub mod read_file;

/// Registers every native tool.
pub fn register_all(registry: &mut Registry) -> anyhow::Result<()> {
    registry.register(read_file::ReadFile)?;
    Ok(())
}

/// A registry holding every native tool.
pub fn native_registry() -> anyhow::Result<Registry> {
    let mut registry = Registry::new();
    register_all(&mut registry)?;
    Ok(registry)
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
pub(crate) mod test_support;
