//! Integration tests of quiver-durable (one binary, as for every crate).
mod crash;
