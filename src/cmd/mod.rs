//! One module per `thresher` subcommand: each turns its `cli` args into work and a summary.
//!
//! Owns: turning flags into work, the summaries on stdout, and what each command reads and
//! writes. The top of the library: it may use every module below it, and nothing below imports
//! `cmd`, so what two commands share lives lower down (`output`, `store`, `template::engine`).
//! Layers: docs/design.md, "Layers: who may import whom".

use crate::cli::{ConfigArgs, TemplateArgs};
use crate::config::{Config, ConfigError, Overrides};

pub mod changes;
pub mod clean;
pub mod cluster;
pub mod crawl;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod status;

/// The settings a command runs with: the defaults, `--config FILE` over them, then `flags` (the
/// command's own flags as overrides), then every `--set KEY=VALUE` (the last word).
pub fn settings(args: &ConfigArgs, mut flags: Overrides) -> Result<Config, ConfigError> {
    for arg in &args.set {
        flags.set_arg(arg)?;
    }
    Config::load(args.config.as_deref(), &flags)
}

/// A report as `--json` prints it: pretty JSON and a final newline.
pub fn json_text<T: serde::Serialize>(report: &T) -> String {
    let mut text = serde_json::to_string_pretty(report)
        .expect("invariant: reports are plain data with string keys, so they serialise");
    text.push('\n');
    text
}

/// `--detector` and `--algorithm` as overrides of `template.detector` / `template.algorithm`.
pub fn template_overrides<'o>(o: &'o mut Overrides, args: &TemplateArgs) -> &'o mut Overrides {
    o.set_some("template.detector", args.detector.clone(), "--detector")
        .set_some("template.algorithm", args.algorithm.clone(), "--algorithm")
}

/// `--data DIR` as an override of `crawl.data_dir` (the commands that read a data directory).
pub fn data_override(data: Option<&std::path::Path>) -> Overrides {
    let mut o = Overrides::default();
    o.set_some(
        "crawl.data_dir",
        data.map(|p| p.to_string_lossy().into_owned()),
        "--data",
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Detector;
    use crate::template::Algorithm;

    fn config_file(text: &str) -> (tempfile::TempDir, ConfigArgs) {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("f.toml");
        std::fs::write(&path, text).expect("write");
        let args = ConfigArgs {
            config: Some(path),
            set: Vec::new(),
        };
        (dir, args)
    }

    #[test]
    fn the_file_decides_the_detector_unless_a_flag_or_set_does() {
        let (_dir, mut args) = config_file("[template]\ndetector = \"node-hash\"\n");
        let detector = |args: &ConfigArgs, flags: &TemplateArgs| {
            let mut o = Overrides::default();
            template_overrides(&mut o, flags);
            settings(args, o).expect("valid").template.detector
        };
        let none = TemplateArgs::default();
        assert_eq!(detector(&args, &none), Detector::NodeHash);
        let text = TemplateArgs {
            detector: Some("text".into()),
            algorithm: Some("text-hash".into()),
        };
        assert_eq!(detector(&args, &text), Detector::Text(Algorithm::TextHash));
        args.set.push("template.detector=shingles".into());
        assert_eq!(
            detector(&args, &text),
            Detector::Shingles,
            "--set is the last word"
        );
    }

    #[test]
    fn data_and_unknown_keys_go_through_the_same_path() {
        let (_dir, args) = config_file("[crawl]\ndata_dir = \"from-file\"\n");
        let c = settings(&args, data_override(None)).expect("valid");
        assert_eq!(c.crawl.data_dir, std::path::PathBuf::from("from-file"));
        let c = settings(&args, data_override(Some("flag".as_ref()))).expect("valid");
        assert_eq!(c.crawl.data_dir, std::path::PathBuf::from("flag"));
        let (_dir, args) = config_file("[store]\ncache_byts = 1\n");
        let e = settings(&args, Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.toml") && e.contains("cache_byts"), "{e}");
    }
}
