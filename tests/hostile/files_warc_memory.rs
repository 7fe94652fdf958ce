//! Issue 10, "`clean --warc` holds every page in memory": the bodies of a WARC wait on disk
//! until their batch is cleaned, so peak memory follows one batch of sites, not the WARC.

use std::io::Write;
use std::process::Command;

use super::files_common::*;
use crate::support::thresher_bin;

/// Peak RSS (bytes) of `cmd` run to the end: `wait4` on its pid, so other tests' children in
/// this process do not count.
// wait4 reaps the child itself (std's `wait` would lose its rusage).
#[allow(clippy::zombie_processes)]
fn peak_rss(mut cmd: Command) -> (i32, u64) {
    let child = cmd.spawn().expect("spawn thresher");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value; wait4 writes it for our own child, which
    // `child` (never waited on through std) does not reap.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; `pid` is our child.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss as u64 * 1024)
}

/// Write a gzip'd WARC of `n` one-page sites of 1 MB each (a comment pads each page, so their
/// DOMs are small) and return the peak RSS of `clean --warc` over it.
fn clean_rss(work: &std::path::Path, n: usize) -> u64 {
    let file = work.join(format!("{n}.warc.gz"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let pad = "x".repeat(1 << 20);
    for i in 0..n {
        let html = format!(
            "<!doctype html><html><head><title>P{i}</title></head><body><p>Story {i} of the \
             harbour council.</p><!--{pad}--></body></html>"
        );
        let rec = warc_response(&format!("http://h{i}.example/p{i}"), &html);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&rec).unwrap();
        w.write_all(&gz.finish().unwrap()).unwrap();
    }
    w.into_inner().unwrap().sync_all().unwrap();
    let out = work.join(format!("out{n}"));
    let mut cmd = Command::new(thresher_bin());
    cmd.args(["clean", "--warc", arg(&file), "--out", arg(&out), "-q"])
        .stdout(std::process::Stdio::null());
    let (code, rss) = peak_rss(cmd);
    assert_eq!(code, 0);
    assert_eq!(
        entries(&out).len(),
        n,
        "every site cleaned, the spool removed"
    );
    rss
}

/// Regression: `clean --warc` read every record's body into memory before cleaning (100 × 16
/// MB took 4.9 GB). Here 48 MB of bodies in 48 sites must cost far less than 48 MB over the
/// run of a one-record WARC (memory figures for the case: docs/robustness.md).
#[test]
fn files_warc_bodies_are_not_all_held_in_memory() {
    let (_tmp, work) = nested();
    let one = clean_rss(&work, 1);
    let many = clean_rss(&work, 48);
    assert!(
        many < one + (16 << 20),
        "peak RSS {} MB for 48 MB of WARC bodies, {} MB for 1 MB",
        many >> 20,
        one >> 20
    );
}

/// A spool left by a killed `clean --warc` (its process gone) is removed by the next one; a
/// live process's spool is left alone.
#[test]
fn files_warc_spool_of_a_killed_run_is_removed() {
    let (_tmp, work) = nested();
    let out = work.join("out");
    let stale = out.join(".thresher-spool-2147483646");
    let live = out.join(format!(".thresher-spool-{}", std::process::id()));
    for d in [&stale, &live] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("0.lz4"), "x").unwrap();
    }
    let file = work.join("x.warc");
    let mut warc = Vec::new();
    for i in 0..3 {
        warc.extend(warc_response(
            &format!("http://a.example/p{i}"),
            &page(i, 3),
        ));
    }
    std::fs::write(&file, warc).unwrap();
    let o = thresher(&["clean", "--warc", arg(&file), "--out", arg(&out), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "the dead run's spool is gone");
    assert!(live.exists(), "a live process's spool stays");
}
