pub mod remember;
