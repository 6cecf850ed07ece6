//! quiver's interactive terminal front end. The same run loop, providers,
//! tool surface, approvals and transcripts as `quiver exec` (one engine, two
//! front ends): the state ([`app`]) takes run events and keys and gives back
//! actions; [`render`] draws it; [`runner`] ties both to a terminal and to
//! the engine through [`driver`].

pub mod app;
pub mod approval;
pub mod bench;
pub mod cells;
mod commands;
pub mod composer;
pub mod driver;
pub mod event;
mod highlight;
mod history;
mod keys;
pub mod markdown;
pub mod palette;
pub mod render;
pub mod runner;
pub mod slash;
pub mod terminal;
pub mod theme;
pub mod work;
mod wrap;

pub use app::App;
pub use driver::{Driver, DriverSetup};
pub use runner::run;
