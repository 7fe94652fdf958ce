//! `Config`: the validated settings of a crawl. Built from `config/default.toml` (embedded, the one
//! source of defaults), a user file deep-merged over it (unknown keys are errors), then the
//! command line's overrides (`Overrides`: every flag and `--set KEY=VALUE`, one path). The
//! structs are the file's shape: serde reads durations, sizes, regexes and detector names into
//! typed fields, so a key is written once in its struct and once, with its default and its
//! documentation, in `config/default.toml`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

use crate::detect::Detector;
use crate::output::TextFormat;
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

/// The validated settings. The structs below are the file's shape too: serde reads durations
/// (humantime strings), sizes (bytes, or strings such as "5 MiB"), regexes and detector names
/// straight into typed fields, and `validate` checks what types cannot say.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub crawl: CrawlConfig,
    pub fetch: FetchConfig,
    pub robots: RobotsConfig,
    pub scope: ScopeConfig,
    pub template: TemplateConfig,
    pub store: StoreConfig,
    pub recrawl: RecrawlConfig,
    pub cluster: ClusterConfig,
    /// What written Markdown keeps beyond the text.
    pub markdown: crate::output::parts::MarkdownParts,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// A worker snapshots a partition it holds once this many records were logged since the
    /// partition's last snapshot, and at least as many as that snapshot holds (`crawl
    /// --cluster`, docs/cluster.md).
    pub snapshot_records: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecrawlConfig {
    /// Fetch stored pages again with conditional GETs (`crawl --recrawl`).
    pub enabled: bool,
    /// Only pages fetched at least this long ago (0: every stored page).
    #[serde(with = "duration")]
    pub older_than: Duration,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlConfig {
    pub data_dir: PathBuf,
    pub out_dir: PathBuf,
    /// 0 = unlimited.
    pub max_pages: u64,
    pub max_pages_per_host: u64,
    pub max_depth: u32,
    pub concurrency: usize,
    pub per_origin_concurrency: usize,
    /// Requests in flight to one server, an address and port that any number of origins may
    /// resolve to (shared hosting, a CDN edge); its request starts are also spaced by
    /// `delay / per_ip_concurrency`. 0: no per-server limit (`crawl::servers`).
    pub per_ip_concurrency: usize,
    #[serde(with = "duration")]
    pub delay: Duration,
    #[serde(with = "duration")]
    pub max_crawl_delay: Duration,
    /// Where the crawl writes WARC files (`None`, from `""`: it writes none).
    #[serde(deserialize_with = "optional_path")]
    pub warc_dir: Option<PathBuf>,
    /// A WARC file is finished once it holds this many bytes (at least 1).
    #[serde(deserialize_with = "size")]
    pub warc_file_bytes: u64,
    /// The format of the cleaned files the crawl writes under `out_dir`.
    pub format: TextFormat,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    pub user_agent: String,
    pub robots_token: String,
    #[serde(with = "duration")]
    pub connect_timeout: Duration,
    #[serde(with = "duration")]
    pub first_byte_timeout: Duration,
    #[serde(with = "duration")]
    pub total_timeout: Duration,
    #[serde(deserialize_with = "size")]
    pub max_body_bytes: u64,
    pub max_redirects: u32,
    pub max_retries: u32,
    #[serde(with = "duration")]
    pub backoff_base: Duration,
    #[serde(with = "duration")]
    pub backoff_max: Duration,
    #[serde(with = "duration")]
    pub max_retry_after: Duration,
    /// Extra request headers, `Name: value` each (checked by `validate`).
    pub headers: Vec<String>,
    /// A proxy URL for every request; empty: the environment's proxy variables.
    pub proxy: String,
    /// Addresses given for host names instead of asking DNS, `host:address` each (as curl's
    /// `--resolve`, without the port); a name given twice has both addresses, in order.
    #[serde(deserialize_with = "host_addresses")]
    pub resolve: Vec<(String, std::net::IpAddr)>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotsConfig {
    /// Fetch and obey robots.txt; `false`: never fetched, no rules, Crawl-delay or sitemaps
    /// from it (the configured delay and per-origin limits still apply).
    pub respect: bool,
    #[serde(with = "duration")]
    pub cache_ttl: Duration,
    #[serde(with = "duration")]
    pub error_retry: Duration,
    /// Retries of a robots.txt that cannot be read (5xx, 429, no answer), `error_retry` apart;
    /// when they fail too, the origin is set aside for the rest of the run (URLs stay queued).
    pub unreachable_retries: u32,
    #[serde(deserialize_with = "size")]
    pub max_bytes: u64,
    pub max_redirects: u32,
    pub sitemaps: bool,
    pub max_sitemap_urls: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeConfig {
    pub seed_hosts_only: bool,
    /// Lower-cased by `validate`.
    pub allow_hosts: Vec<String>,
    #[serde(deserialize_with = "regexes")]
    pub include: Vec<Regex>,
    #[serde(deserialize_with = "regexes")]
    pub exclude: Vec<Regex>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateConfig {
    /// The detector's name as given: `text` (TEXT with `algorithm`), an algorithm, or a baseline.
    #[serde(rename = "detector")]
    detector_name: String,
    /// The detector cleaning uses (from `detector_name` and `algorithm`, by `validate`).
    #[serde(skip)]
    pub detector: Detector,
    #[serde(deserialize_with = "parsed")]
    pub algorithm: Algorithm,
    pub recluster_pages: u64,
    #[serde(with = "duration")]
    pub recluster_interval: Duration,
    pub min_pages: u64,
    pub inline: bool,
    /// Share of one core incremental learning may use while crawling, in (0, 1].
    pub learn_cpu_share: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    #[serde(deserialize_with = "size")]
    pub cache_bytes: u64,
    /// A page file is closed and a new one started past this size (`store::pages`).
    #[serde(deserialize_with = "size")]
    pub page_file_bytes: u64,
}

/// Settings given on the command line, over the files: `key = value` pairs in the file's terms
/// (`crawl.delay = "0ms"`), each with the flag it came from so errors can name it. Every flag
/// and every `--set KEY=VALUE` goes through here: there is one way to override a setting.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pairs: Vec<(String, toml::Value, String)>,
    /// Values added to list keys, after `pairs`.
    appends: Vec<(String, Vec<toml::Value>, String)>,
}

impl Overrides {
    /// Set `key` (dotted: `section.name`) to `value`; `flag` names where it came from.
    pub fn set(&mut self, key: &str, value: impl Into<toml::Value>, flag: &str) -> &mut Self {
        self.pairs
            .push((key.to_string(), value.into(), flag.to_string()));
        self
    }

    /// Add `values` to the list at `key` (what the files give, or the defaults): `--exclude`
    /// adds to the default exclusions rather than replacing them.
    pub fn extend(&mut self, key: &str, values: &[String], flag: &str) -> &mut Self {
        if !values.is_empty() {
            self.appends.push((
                key.to_string(),
                values.iter().cloned().map(toml::Value::String).collect(),
                flag.to_string(),
            ));
        }
        self
    }

    /// `set`, when the flag was given.
    pub fn set_some<T: Into<toml::Value>>(
        &mut self,
        key: &str,
        value: Option<T>,
        flag: &str,
    ) -> &mut Self {
        if let Some(v) = value {
            self.set(key, v, flag);
        }
        self
    }

    /// A `--set KEY=VALUE` argument: VALUE is read as a TOML value (`3`, `true`, `"a b"`,
    /// `["x"]`), and as a plain string when it is not one (`--set crawl.delay=2s`).
    pub fn set_arg(&mut self, arg: &str) -> Result<&mut Self, ConfigError> {
        let (key, raw) = arg.split_once('=').ok_or_else(|| ConfigError::Invalid {
            key: "--set".into(),
            message: format!("{arg:?} is not KEY=VALUE"),
        })?;
        let key = key.trim();
        let value = format!("v = {raw}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.to_string()));
        Ok(self.set(key, value, &format!("--set {key}")))
    }

    /// Write the pairs into `table` (a config file's table); an unknown key is an error here,
    /// naming the flag.
    fn apply(&self, table: &mut toml::Table) -> Result<(), ConfigError> {
        for (key, value, flag) in &self.pairs {
            let invalid = |message: String| ConfigError::Invalid {
                key: flag.clone(),
                message,
            };
            let (section, name) = key
                .split_once('.')
                .ok_or_else(|| invalid(format!("{key:?} is not SECTION.NAME")))?;
            let known = table
                .get_mut(section)
                .and_then(toml::Value::as_table_mut)
                .filter(|t| t.contains_key(name))
                .ok_or_else(|| invalid(format!("unknown config key {key:?}")))?;
            known.insert(name.to_string(), value.clone());
        }
        for (key, values, flag) in &self.appends {
            let list = key
                .split_once('.')
                .and_then(|(section, name)| table.get_mut(section)?.as_table_mut()?.get_mut(name))
                .and_then(toml::Value::as_array_mut)
                .ok_or_else(|| ConfigError::Invalid {
                    key: flag.clone(),
                    message: format!("{key:?} is not a list key"),
                })?;
            list.extend(values.iter().cloned());
        }
        Ok(())
    }

    /// The flag that set `key`, if one did (the last one wins, as in `apply`).
    fn flag_of(&self, key: &str) -> Option<&str> {
        let appended = self.appends.iter().rev().find(|(k, _, _)| k == key);
        appended.map(|(_, _, f)| f.as_str()).or_else(|| {
            self.pairs
                .iter()
                .rev()
                .find(|(k, _, _)| k == key)
                .map(|(_, _, f)| f.as_str())
        })
    }
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
        let (text, path) = match file {
            None => (None, PathBuf::from("<built-in defaults>")),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                (Some(text), path.to_path_buf())
            }
        };
        Self::build(text.as_deref(), &path, overrides)
    }

    /// Parse `text` as a config file merged over the defaults.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let text = (!std::ptr::eq(text, DEFAULT_TOML)).then_some(text);
        Self::build(text, path, &Overrides::default())
    }

    /// The defaults, `text` merged over them, `overrides` over both, then typed and validated.
    fn build(
        text: Option<&str>,
        path: &Path,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        let parse = |t: &str, p: &Path| -> Result<toml::Table, ConfigError> {
            t.parse::<toml::Table>().map_err(|e| ConfigError::Parse {
                path: p.to_path_buf(),
                message: e.to_string(),
            })
        };
        let mut table = parse(DEFAULT_TOML, Path::new("<built-in defaults>"))?;
        if let Some(text) = text {
            merge(&mut table, parse(text, path)?);
        }
        overrides.apply(&mut table)?;
        let config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    let message = e.message().to_string();
                    // A value a flag gave is reported under the flag's name. The error names its
                    // key only in its display ("… in `crawl.delay`").
                    let shown = e.to_string();
                    let key = shown
                        .lines()
                        .find_map(|l| l.strip_prefix("in `")?.strip_suffix('`'))
                        .unwrap_or_default()
                        .to_string();
                    if key.is_empty() {
                        ConfigError::Parse {
                            path: path.to_path_buf(),
                            message,
                        }
                    } else {
                        key_error(&key, message, overrides, text.map(|_| path))
                    }
                })?;
        config.validate(overrides, text.map(|_| path))
    }

    /// What types cannot say: positive counts, a product token, a share in (0, 1], and the
    /// detector `text` taking the algorithm.
    fn validate(
        mut self,
        overrides: &Overrides,
        file: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let invalid = |key: &str, message: String| key_error(key, message, overrides, file);
        for (key, v) in [
            ("crawl.concurrency", self.crawl.concurrency),
            (
                "store.page_file_bytes",
                usize::try_from(self.store.page_file_bytes).unwrap_or(usize::MAX),
            ),
            (
                "crawl.per_origin_concurrency",
                self.crawl.per_origin_concurrency,
            ),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1".into()));
            }
        }
        let token = &self.fetch.robots_token;
        if token.is_empty()
            || !token
                .chars()
                .all(|ch| ch.is_ascii_alphabetic() || ch == '-' || ch == '_')
        {
            return Err(invalid(
                "fetch.robots_token",
                "must be letters, '-' or '_' (RFC 9309 product token)".into(),
            ));
        }
        for h in &self.fetch.headers {
            let ok = h.split_once(':').is_some_and(|(name, value)| {
                !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
                    && !value.contains(['\r', '\n'])
            });
            if !ok {
                return Err(invalid(
                    "fetch.headers",
                    format!("{h:?} is not a header (\"Name: value\")"),
                ));
            }
        }
        if !self.fetch.proxy.is_empty() && url::Url::parse(&self.fetch.proxy).is_err() {
            return Err(invalid(
                "fetch.proxy",
                format!("{:?} is not a URL", self.fetch.proxy),
            ));
        }
        let share = self.template.learn_cpu_share;
        if !(share > 0.0 && share <= 1.0) {
            return Err(invalid(
                "template.learn_cpu_share",
                format!("{share} is not in (0, 1]"),
            ));
        }
        self.template.recluster_pages = self.template.recluster_pages.max(1);
        self.crawl.warc_file_bytes = self.crawl.warc_file_bytes.max(1);
        self.template.detector =
            Detector::from_parts(&self.template.detector_name, self.template.algorithm)
                .map_err(|message| invalid("template.detector", message))?;
        for h in &mut self.scope.allow_hosts {
            h.make_ascii_lowercase();
        }
        Ok(self)
    }
}

