//! A broad crawl, many sites of a few pages each, within a small descriptor limit: the crawl
//! does not keep a connection open for every site it has been to.

use std::os::unix::process::CommandExt;

use crate::support::{write_config, write_seeds, Endpoint, TestServer};

/// Sites in the crawl: more than the descriptors the crawler gets.
const SITES: usize = 300;
/// The crawler's descriptor limit (soft and hard): the store, the output and the requests in
/// flight fit; a connection kept for each site visited does not.
const DESCRIPTORS: u64 = 160;

#[test]
fn regression_a_broad_crawl_runs_out_of_descriptors() {
    let server = TestServer::background(SITES, 2);
    for o in server.origins() {
        o.mount(
            "/",
            Endpoint::html(
                "<html><body><p>home</p><a href=\"/a\">a</a> <a href=\"/b\">b</a></body></html>"
                    .to_string(),
            ),
        );
        for page in ["/a", "/b"] {
            o.mount(
                page,
                Endpoint::html(format!("<html><body><p>page {page}</p></body></html>")),
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let seeds: Vec<String> = server.origins().iter().map(|o| o.url("/")).collect();
    let seeds = write_seeds(dir.path(), &seeds);
    let config = write_config(
        dir.path(),
        "[crawl]\ndelay = \"0ms\"\nconcurrency = 16\nmax_pages_per_host = 3\n",
    );
    let mut crawl = super::cli::crawl_cmd(dir.path(), &seeds, &config);
    // SAFETY: between fork and exec only setrlimit runs (async-signal-safe), on a struct owned
    // by the closure.
    unsafe {
        crawl.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: DESCRIPTORS,
                rlim_max: DESCRIPTORS,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = crawl.output().expect("run thresher crawl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for o in server.origins() {
        for page in ["/", "/a", "/b"] {
            assert_eq!(o.hits(page), 1, "{}{page}: {stderr}", o.base());
        }
    }
}
