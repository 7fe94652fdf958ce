//! The `thresher` binary: parse flags, catch signals, run the subcommand, print errors and map
//! them to exit codes. Everything process-wide lives here; the library returns.

use anyhow::Context;
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use thresher::cli::{Cli, Command};
use thresher::cmd;
use thresher::progress::{LogWriter, Mode, Progress};
use tokio_util::sync::CancellationToken;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc reads its options from this symbol (`memory::jemalloc::CONF` says which and why).
#[export_name = "_rjem_malloc_conf"]
static JEMALLOC_CONF: &[u8; 86] = thresher::memory::jemalloc::CONF;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // A panic inside sled while a store opens is caught and reported as a damaged store, with
    // what to do: no panic message for it.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !thresher::store::panic_is_reported_as_damage() {
            default_hook(info);
        }
    }));
    raise_descriptor_limit();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("thresher: {}", causes_once(&e));
            std::process::ExitCode::from(2)
        }
    }
}

/// Raise the soft limit on open descriptors to the hard one, as Go's runtime does: a crawl
/// holds a connection per request in flight, idle ones for the sites it is on, and the store's
/// files, and the soft limit is often 1,024. Where raising fails the limit stays as it was.
#[cfg(unix)]
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    // macOS refuses a soft limit above OPEN_MAX (10,240) even when the hard one is unlimited.
    let most = if cfg!(target_os = "macos") {
        limit.rlim_max.min(10_240)
    } else {
        limit.rlim_max
    };
    if limit.rlim_cur < most {
        limit.rlim_cur = most;
        // SAFETY: setrlimit reads the struct we own; a refusal leaves the limit unchanged.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

#[cfg(not(unix))]
fn raise_descriptor_limit() {}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Crawl(args) => {
            let progress = Progress::new(Mode::detect(args.quiet));
            init_logging(&progress, args.quiet, args.verbose);
            let shutdown = CancellationToken::new();
            stop_on_signals(shutdown.clone());
            // Huge pages' freed heap goes back to the OS after them (peak RSS).
            thresher::memory::enable_release(thresher::memory::jemalloc::purge);
            cmd::crawl::run(&args, shutdown, progress).context("crawl failed")?;
        }
        Command::Status(args) => cmd::status::run(&args).context("status failed")?,
        Command::Clean(args) => {
            return cmd::clean::run(&args).context("clean failed");
        }
        Command::Export(args) => {
            cmd::export::run(&args).context("export failed")?;
        }
        Command::Inspect(args) => {
            cmd::inspect::run(&args).context("inspect failed")?;
        }
        Command::Changes(args) => cmd::changes::run(&args).context("changes failed")?,
        Command::Cluster(args) => cmd::cluster::run(&args).context("cluster failed")?,
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut cmd, "thresher", &mut std::io::stdout());
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("cannot render the man page")?;
            // `thresher man | head`: a closed pipe is the reader's choice.
            let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), &page);
        }
        Command::Eval(args) => cmd::eval::run(&args).context("eval failed")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Log lines (`THRESHER_LOG`, default `thresher=info,warn`; errors only with `--quiet`) print
/// through the progress display so they do not tear its bars; colour only on a terminal.
fn init_logging(progress: &Arc<Progress>, quiet: bool, verbose: u8) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "thresher=info,warn",
        (false, 1) => "thresher=debug,info",
        (false, _) => "thresher=trace,debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("THRESHER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(LogWriter(progress.clone()))
        // Colour codes only on a terminal: a log redirected to a file stays plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .try_init();
}

/// SIGINT, SIGTERM and SIGHUP all take the graceful path: the first asks the crawl to finish
/// the requests in flight and save its state (the run then ends with its summary and the
/// resume command); a second quits at once (sled's log is crash-safe: only the fetches in
/// flight are lost).
fn stop_on_signals(shutdown: CancellationToken) {
    let installed = ctrlc::set_handler(move || {
        if shutdown.is_cancelled() {
            eprintln!("Quitting now; run the same command to resume.");
            std::process::exit(130);
        }
        shutdown.cancel();
    });
    if let Err(e) = installed {
        eprintln!("thresher: cannot catch signals ({e}); Ctrl-C will stop the crawl at once");
    }
}

/// The error and its causes, each said once: a cause whose text its parent's message already
/// holds (a thiserror `{source}` in the message) is not printed again ("X: X").
fn causes_once(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
