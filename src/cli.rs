//! Command-line flags (clap derive): raw values only; `config::Config` and each command validate.
//! The choices of `--detector` and `--algorithm` come from `detect` and `template`, so `--help`
//! lists them and clap rejects a misspelling before anything runs. `--config` and `--set`
//! (`ConfigArgs`) and `--detector` / `--algorithm` (`TemplateArgs`) are defined once and
//! flattened into every command that reads those settings; `cmd` turns them into overrides.

// The doc comments below are clap's `--help` text, shown as written on a terminal: placeholders
// such as `OUT/<site>/<page>.txt` stay as the user reads them there, not escaped for rustdoc.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "thresher",
    version,
    about = "Crawl sites politely, learn their templates, keep the content."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// One value per process, parsed once: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Crawl from a seed list; resumes from the data directory when run again.
    Crawl(CrawlArgs),
    /// Show what a data directory holds.
    Status(StatusArgs),
    /// Learn templates on saved pages and write their cleaned text.
    Clean(CleanArgs),
    /// Stream the cleaned corpus of a data directory.
    Export(ExportArgs),
    /// Show the clusters and templates learned for a host.
    Inspect(InspectArgs),
    /// List what recrawls found: pages whose content changed or that are gone, with their old
    /// and new text hashes (what a search index must update).
    Changes(ChangesArgs),
    /// Compare every detector on a dataset with gold text.
    Eval(EvalArgs),
    /// Set up a crawl across machines on NATS JetStream (built with `--features cluster`;
    /// docs/cluster.md).
    Cluster(ClusterArgs),
    /// Print a shell completion script: `thresher completions bash > /etc/bash_completion.d/thresher`.
    Completions(CompletionsArgs),
    /// Print the man page (roff): `thresher man > thresher.1`.
    Man,
}

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Create the cluster's spec, buckets and streams in the engine (again: checks them).
    Init(ClusterInitArgs),
}

#[derive(Debug, Args)]
pub struct ClusterInitArgs {
    /// The engine's servers, comma-separated (`nats://h1:4222,nats://h2:4222`).
    #[arg(long, value_name = "URLS")]
    pub nats: String,
    /// Sites are spread over this many partitions, the unit a worker leases (fixed for the
    /// cluster's life).
    #[arg(long, default_value_t = 1024)]
    pub partitions: u32,
    /// JetStream replicas of every bucket and stream: 1, or 3 to survive the loss of a node.
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// A worker's partition lease lapses this long after its last renewal.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = humantime::parse_duration)]
    pub lease_ttl: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, PartialEq)]
