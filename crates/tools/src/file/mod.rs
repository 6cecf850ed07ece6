pub mod apply_patch;
pub mod edit_file;
pub mod fim_edit;
pub mod list_dir;
pub mod project_map;
pub(crate) mod protected_write;
pub mod read_file;
pub(crate) mod secret_read;
pub mod write_file;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod hostile_fs_tests;
