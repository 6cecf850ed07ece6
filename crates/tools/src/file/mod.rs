pub mod apply_patch;
pub mod edit_file;
pub mod list_dir;
pub mod project_map;
pub mod read_file;
pub mod write_file;