pub struct CrawlArgs {
    /// Seed URLs (besides `--seeds`). A URL ending in `.xml` or `.xml.gz`, or whose last path
    /// segment names a sitemap, is read as a sitemap.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
    /// A file of seed URLs, one per line (`#` comments and blank lines allowed) [default:
    /// seeds.txt when no URL is given].
    #[arg(long)]
    pub seeds: Option<PathBuf>,
    #[command(flatten)]
    pub settings: ConfigArgs,
    /// Data directory (sled store; resume state).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Output directory for cleaned text.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The cleaned files' format: text (OUT/<site>/<page>.txt, one block per line) or markdown
    /// (.md: headings, lists, tables, code, links, images) [config: crawl.format, default text].
    #[arg(long, value_parser = ["text", "markdown"])]
    pub format: Option<String>,
    /// Also write every response and its request as WARC/1.1 files into DIR
    /// [config: crawl.warc_dir].
    #[arg(long, value_name = "DIR")]
    pub warc_out: Option<PathBuf>,
    /// Before crawling, store the pages these WARC files (or directories of `*.warc[.gz]`)
    /// hold as if this crawl had fetched them — parsed, learned, their links queued — and fetch
    /// only what they lack (repeatable; pages out of scope, not HTML, or already stored are
    /// skipped).
    #[arg(long, value_name = "PATH")]
    pub import_warc: Vec<PathBuf>,
    /// Crawl as one worker of a cluster on the NATS JetStream engine at URLS (comma-separated
    /// `nats://host:port`; `thresher cluster init` first; built with `--features cluster`):
    /// this worker crawls the partitions it holds, and the crawl ends when every worker is
    /// idle (docs/cluster.md).
    #[arg(long, value_name = "URLS")]
    pub cluster: Option<String>,
    /// Stop after this many pages stored (0 = unlimited).
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// Maximum link hops from a seed.
    #[arg(long)]
    pub max_depth: Option<u32>,
    /// Requests in flight across all origins.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Minimum delay between requests to one origin, e.g. 500ms.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub delay: Option<std::time::Duration>,
    /// User-Agent header.
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Only URLs matching this regex (repeatable; any one must match) [config: scope.include].
    #[arg(long, value_name = "REGEX")]
    pub include: Vec<String>,
    /// Drop URLs matching this regex, besides the default exclusions (repeatable)
    /// [config: scope.exclude].
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// A host in scope besides the seeds' (repeatable) [config: scope.allow_hosts].
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// An extra request header, `Name: value` (repeatable) [config: fetch.headers].
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// A Cookie header for every request, e.g. `session=abc; lang=en`.
    #[arg(long)]
    pub cookie: Option<String>,
    /// A proxy for every request; without it the HTTP_PROXY / HTTPS_PROXY / ALL_PROXY /
    /// NO_PROXY variables apply [config: fetch.proxy].
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    /// Send HOST's requests to ADDRESS instead of asking DNS, as curl's --resolve without the
    /// port (repeatable) [config: fetch.resolve].
    #[arg(long, value_name = "HOST:ADDRESS")]
    pub resolve: Vec<String>,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Fetch and obey robots.txt (on by default); `--respect-robots=false` neither fetches nor
    /// obeys it, Crawl-delay and Sitemap lines included [config: robots.respect].
    #[arg(
        long,
        value_name = "BOOL",
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub respect_robots: Option<bool>,
    /// Fetch the stored pages again with conditional GETs (If-None-Match / If-Modified-Since),
    /// sitemap lastmod and feeds first; record per page unchanged / template-churn /
    /// content-changed / gone (`thresher changes`) [config: recrawl.enabled].
    #[arg(long)]
    pub recrawl: bool,
    /// With --recrawl: only pages fetched at least this long ago, e.g. 1d, 12h
    /// [config: recrawl.older_than].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub older_than: Option<std::time::Duration>,
    /// No progress bars or log lines, only errors and the summary.
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More log lines: `-v` debug, `-vv` trace (THRESHER_LOG, when set, decides instead).
    #[arg(long, short, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `--config FILE` and `--set KEY=VALUE`: the settings of every command that reads any.
#[derive(Clone, Debug, Default, Args, PartialEq)]
pub struct ConfigArgs {
    /// A TOML file read over config/default.toml (docs/design.md, "Configuration").
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Set any config key, over the config file and the other flags: `--set crawl.delay=2s`,
    /// `--set scope.allow_hosts='["b.example"]'`; may be repeated.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// `--detector` and `--algorithm` of the commands that clean (`crawl`, `clean`); without them
/// the config decides.
#[derive(Clone, Debug, Default, Args, PartialEq)]
pub struct TemplateArgs {
    /// Template detector for cleaning: text (TEXT-* clustering + content extraction) or a
    /// baseline [config: template.detector, default text].
    #[arg(long, value_parser = detector_names())]
    pub detector: Option<String>,
    /// TEXT clustering algorithm [config: template.algorithm, default text-max].
    #[arg(long, value_parser = algorithm_names())]
    pub algorithm: Option<String>,
}

/// `--detector`'s choices, for `--help` and for clap's check.
fn detector_names() -> clap::builder::PossibleValuesParser {
    let mut names = vec!["text"];
    names.extend(crate::detect::Detector::BASELINES.iter().map(|d| d.name()));
    clap::builder::PossibleValuesParser::new(names)
}

/// `eval --detector`'s choices: `all`, a detector, or one TEXT algorithm.
fn eval_detector_names() -> clap::builder::PossibleValuesParser {
    let mut names = vec!["all", "text"];
    names.extend(crate::detect::Detector::all().iter().map(|d| d.name()));
    clap::builder::PossibleValuesParser::new(names)
}

/// `export --format`'s choices.
fn format_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::corpus::write::Format::NAMES)
}

/// `export --dedup`'s choices.
fn dedup_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::corpus::Dedup::NAMES)
}

