//! `Config`: the validated settings of a crawl. Built from `config/default.toml` (embedded, the one
//! source of defaults), a user file deep-merged over it (unknown keys are errors), then flag
//! overrides. Everything downstream gets typed values: `Duration`s, compiled regexes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

use crate::detect::Detector;
use crate::template::Algorithm;

/// The shipped defaults.
pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("config key {key}: {message}")]
    Invalid { key: String, message: String },
}

#[derive(Clone, Debug)]
pub struct Config {
    pub crawl: CrawlConfig,
    pub fetch: FetchConfig,
    pub robots: RobotsConfig,
    pub scope: ScopeConfig,
    pub template: TemplateConfig,
    pub store: StoreConfig,
}

#[derive(Clone, Debug)]
pub struct CrawlConfig {
    pub data_dir: PathBuf,
    pub out_dir: PathBuf,
    /// 0 = unlimited.
    pub max_pages: u64,
    pub max_pages_per_host: u64,
    pub max_depth: u32,
    pub concurrency: usize,
    pub per_origin_concurrency: usize,
    pub delay: Duration,
    pub max_crawl_delay: Duration,
    /// Where the crawl writes WARC files (`None`: it writes none).
    pub warc_dir: Option<PathBuf>,
    /// A WARC file is finished once it holds this many bytes.
    pub warc_file_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct FetchConfig {
    pub user_agent: String,
    pub robots_token: String,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub total_timeout: Duration,
    pub max_body_bytes: u64,
    pub max_redirects: u32,
    pub max_retries: u32,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    pub max_retry_after: Duration,
}

#[derive(Clone, Debug)]
pub struct RobotsConfig {
    pub cache_ttl: Duration,
    pub error_retry: Duration,
    /// Retries of a robots.txt that cannot be read (5xx, 429, no answer), `error_retry` apart;
    /// when they fail too, the origin is set aside for the rest of the run (URLs stay queued).
    pub unreachable_retries: u32,
    pub max_bytes: u64,
    pub max_redirects: u32,
    pub sitemaps: bool,
    pub max_sitemap_urls: u64,
}

#[derive(Clone, Debug)]
pub struct ScopeConfig {
    pub seed_hosts_only: bool,
    pub allow_hosts: Vec<String>,
    pub include: Vec<Regex>,
    pub exclude: Vec<Regex>,
}

#[derive(Clone, Debug)]
pub struct TemplateConfig {
    /// The detector cleaning uses (`text` carries `algorithm`).
    pub detector: Detector,
    pub algorithm: Algorithm,
    pub recluster_pages: u64,
    pub recluster_interval: Duration,
    pub min_pages: u64,
    pub inline: bool,
    /// Share of one core incremental learning may use while crawling, in (0, 1].
    pub learn_cpu_share: f64,
}

#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub cache_bytes: u64,
}

/// Flag values that override the files (`None` = not given).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub out_dir: Option<PathBuf>,
    pub warc_dir: Option<PathBuf>,
    pub max_pages: Option<u64>,
    pub max_depth: Option<u32>,
    pub concurrency: Option<usize>,
    pub delay: Option<Duration>,
    pub user_agent: Option<String>,
    /// `template.detector` (`text` or a baseline).
    pub detector: Option<String>,
    /// `template.algorithm` (the TEXT clustering algorithm).
    pub algorithm: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config::from_toml_str(DEFAULT_TOML, Path::new("<built-in defaults>"))
            .expect("invariant: the embedded default config is valid")
    }
}

