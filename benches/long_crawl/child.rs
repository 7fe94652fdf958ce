//! The crawler child process of the long-crawl benchmark, seen from outside: reaping it with its
//! rusage (the kernel's peak RSS, exact), signals, and the disk it uses (du of a directory, free
//! space of its file system).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Child;

/// How a reaped child ended.
#[derive(Clone, Debug)]
pub struct Exit {
    /// Exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// `ru_maxrss`: the child's peak resident set in KiB.
    pub max_rss_kib: u64,
    /// CPU time (user + system) of the child, all its threads.
    pub cpu: std::time::Duration,
}

impl Exit {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "unknown end".into(),
        }
    }
}

/// Reap `child` if it has ended (`block`: wait until it does). `std::process::Child` cannot
/// give the rusage, so this calls `wait4` itself; do not call `Child::wait` afterwards.
pub fn reap(child: &Child, block: bool) -> std::io::Result<Option<Exit>> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    // SAFETY: `status` and `usage` are valid, writable and live for the call; `pid` is our
    // own unreaped child.
    let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if r == 0 {
        return Ok(None);
    }
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Some(Exit {
        code,
        signal,
        max_rss_kib: usage.ru_maxrss.max(0) as u64,
        cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
    }))
}

fn timeval(t: libc::timeval) -> std::time::Duration {
    std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
        + std::time::Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Send `signal` (e.g. `libc::SIGTERM`) to `child`.
pub fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid; a failure (already exited) is harmless.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

/// Bytes under `dir`: (apparent size, allocated on disk as du counts it) and the file count.
pub fn du(dir: &Path) -> (u64, u64, u64) {
    let (mut apparent, mut allocated, mut files) = (0, 0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                apparent += m.len();
                allocated += m.blocks() * 512;
                files += 1;
            }
        }
    }
    (apparent, allocated, files)
}

/// Free bytes (for unprivileged users) on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero `statvfs` is a valid value of this plain C struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `s` is writable for the call.
    let r = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    (r == 0).then(|| s.f_bavail as u64 * s.f_frsize as u64)
}
