pub mod read_file;
pub mod list_dir;
pub mod write_file;
pub mod edit_file;
pub mod apply_patch;
pub mod project_map;