impl Config {
    /// Defaults, then `file` (if any) over them, then `overrides`.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> Result<Config, ConfigError> {
        let mut config = match file {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                Config::from_toml_str(&text, path)?
            }
        };
        config.apply(overrides)?;
        Ok(config)
    }

    /// Parse `text` as a config file merged over the defaults.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let parse = |t: &str, p: &Path| -> Result<toml::Table, ConfigError> {
            t.parse::<toml::Table>().map_err(|e| ConfigError::Parse {
                path: p.to_path_buf(),
                message: e.to_string(),
            })
        };
        let mut table = parse(DEFAULT_TOML, Path::new("<built-in defaults>"))?;
        if !std::ptr::eq(text, DEFAULT_TOML) {
            merge(&mut table, parse(text, path)?);
        }
        let raw: RawConfig =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?;
        raw.validate()
    }

    fn apply(&mut self, o: &Overrides) -> Result<(), ConfigError> {
        if let Some(v) = &o.data_dir {
            self.crawl.data_dir = v.clone();
        }
        if let Some(v) = &o.out_dir {
            self.crawl.out_dir = v.clone();
        }
        if let Some(v) = &o.warc_dir {
            self.crawl.warc_dir = Some(v.clone());
        }
        if let Some(v) = o.max_pages {
            self.crawl.max_pages = v;
        }
        if let Some(v) = o.max_depth {
            self.crawl.max_depth = v;
        }
        if let Some(v) = o.concurrency {
            self.crawl.concurrency = positive("crawl.concurrency", v)?;
        }
        if let Some(v) = o.delay {
            self.crawl.delay = v;
        }
        if let Some(v) = &o.user_agent {
            self.fetch.user_agent = v.clone();
        }
        if let Some(v) = &o.algorithm {
            self.template.algorithm = v.parse().map_err(|message| ConfigError::Invalid {
                key: "--algorithm".into(),
                message,
            })?;
            if let Detector::Text(_) = self.template.detector {
                self.template.detector = Detector::Text(self.template.algorithm);
            }
        }
        if let Some(v) = &o.detector {
            self.template.detector =
                Detector::from_parts(v, self.template.algorithm).map_err(|message| {
                    ConfigError::Invalid {
                        key: "--detector".into(),
                        message,
                    }
                })?;
        }
        Ok(())
    }
}

/// Deep-merge `over` into `base`; tables merge key by key, everything else replaces.
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn positive(key: &str, v: usize) -> Result<usize, ConfigError> {
    if v == 0 {
        return Err(ConfigError::Invalid {
            key: key.into(),
            message: "must be at least 1".into(),
        });
    }
    Ok(v)
}

fn duration(key: &str, s: &str) -> Result<Duration, ConfigError> {
    humantime::parse_duration(s).map_err(|e| ConfigError::Invalid {
        key: key.into(),
        message: format!("{s:?} is not a duration: {e}"),
    })
}

fn regexes(key: &str, pats: &[String]) -> Result<Vec<Regex>, ConfigError> {
    pats.iter()
        .map(|p| {
            Regex::new(p).map_err(|e| ConfigError::Invalid {
                key: key.into(),
                message: format!("bad regex {p:?}: {e}"),
            })
        })
        .collect()
}

