//! Linux /proc readers for the crawl benchmark: a process's peak RSS (VmHWM) and CPU time.

use std::time::Duration;

/// Clock ticks per second for /proc/*/stat times (USER_HZ: 100 on every mainstream Linux).
const TICKS_PER_SEC: u64 = 100;

/// `VmHWM` (peak resident set) of `pid` in KiB; `None` once the process is gone or reaped.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_field(&format!("/proc/{pid}/status"), "VmHWM:")
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
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the full line: 11 and 12 after ") ".
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SEC,
    ))
}
