pub mod git_diff;
pub mod git_status;
pub(crate) mod repo;
