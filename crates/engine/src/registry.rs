//! Registered tools: spec, handler and compiled argument validator, by canonical name.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::bail;

use crate::manifest::Manifest;
use crate::schema::ArgValidator;
use crate::spec::ToolSpec;
use crate::tool::{DynTool, SharedTool};

pub struct RegisteredTool {
    pub spec: ToolSpec,
    pub handler: SharedTool,
    pub(crate) validator: ArgValidator,
}

#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    pub fn register<T: DynTool + 'static>(&mut self, tool: T) -> anyhow::Result<()> {
        self.register_shared(Arc::new(tool))
    }

    pub fn register_shared(&mut self, handler: SharedTool) -> anyhow::Result<()> {
        let spec = handler.spec();
        self.register_with_spec(spec, handler)
    }

    /// Registers a handler under an explicit spec (MCP tools compute theirs).
    pub fn register_with_spec(&mut self, spec: ToolSpec, handler: SharedTool) -> anyhow::Result<()> {
        if self.tools.contains_key(&spec.name) {
            bail!("tool `{}` is registered twice", spec.name);
        }
        // A server exposed directly checks its own arguments: its answer to a
        // bad call is what a direct call would get (quiver's would differ).
        let validator =
            if spec.is_direct() { ArgValidator::objects_only() } else { ArgValidator::new(&spec.input_schema) };
        self.tools.insert(spec.name.clone(), RegisteredTool { spec, handler, validator });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Tools in name order.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Applies manifest `[tools.NAME]` metadata (domain, searchable snippet).
    pub fn apply_overlays(&mut self, manifest: &Manifest) {
        for (name, overlay) in &manifest.tools {
            if let Some(tool) = self.tools.get_mut(name) {
                // Domain is a search facet only: the gate decides by capabilities,
                // which no overlay can set.
                if let Some(domain) = overlay.domain {
                    tool.spec.domain = domain;
                }
                if let Some(snippet) = &overlay.prompt_snippet {
                    tool.spec.prompt_snippet = Some(snippet.clone());
                }
            }
        }
    }
}
