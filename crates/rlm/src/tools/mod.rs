//! The five RLM tools, one file each.

pub mod rlm_close;
pub mod rlm_configure;
pub mod rlm_eval;
pub mod rlm_open;
pub mod rlm_session_objects;
