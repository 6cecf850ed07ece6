pub mod grep_files;
pub mod file_search;
