pub(crate) mod repo;
pub mod git_status;
pub mod git_diff;
