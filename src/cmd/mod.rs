//! The commands that are more than one build: each beside the others as a module of its own (as Zola
//! and mdBook keep theirs), above the layers it drives. `build`, `check`, `watch` and `serve` are a
//! build, a session or a server over [`crate::build`], [`crate::session`], [`crate::watch`] and
//! [`crate::serve`], wired in `main.rs`.

pub mod release;
pub mod verify;
