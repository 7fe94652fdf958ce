//! thresher's one integration test binary (STYLE.md): one module per area.

mod eval_cmd;
