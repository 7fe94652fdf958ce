//! The one integration test binary (STYLE.md): each module tests one command or component end to end.

mod clean_cmd;
