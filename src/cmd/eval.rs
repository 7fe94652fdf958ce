//! `thresher eval DATASET_DIR... [--detector all] [--out OUT]`: run detectors over datasets with
//! gold text (`eval::evaluate`, the library's) and print each dataset's comparison table, then,
//! with several datasets, the overall one. `--detector text` is TEXT with the configured
//! `template.algorithm` (`--config`, `--set`).

use crate::cli::EvalArgs;
use crate::config::{ConfigError, Overrides};
use crate::eval::report::{dataset_name, SiteDone};
use crate::eval::{evaluate, parse_detectors, render_overall, Dataset, DatasetError, EvalError};

#[derive(Debug, thiserror::Error)]
pub enum EvalCmdError {
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

pub fn run(args: &EvalArgs) -> Result<(), EvalCmdError> {
    let config = super::settings(&args.settings, Overrides::default())?;
    let detectors = parse_detectors(&args.detector, config.template.algorithm)?;
    let several = args.dataset.len() > 1;
    let quiet = args.quiet;
    let progress = move |d: SiteDone<'_>| {
        if !quiet {
            eprintln!(
                "eval: {}: {} pages, {:.1} MB, parsed in {:.2}s",
                d.site,
                d.pages,
                d.bytes as f64 / 1e6,
                d.parse.as_secs_f64()
            );
        }
    };
    let mut reports = Vec::with_capacity(args.dataset.len());
    for dir in &args.dataset {
        let dataset = Dataset::open(dir)?;
        let out = args.out.as_deref().map(|o| {
            if several {
                o.join(dataset_name(dir))
            } else {
                o.to_path_buf()
            }
        });
        let report = evaluate(&dataset, &detectors, out.as_deref(), &progress)?;
        print!("{}", report.render());
        if several {
            println!();
        }
        reports.push(report);
    }
    if several {
        print!("{}", render_overall(&reports));
    }
    Ok(())
}