// The file's shape: strings where the validated config has typed values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    crawl: RawCrawl,
    fetch: RawFetch,
    robots: RawRobots,
    scope: RawScope,
    template: RawTemplate,
    store: RawStore,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCrawl {
    data_dir: PathBuf,
    out_dir: PathBuf,
    max_pages: u64,
    max_pages_per_host: u64,
    max_depth: u32,
    concurrency: usize,
    per_origin_concurrency: usize,
    delay: String,
    max_crawl_delay: String,
    warc_dir: PathBuf,
    warc_file_bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFetch {
    user_agent: String,
    robots_token: String,
    connect_timeout: String,
    first_byte_timeout: String,
    total_timeout: String,
    max_body_bytes: u64,
    max_redirects: u32,
    max_retries: u32,
    backoff_base: String,
    backoff_max: String,
    max_retry_after: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRobots {
    cache_ttl: String,
    error_retry: String,
    unreachable_retries: u32,
    max_bytes: u64,
    max_redirects: u32,
    sitemaps: bool,
    max_sitemap_urls: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScope {
    seed_hosts_only: bool,
    allow_hosts: Vec<String>,
    include: Vec<String>,
    exclude: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTemplate {
    detector: String,
    algorithm: String,
    recluster_pages: u64,
    recluster_interval: String,
    min_pages: u64,
    inline: bool,
    learn_cpu_share: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    cache_bytes: u64,
}

impl RawConfig {
    fn validate(self) -> Result<Config, ConfigError> {
        let c = self.crawl;
        let f = self.fetch;
        let r = self.robots;
        let t = self.template;
        let algorithm: Algorithm = t
            .algorithm
            .parse()
            .map_err(|message| ConfigError::Invalid {
                key: "template.algorithm".into(),
                message,
            })?;
        if f.robots_token.is_empty()
            || !f
                .robots_token
                .chars()
                .all(|ch| ch.is_ascii_alphabetic() || ch == '-' || ch == '_')
        {
            return Err(ConfigError::Invalid {
                key: "fetch.robots_token".into(),
                message: "must be letters, '-' or '_' (RFC 9309 product token)".into(),
            });
        }
        Ok(Config {
            crawl: CrawlConfig {
                data_dir: c.data_dir,
                out_dir: c.out_dir,
                max_pages: c.max_pages,
                max_pages_per_host: c.max_pages_per_host,
                max_depth: c.max_depth,
                concurrency: positive("crawl.concurrency", c.concurrency)?,
                per_origin_concurrency: positive(
                    "crawl.per_origin_concurrency",
                    c.per_origin_concurrency,
                )?,
                delay: duration("crawl.delay", &c.delay)?,
                max_crawl_delay: duration("crawl.max_crawl_delay", &c.max_crawl_delay)?,
                warc_dir: Some(c.warc_dir).filter(|d| !d.as_os_str().is_empty()),
                warc_file_bytes: c.warc_file_bytes.max(1),
            },
            fetch: FetchConfig {
                user_agent: f.user_agent,
                robots_token: f.robots_token,
                connect_timeout: duration("fetch.connect_timeout", &f.connect_timeout)?,
                first_byte_timeout: duration("fetch.first_byte_timeout", &f.first_byte_timeout)?,
                total_timeout: duration("fetch.total_timeout", &f.total_timeout)?,
                max_body_bytes: f.max_body_bytes,
                max_redirects: f.max_redirects,
                max_retries: f.max_retries,
                backoff_base: duration("fetch.backoff_base", &f.backoff_base)?,
                backoff_max: duration("fetch.backoff_max", &f.backoff_max)?,
                max_retry_after: duration("fetch.max_retry_after", &f.max_retry_after)?,
            },
            robots: RobotsConfig {
                cache_ttl: duration("robots.cache_ttl", &r.cache_ttl)?,
                error_retry: duration("robots.error_retry", &r.error_retry)?,
                unreachable_retries: r.unreachable_retries,
                max_bytes: r.max_bytes,
                max_redirects: r.max_redirects,
                sitemaps: r.sitemaps,
                max_sitemap_urls: r.max_sitemap_urls,
            },
            scope: ScopeConfig {
                seed_hosts_only: self.scope.seed_hosts_only,
                allow_hosts: self
                    .scope
                    .allow_hosts
                    .iter()
                    .map(|h| h.to_ascii_lowercase())
                    .collect(),
                include: regexes("scope.include", &self.scope.include)?,
                exclude: regexes("scope.exclude", &self.scope.exclude)?,
            },
            template: TemplateConfig {
                detector: Detector::from_parts(&t.detector, algorithm).map_err(|message| {
                    ConfigError::Invalid {
                        key: "template.detector".into(),
                        message,
                    }
                })?,
                algorithm,
                recluster_pages: t.recluster_pages.max(1),
                recluster_interval: duration("template.recluster_interval", &t.recluster_interval)?,
                min_pages: t.min_pages,
                inline: t.inline,
                learn_cpu_share: if t.learn_cpu_share > 0.0 && t.learn_cpu_share <= 1.0 {
                    t.learn_cpu_share
                } else {
                    return Err(ConfigError::Invalid {
                        key: "template.learn_cpu_share".into(),
                        message: format!("{} is not in (0, 1]", t.learn_cpu_share),
                    });
                },
            },
            store: StoreConfig {
                cache_bytes: self.store.cache_bytes,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse() {
        let c = Config::default();
        assert_eq!(c.crawl.delay, Duration::from_millis(500));
        assert_eq!(c.template.algorithm, Algorithm::TextMax);
        assert!(c.scope.exclude[0].is_match("http://a/x.JPG"));
    }

    #[test]
    fn file_merges_over_defaults_and_flags_over_file() {
        let c = Config::from_toml_str("[crawl]\ndelay = \"2s\"\n", Path::new("f.toml")).unwrap();
        assert_eq!(c.crawl.delay, Duration::from_secs(2));
        assert_eq!(c.crawl.concurrency, Config::default().crawl.concurrency);
        let mut c = c;
        c.apply(&Overrides {
            delay: Some(Duration::ZERO),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(c.crawl.delay, Duration::ZERO);
    }

    #[test]
    fn warc_output_is_off_by_default_and_set_by_file_or_flag() {
        let c = Config::default();
        assert_eq!(c.crawl.warc_dir, None);
        assert_eq!(c.crawl.warc_file_bytes, 1_000_000_000);
        let mut c = Config::from_toml_str(
            "[crawl]\nwarc_dir = \"w\"\nwarc_file_bytes = 5000\n",
            Path::new("f.toml"),
        )
        .unwrap();
        assert_eq!(c.crawl.warc_dir, Some(PathBuf::from("w")));
        assert_eq!(c.crawl.warc_file_bytes, 5000);
        c.apply(&Overrides {
            warc_dir: Some(PathBuf::from("flag")),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(c.crawl.warc_dir, Some(PathBuf::from("flag")));
    }

    #[test]
    fn detector_and_algorithm_flags_override_the_template_section() {
        let mut c = Config::default();
        c.apply(&Overrides {
            algorithm: Some("text-hash".into()),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(c.template.detector, Detector::Text(Algorithm::TextHash));
        c.apply(&Overrides {
            detector: Some("shingles".into()),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(c.template.detector, Detector::Shingles);
        let e = c
            .apply(&Overrides {
                detector: Some("magic".into()),
                ..Overrides::default()
            })
            .unwrap_err();
        assert!(e.to_string().contains("--detector"), "{e}");
        let e = c
            .apply(&Overrides {
                algorithm: Some("text-best".into()),
                ..Overrides::default()
            })
            .unwrap_err();
        assert!(e.to_string().contains("--algorithm"), "{e}");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let e =
            Config::from_toml_str("[crawl]\ndelya = \"2s\"\n", Path::new("f.toml")).unwrap_err();
        assert!(e.to_string().contains("delya"), "{e}");
        let e =
            Config::from_toml_str("[crawl]\ndelay = \"soon\"\n", Path::new("f.toml")).unwrap_err();
        assert!(e.to_string().contains("crawl.delay"), "{e}");
        let e = Config::from_toml_str("[template]\nlearn_cpu_share = 0\n", Path::new("f.toml"))
            .unwrap_err();
        assert!(e.to_string().contains("template.learn_cpu_share"), "{e}");
        let e = Config::from_toml_str("[template]\ndetector = \"magic\"\n", Path::new("f.toml"))
            .unwrap_err();
        assert!(e.to_string().contains("template.detector"), "{e}");
        let e =
            Config::from_toml_str("[scope]\nexclude = [\"(\"]\n", Path::new("f.toml")).unwrap_err();
        assert!(e.to_string().contains("scope.exclude"), "{e}");
    }
}
