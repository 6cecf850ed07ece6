pub mod file_search;
pub mod grep_files;
mod walk;
