//! The one integration-test binary (STYLE.md): each module is a group of tests.

mod server_selftest;
mod support;
