//! quiver-agent's integration tests, linked into one binary (one link of the
//! dependency tree instead of one per file). Each module is one area; all run
//! against the scripted model server (feature `scripted`).

mod support;

mod anthropic_wire;
mod config;
mod fixtures;
mod openai_wire;
mod robustness;
mod run_loop;
