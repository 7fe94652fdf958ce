//! Linux /proc readers for the crawl benchmarks: a process's resident set (VmRSS) and its peak
//! (VmHWM), and CPU time of a process or of some of its threads.

// `crawl` and `long_crawl` each use a part of this module.
#![allow(dead_code)]

use std::time::Duration;

/// Clock ticks per second for /proc/*/stat times (USER_HZ: 100 on every mainstream Linux).
const TICKS_PER_SEC: u64 = 100;

/// `VmHWM` (peak resident set) of `pid` in KiB; `None` once the process is gone or reaped.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_field(&format!("/proc/{pid}/status"), "VmHWM:")
}

/// `VmRSS` (resident set now) of `pid` in KiB; `None` once the process is gone or reaped.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_field(&format!("/proc/{pid}/status"), "VmRSS:")
}

fn status_field(path: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// User + system CPU time of `pid` ("self" for this process).
pub fn cpu_time(pid: &str) -> Option<Duration> {
    stat_cpu(&format!("/proc/{pid}/stat"))
}

/// CPU time of this process's threads whose name starts with `prefix` (e.g. the test server's
/// runtime workers, named `test-server`).
pub fn threads_cpu_time(prefix: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    tasks
        .filter_map(Result::ok)
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim_end().starts_with(prefix))
        })
        .filter_map(|t| stat_cpu(&t.path().join("stat").to_string_lossy()))
        .sum()
}

fn stat_cpu(path: &str) -> Option<Duration> {
    stat_user_system(path).map(|(u, s)| u + s)
}

/// User and system CPU time of `pid` apart ("self" for this process): the system share of a
/// crawl is mostly file creation (docs/quality.md, inline cost).
pub fn cpu_user_system(pid: &str) -> Option<(Duration, Duration)> {
    stat_user_system(&format!("/proc/{pid}/stat"))
}

fn stat_user_system(path: &str) -> Option<(Duration, Duration)> {
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the full line: 11 and 12 after ") ".
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let ms = |ticks: u64| Duration::from_millis(ticks * 1000 / TICKS_PER_SEC);
    Some((ms(utime), ms(stime)))
}
