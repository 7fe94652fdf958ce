//! The `thresher` binary: parse flags, run the subcommand, map errors to exit codes.

use anyhow::Context;
use clap::Parser;
use std::process::ExitCode;
use thresher::cli::{Cli, Command};
use thresher::cmd;

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
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("thresher: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Crawl(args) => {
            cmd::crawl::run(&args).context("crawl failed")?;
        }
        Command::Status(args) => cmd::status::run(&args).context("status failed")?,
        Command::Clean(args) => {
            cmd::tune_allocator_for_batch();
            return Ok(cmd::clean::run(&args).context("clean failed")?.exit_code());
        }
        Command::Export(args) => {
            cmd::export::run(&args).context("export failed")?;
        }
        Command::Inspect(args) => {
            cmd::inspect::run(&args).context("inspect failed")?;
        }
        Command::Eval(args) => {
            cmd::tune_allocator_for_batch();
            cmd::eval::run(&args).context("eval failed")?
        }
    }
    Ok(ExitCode::SUCCESS)
}