/// `--algorithm`'s choices.
fn algorithm_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::template::Algorithm::ALL.map(|a| a.name()))
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Data directory [config: crawl.data_dir, default thresher-data].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The report as one JSON object (the schema of `status.json`, docs/status.md), for scripts
    /// and dashboards.
    #[arg(long)]
    pub json: bool,
    /// Report on a cluster crawl instead (`--features cluster`): its workers and the
    /// partitions each holds, read from the NATS engine at URLS (docs/cluster.md).
    #[arg(long, value_name = "URLS", conflicts_with = "data")]
    pub cluster: Option<String>,
    #[command(flatten)]
    pub settings: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// Data directory.
    #[arg(long, default_value = "thresher-data")]
    pub data: PathBuf,
    /// Only changes found at or after T: a date or time (2024-03-01, 2024-03-01T09:30:00Z) or
    /// a duration ago (2h, 7days).
    #[arg(long, value_name = "T")]
    pub since: Option<String>,
    /// `text` (aligned columns) or `jsonl` (one object per line: url, kind, at, old_hash,
    /// new_hash).
    #[arg(long, value_enum, default_value = "text")]
    pub format: ChangesFormat,
    /// Every kind (unchanged, template-churn and failed too), not only content-changed and
    /// gone.
    #[arg(long)]
    pub all: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ChangesFormat {
    Text,
    Jsonl,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Directories of saved pages: each directory's *.html files are one host's pages.
    pub site_dirs: Vec<PathBuf>,
    /// A WARC file of saved responses (pages grouped by host); may be repeated.
    #[arg(long)]
    pub warc: Vec<PathBuf>,
    /// Output directory: OUT/<site>/<page>.txt (.md in Markdown)
    #[arg(long)]
    pub out: PathBuf,
    /// The cleaned files' format: text (one block per line) or markdown (headings, lists,
    /// tables, code, links, images).
    #[arg(long, value_parser = ["text", "markdown"], default_value = "text")]
    pub format: String,
    #[command(flatten)]
    pub template: TemplateArgs,
    #[command(flatten)]
    pub settings: ConfigArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Data directory [config: crawl.data_dir, default thresher-data].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Output format [default: parquet when --out ends in .parquet, else jsonl].
    #[arg(long, value_parser = format_names())]
    pub format: Option<String>,
    /// Output file (jsonl: .gz / .zst compress; parquet) or directory (text); standard output
    /// when omitted (jsonl only).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only these hosts (repeatable).
    #[arg(long)]
    pub host: Vec<String>,
    /// Duplicates: none, exact (same cleaned text), near (also MinHash Jaccard >= 0.8 of word
    /// 5-shingles), mark (keep all; duplicates get dup_of). Across hosts; the first page wins.
    #[arg(long, default_value = "none", value_parser = dedup_names())]
    pub dedup: String,
    /// Columns, comma-separated, in this order (jsonl and parquet); default: all of id, url,
    /// host, canonical, lang, lang_confidence, title, published, author, fetched_at,
    /// last_modified, cluster, template_ratio, dup_of, text.
    #[arg(long)]
    pub fields: Option<String>,
    /// The whole corpus of a cluster crawl (`--features cluster`), from any machine: every
    /// partition log's pages are first gathered from the NATS engine at URLS into --data (a
    /// directory of its own, kept so that the next export adds only what is new) and cleaned
    /// there, then exported (docs/cluster.md).
    #[arg(long, value_name = "URLS")]
    pub cluster: Option<String>,
    #[command(flatten)]
    pub settings: ConfigArgs,
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The host to inspect.
    pub host: String,
    /// Data directory [config: crawl.data_dir, default thresher-data].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Page to show with its template parts marked (URL); default: the first page of the largest cluster.
    #[arg(long)]
    pub page: Option<String>,
    /// Where to write the HTML report.
    #[arg(long, default_value = "inspect.html")]
    pub report: PathBuf,
    #[command(flatten)]
    pub settings: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// One or more datasets: DIR/<site>/<page>.html with DIR/<site>/<page>.gold.txt. With several,
    /// a table per dataset, then an overall table.
    #[arg(required = true)]
    pub dataset: Vec<PathBuf>,
    /// Detector to run, or `all` (every detector and every TEXT algorithm); `text` is TEXT with
    /// the configured template.algorithm.
    #[arg(long, default_value = "all", value_parser = eval_detector_names())]
    pub detector: String,
    /// Also write each detector's outputs under this directory (OUT/<detector>/<site>/<page>.txt;
    /// with several datasets OUT/<dataset>/<detector>/<site>/<page>.txt).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub settings: ConfigArgs,
    #[arg(long, short)]
    pub quiet: bool,
}