/// The error of `key`'s value, named by where the value came from: the flag that set it, else
/// the config file (`file`; `None` when there is none and the value is a default).
fn key_error(
    key: &str,
    message: String,
    overrides: &Overrides,
    file: Option<&Path>,
) -> ConfigError {
    match (overrides.flag_of(key), file) {
        (Some(flag), _) => ConfigError::Invalid {
            key: format!("{key} (from {flag})"),
            message,
        },
        (None, Some(path)) => ConfigError::Parse {
            path: path.to_path_buf(),
            message: format!("{key}: {message}"),
        },
        (None, None) => ConfigError::Invalid {
            key: key.to_string(),
            message,
        },
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

/// Durations as humantime strings ("250ms", "1h 30m").
mod duration {
    use std::time::Duration;

    use serde::{de::Error, Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(&s)
            .map_err(|e| D::Error::custom(format!("{s:?} is not a duration: {e}")))
    }
}

/// Sizes in bytes: an integer, or a string with a unit ("5 MiB", "500 KB").
fn size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bytesize::ByteSize::deserialize(d).map(|b| b.as_u64())
}

/// A path where `""` means none.
fn optional_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    let p = PathBuf::deserialize(d)?;
    Ok(Some(p).filter(|p| !p.as_os_str().is_empty()))
}

