// The `diagnostics` tool shares its family's name.
#![allow(clippy::module_inception)]
pub mod diagnostics;
pub mod run_tests;
