//! What every writer of locref's text shares and nothing of the site: finding the first byte of interest
//! in a long text and writing the runs between replacements ([`bytescan`]), and the one HTML escape
//! table ([`escape`]). The pages' templates, the feeds, the figures and the link check use it; it
//! depends on no other crate of locref, which Cargo holds.

#![warn(unreachable_pub)]

pub mod bytescan;
pub mod escape;
