//! Content extraction beyond the template: what survives template removal is cut into blocks
//! (`blocks`) weighed in tokens (`tokens`); the page's content region is located (`region`, with
//! markup `hints`) and pruned (`prune`), so related-article lists, bylines, share bars, comment
//! widgets and pagers go too.

pub mod blocks;
pub mod classify;
pub mod features;
pub mod hints;
pub mod markup;
pub mod model;
pub mod prune;
pub mod region;
pub mod tokens;
