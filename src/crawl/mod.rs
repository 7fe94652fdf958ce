//! The crawler: seeds → frontier → politeness gate → fetch → parse → links back to the frontier,
//! pages and path sets to the store.

pub mod robots;
pub mod scope;
pub mod seeds;
pub mod sitemap;
pub mod url;