/// A value read through its `FromStr` (detector and algorithm names).
fn parsed<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

/// `host:address` pairs (`a.example:127.0.0.1`, `b.example:[::1]` or `b.example:::1`); the
/// host lower-cased, as URLs have it.
fn host_addresses<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, std::net::IpAddr)>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|pair| {
            let bad = |why: &str| serde::de::Error::custom(format!("{pair:?}: {why}"));
            let (host, addr) = pair
                .split_once(':')
                .ok_or_else(|| bad("not HOST:ADDRESS"))?;
            let host = host.trim().to_ascii_lowercase();
            if host.is_empty() || host.parse::<std::net::IpAddr>().is_ok() {
                return Err(bad("the host must be a name"));
            }
            let addr = addr.trim().trim_start_matches('[').trim_end_matches(']');
            let ip = addr
                .parse()
                .map_err(|_| bad(&format!("{addr:?} is not an IP address")))?;
            Ok((host, ip))
        })
        .collect()
}

fn regexes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Regex>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|e| serde::de::Error::custom(format!("bad regex {p:?}: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse() {
        let c = Config::default();
        assert_eq!(c.crawl.delay, Duration::from_millis(500));
        assert_eq!(c.template.algorithm, Algorithm::TextMax);
        assert_eq!(c.template.detector, Detector::Text(Algorithm::TextMax));
        assert_eq!(c.fetch.max_body_bytes, 5 * 1024 * 1024);
        assert!(c.scope.exclude[0].is_match("http://a/x.JPG"));
    }

    #[test]
    fn file_merges_over_defaults_and_flags_over_file() {
        let file = Path::new("f.toml");
        let c = Config::from_toml_str("[crawl]\ndelay = \"2s\"\n", file).unwrap();
        assert_eq!(c.crawl.delay, Duration::from_secs(2));
        assert_eq!(c.crawl.concurrency, Config::default().crawl.concurrency);
        let mut o = Overrides::default();
        o.set("crawl.delay", "0ms", "--delay");
        let c = Config::build(Some("[crawl]\ndelay = \"2s\"\n"), file, &o).unwrap();
        assert_eq!(c.crawl.delay, Duration::ZERO);
    }

    #[test]
    fn warc_output_is_off_by_default_and_set_by_file_or_flag() {
        let c = Config::default();
        assert_eq!(c.crawl.warc_dir, None);
        assert_eq!(c.crawl.warc_file_bytes, 1_000_000_000);
        let file = "[crawl]\nwarc_dir = \"w\"\nwarc_file_bytes = \"5 kB\"\n";
        let c = Config::from_toml_str(file, Path::new("f.toml")).unwrap();
        assert_eq!(c.crawl.warc_dir, Some(PathBuf::from("w")));
        assert_eq!(c.crawl.warc_file_bytes, 5000);
        let mut o = Overrides::default();
        o.set("crawl.warc_dir", "flag", "--warc-out");
        let c = Config::build(Some(file), Path::new("f.toml"), &o).unwrap();
        assert_eq!(c.crawl.warc_dir, Some(PathBuf::from("flag")));
    }

    #[test]
    fn robots_are_respected_unless_the_file_or_the_flag_says_not() {
        assert!(Config::default().robots.respect);
        let file = "[robots]\nrespect = false\n";
        let c = Config::from_toml_str(file, Path::new("f.toml")).unwrap();
        assert!(!c.robots.respect);
        let mut o = Overrides::default();
        o.set("robots.respect", true, "--respect-robots");
        let c = Config::build(Some(file), Path::new("f.toml"), &o).unwrap();
        assert!(c.robots.respect, "the flag overrides the file");
        let mut o = Overrides::default();
        o.set_arg("robots.respect=no").unwrap();
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(e.contains("--set robots.respect"), "{e}");
    }

    #[test]
    fn per_server_limit_is_on_by_default_and_resolve_pairs_are_checked() {
        let c = Config::default();
        assert_eq!(c.crawl.per_ip_concurrency, 4);
        assert!(c.fetch.resolve.is_empty());
        let mut o = Overrides::default();
        o.set_arg("fetch.resolve=[\"A.test:127.0.0.1\", \"b.test:[::1]\", \"b.test:::2\"]")
            .unwrap();
        let c = Config::load(None, &o).unwrap();
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(
            c.fetch.resolve,
            vec![
                ("a.test".to_string(), ip("127.0.0.1")),
                ("b.test".to_string(), ip("::1")),
                ("b.test".to_string(), ip("::2")),
            ]
        );
        for bad in [
            "a.test",
            "a.test:nowhere",
            ":127.0.0.1",
            "10.0.0.1:127.0.0.1",
        ] {
            let mut o = Overrides::default();
            o.set(
                "fetch.resolve",
                vec![bad.to_string()],
                "--set fetch.resolve",
            );
            let e = Config::load(None, &o).unwrap_err().to_string();
            assert!(e.contains("fetch.resolve"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_take_units_or_bytes() {
        let c = Config::from_toml_str(
            "[fetch]\nmax_body_bytes = \"2 MiB\"\n[store]\ncache_bytes = 1000\n",
            Path::new("f.toml"),
        )
        .unwrap();
        assert_eq!(c.fetch.max_body_bytes, 2 * 1024 * 1024);
        assert_eq!(c.store.cache_bytes, 1000);
        let e = Config::from_toml_str("[fetch]\nmax_body_bytes = \"lots\"\n", Path::new("f.toml"))
            .unwrap_err();
        assert!(e.to_string().contains("fetch.max_body_bytes"), "{e}");
    }

    #[test]
    fn set_reads_toml_values_or_plain_strings() {
        let mut o = Overrides::default();
        o.set_arg("crawl.max_depth=3").unwrap();
        o.set_arg("crawl.delay=1s").unwrap();
        o.set_arg("scope.allow_hosts=[\"B.example\"]").unwrap();
        o.set_arg("template.inline=false").unwrap();
        let c = Config::load(None, &o).unwrap();
        assert_eq!(c.crawl.max_depth, 3);
        assert_eq!(c.crawl.delay, Duration::from_secs(1));
        assert_eq!(c.scope.allow_hosts, vec!["b.example".to_string()]);
        assert!(!c.template.inline);
        assert!(Overrides::default().set_arg("no-equals").is_err());
    }

    #[test]
    fn overrides_of_unknown_keys_and_bad_values_name_the_flag() {
        let mut o = Overrides::default();
        o.set_arg("crawl.delya=1s").unwrap();
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(
            e.contains("--set crawl.delya") && e.contains("unknown"),
            "{e}"
        );
        let mut o = Overrides::default();
        o.set("crawl.concurrency", 0, "--concurrency");
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(e.contains("--concurrency"), "{e}");
        let mut o = Overrides::default();
        o.set("crawl.delay", "soon", "--delay");
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(e.contains("--delay") && e.contains("soon"), "{e}");
    }

    #[test]
    fn list_flags_add_to_the_lists_and_bad_headers_are_errors() {
        let defaults = Config::default().scope.exclude.len();
        let mut o = Overrides::default();
        o.extend("scope.exclude", &["/private/".into()], "--exclude")
            .extend("fetch.headers", &["X-Team: corpus".into()], "--header");
        let c = Config::load(None, &o).unwrap();
        assert_eq!(c.scope.exclude.len(), defaults + 1);
        assert!(c.scope.exclude[defaults].is_match("http://a/private/x"));
        assert_eq!(c.fetch.headers, vec!["X-Team: corpus".to_string()]);
        let mut o = Overrides::default();
        o.extend("fetch.headers", &["no colon".into()], "--header");
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(e.contains("--header") && e.contains("no colon"), "{e}");
        let mut o = Overrides::default();
        o.extend("scope.include", &["(".into()], "--include");
        let e = Config::load(None, &o).unwrap_err().to_string();
        assert!(e.contains("--include"), "{e}");
    }

    #[test]
    fn detector_and_algorithm_flags_override_the_template_section() {
        let load = |pairs: &[(&str, &str, &str)]| {
            let mut o = Overrides::default();
            for &(k, v, f) in pairs {
                o.set(k, v, f);
            }
            Config::load(None, &o)
        };
        let c = load(&[("template.algorithm", "text-hash", "--algorithm")]).unwrap();
        assert_eq!(c.template.detector, Detector::Text(Algorithm::TextHash));
        let c = load(&[
            ("template.algorithm", "text-hash", "--algorithm"),
            ("template.detector", "shingles", "--detector"),
        ])
        .unwrap();
        assert_eq!(c.template.detector, Detector::Shingles);
        let e = load(&[("template.detector", "magic", "--detector")]).unwrap_err();
        assert!(e.to_string().contains("--detector"), "{e}");
        let e = load(&[("template.algorithm", "text-best", "--algorithm")]).unwrap_err();
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
        assert!(e.to_string().starts_with("config file f.toml: "), "{e}");
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
