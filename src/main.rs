//! The `thresher` binary: parse flags, run the subcommand, map errors to exit codes.

use anyhow::Context;
use clap::Parser;
use thresher::cli::{Cli, Command};
use thresher::cmd;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("thresher: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    match cli.command {
        Command::Clean(args) => Ok(cmd::clean::run(&args).context("clean failed")?.exit_code()),
        other => anyhow::bail!("{other:?}: not implemented yet"),
    }
}