impl CrawlArgs {
    /// The `thresher crawl …` command with every flag of this run, quoted for a shell: what the
    /// resume hint prints, so resuming keeps `--out`, `--delay`, `--max-pages` and the rest.
    pub fn command_line(&self) -> String {
        let mut words: Vec<String> = vec!["thresher".into(), "crawl".into()];
        let mut flag = |name: &str, value: String| {
            words.push(format!("--{name}"));
            words.push(value);
        };
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        if let Some(v) = &self.seeds {
            flag("seeds", path(v));
        }
        if let Some(v) = &self.settings.config {
            flag("config", path(v));
        }
        if let Some(v) = &self.data {
            flag("data", path(v));
        }
        for v in &self.import_warc {
            flag("import-warc", path(v));
        }
        if let Some(v) = &self.cluster {
            flag("cluster", v.clone());
        }
        if let Some(v) = &self.out {
            flag("out", path(v));
        }
        if let Some(v) = &self.warc_out {
            flag("warc-out", path(v));
        }
        if let Some(v) = self.max_pages {
            flag("max-pages", v.to_string());
        }
        if let Some(v) = self.max_depth {
            flag("max-depth", v.to_string());
        }
        if let Some(v) = self.concurrency {
            flag("concurrency", v.to_string());
        }
        if let Some(v) = self.delay {
            flag("delay", humantime::format_duration(v).to_string());
        }
        if let Some(v) = &self.user_agent {
            flag("user-agent", v.clone());
        }
        if let Some(v) = &self.template.detector {
            flag("detector", v.clone());
        }
        if let Some(v) = &self.template.algorithm {
            flag("algorithm", v.clone());
        }
        let lists = [
            ("include", &self.include),
            ("exclude", &self.exclude),
            ("allow-host", &self.allow_host),
            ("header", &self.header),
            ("resolve", &self.resolve),
            ("set", &self.settings.set),
        ];
        for (name, values) in lists {
            for v in values {
                flag(name, v.clone());
            }
        }
        if let Some(v) = &self.cookie {
            flag("cookie", v.clone());
        }
        if let Some(v) = &self.proxy {
            flag("proxy", v.clone());
        }
        if let Some(v) = self.older_than {
            flag("older-than", humantime::format_duration(v).to_string());
        }
        if let Some(v) = self.respect_robots {
            words.push(format!("--respect-robots={v}"));
        }
        if self.recrawl {
            words.push("--recrawl".into());
        }
        if self.quiet {
            words.push("--quiet".into());
        }
        if self.verbose > 0 {
            words.push(format!("-{}", "v".repeat(usize::from(self.verbose))));
        }
        words.extend(self.urls.iter().cloned());
        shell_words::join(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crawl_args(line: &[&str]) -> CrawlArgs {
        match Cli::try_parse_from(line).expect("valid flags").command {
            Command::Crawl(a) => a,
            other => panic!("not a crawl: {other:?}"),
        }
    }

    /// Regression: the resume hint after Ctrl-C dropped `--out`, `--delay` and `--max-pages`.
    #[test]
    fn resume_hint_keeps_every_flag_the_user_gave() {
        let given = crawl_args(&[
            "thresher",
            "crawl",
            "--seeds",
            "my seeds.txt",
            "--config",
            "c.toml",
            "--data",
            "d",
            "--out",
            "/tmp/it's out",
            "--warc-out",
            "w a r c",
            "--max-pages",
            "500",
            "--max-depth",
            "3",
            "--concurrency",
            "7",
            "--delay",
            "250ms",
            "--user-agent",
            "Bot/1 (+https://x.example)",
            "--detector",
            "text",
            "--algorithm",
            "text-max",
            "--include",
            "/news/",
            "--exclude",
            "\\?print=",
            "--allow-host",
            "b.example",
            "--header",
            "X-Run: 7",
            "--resolve",
            "shop.example:10.0.0.5",
            "--recrawl",
            "--older-than",
            "1day",
            "--cookie",
            "a=b; c=d",
            "--proxy",
            "http://127.0.0.1:3128",
            "--set",
            "crawl.max_pages_per_host=9",
            "--respect-robots=false",
            "-q",
            "https://a.example/",
            "https://a.example/sitemap.xml",
        ]);
        let line = given.command_line();
        let words = shell_words::split(&line).expect("a shell can read it back");
        let again = crawl_args(&words.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again, given, "{line}");

        let plain = crawl_args(&["thresher", "crawl"]);
        assert_eq!(plain.command_line(), "thresher crawl");
        let verbose = crawl_args(&["thresher", "crawl", "-vv", "https://a.example/"]);
        assert_eq!(
            verbose.command_line(),
            "thresher crawl -vv https://a.example/"
        );
    }

    #[test]
    fn respect_robots_is_unset_bare_true_or_an_explicit_bool() {
        assert_eq!(crawl_args(&["thresher", "crawl"]).respect_robots, None);
        let bare = crawl_args(&[
            "thresher",
            "crawl",
            "--respect-robots",
            "https://a.example/",
        ]);
        assert_eq!(bare.respect_robots, Some(true));
        assert_eq!(
            bare.urls,
            ["https://a.example/"],
            "a URL after it stays a seed"
        );
        let off = crawl_args(&["thresher", "crawl", "--respect-robots=false"]);
        assert_eq!(off.respect_robots, Some(false));
        let resumed = shell_words::split(&off.command_line()).expect("shell words");
        assert_eq!(resumed, ["thresher", "crawl", "--respect-robots=false"]);
        let on = crawl_args(&["thresher", "crawl", "--respect-robots=true"]);
        assert_eq!(on.respect_robots, Some(true));
        assert!(Cli::try_parse_from(["thresher", "crawl", "--respect-robots=maybe"]).is_err());
    }

    /// Every command that reads settings takes `--config` and `--set` (one definition).
    #[test]
    fn config_and_set_are_accepted_by_every_command_that_reads_settings() {
        let want = ConfigArgs {
            config: Some("f.toml".into()),
            set: vec!["store.cache_bytes=1000".into()],
        };
        let tail = ["--config", "f.toml", "--set", "store.cache_bytes=1000"];
        let lines: [&[&str]; 6] = [
            &["crawl"],
            &["status"],
            &["clean", "d", "--out", "o"],
            &["export"],
            &["inspect", "a.example"],
            &["eval", "ds"],
        ];
        for line in lines {
            let words = ["thresher"].iter().chain(line).chain(&tail);
            let cli = Cli::try_parse_from(words).expect("valid flags");
            let got = match cli.command {
                Command::Crawl(a) => a.settings,
                Command::Status(a) => a.settings,
                Command::Clean(a) => a.settings,
                Command::Export(a) => a.settings,
                Command::Inspect(a) => a.settings,
                Command::Eval(a) => a.settings,
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{line:?}");
        }
    }

    /// `clean --detector` / `--algorithm` are overrides: unset unless given, still checked, and
    /// `--help` still lists their values.
    #[test]
    fn export_format_and_dedup_are_checked_and_list_their_values() {
        let export = |extra: &[&str]| {
            let words = ["thresher", "export"].iter().chain(extra);
            Cli::try_parse_from(words).map(|_| ())
        };
        assert!(export(&["--format", "parquet", "--dedup", "mark"]).is_ok());
        let e = export(&["--format", "xml"]).expect_err("an unknown format");
        assert!(e.to_string().contains("jsonl, parquet, text"), "{e}");
        assert!(export(&["--dedup", "fuzzy"]).is_err());
        let mut cmd = <Cli as clap::CommandFactory>::command();
        let help = cmd
            .find_subcommand_mut("export")
            .expect("export")
            .render_long_help()
            .to_string();
        for value in ["jsonl", "parquet", "text", "exact", "near", "mark"] {
            assert!(help.contains(value), "{value}: {help}");
        }
    }

    #[test]
    fn clean_detector_flags_are_optional_and_list_their_values() {
        let clean = |extra: &[&str]| {
            let words = ["thresher", "clean", "d", "--out", "o"].iter().chain(extra);
            match Cli::try_parse_from(words).map(|c| c.command) {
                Ok(Command::Clean(a)) => Ok(a.template),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e),
            }
        };
        assert_eq!(clean(&[]).expect("valid"), TemplateArgs::default());
        let given = clean(&["--detector", "node-hash", "--algorithm", "text-hash"]).expect("valid");
        assert_eq!(given.detector.as_deref(), Some("node-hash"));
        assert_eq!(given.algorithm.as_deref(), Some("text-hash"));
        assert!(clean(&["--detector", "magic"]).is_err());
        let mut cmd = <Cli as clap::CommandFactory>::command();
        let help = cmd
            .find_subcommand_mut("clean")
            .expect("clean")
            .render_long_help()
            .to_string();
        for value in [
            "node-hash",
            "shingles",
            "table-chunks",
            "text-mdl",
            "--config",
            "--set",
        ] {
            assert!(help.contains(value), "{value}: {help}");
        }
    }
}
