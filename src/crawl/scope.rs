//! Which URLs the crawl may visit: scheme, host (the seeds' sites by default) and the
//! include/exclude patterns of the config. Pure and cheap; depth and page limits belong to the
//! scheduler.

use std::collections::HashSet;

use regex::Regex;
use url::Url;

use crate::config::ScopeConfig;
use crate::crawl::url::site_key;

/// Why a URL is out of scope.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutOfScope {
    #[error("unsupported scheme {0} (only http and https)")]
    Scheme(String),
    #[error("host {0} is not in scope")]
    Host(String),
    #[error("excluded by scope.exclude pattern {index} ({pattern})")]
    Excluded { index: usize, pattern: String },
    #[error("matches none of the scope.include patterns")]
    NotIncluded,
}

/// The scope of one crawl, built once from the config and the seeds.
///
/// Hosts are compared by site key (host, plus `:port` when not the default), so `http://` and
/// `https://` of a seed host are both in scope, while another port of the same host is not
/// (tests run many sites on 127.0.0.1, one per port).
///
/// A site that differs from a seed's only by a leading `www.` is in scope too: seeding
/// `example.com` commonly redirects to `www.example.com` (and the reverse), and without this
/// rule the crawl would end at the first redirect. Other subdomains are not included; list them
/// in `scope.allow_hosts` (exact host names, or `host:port`).
#[derive(Clone, Debug)]
pub struct Scope {
    /// Seed site keys with any leading `www.` removed.
    seed_sites: HashSet<String>,
    allow_hosts: HashSet<String>,
    /// `false`: any host is in scope (patterns still apply).
    seed_hosts_only: bool,
    include: Vec<Regex>,
    exclude: Vec<Regex>,
}

impl Scope {
    pub fn new(cfg: &ScopeConfig, seeds: &[Url]) -> Scope {
        Scope {
            seed_sites: seeds
                .iter()
                .map(|u| strip_www(&site_key(u)).to_string())
                .collect(),
            allow_hosts: cfg
                .allow_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            seed_hosts_only: cfg.seed_hosts_only,
            include: cfg.include.clone(),
            exclude: cfg.exclude.clone(),
        }
    }

    /// Is `url` (normalised) in scope? Checks scheme, then host, then excludes, then includes;
    /// patterns match the whole normalised URL string.
    pub fn check(&self, url: &Url) -> Result<(), OutOfScope> {
        self.check_host(url)?;
        let s = url.as_str();
        if let Some(index) = self.exclude.iter().position(|re| re.is_match(s)) {
            return Err(OutOfScope::Excluded {
                index,
                pattern: self.exclude[index].as_str().to_string(),
            });
        }
        if !self.include.is_empty() && !self.include.iter().any(|re| re.is_match(s)) {
            return Err(OutOfScope::NotIncluded);
        }
        Ok(())
    }

    /// Scheme and host only, without the patterns. For URLs the crawler fetches for itself
    /// rather than as pages: sitemaps (the default exclude pattern drops `.xml`, `.gz`).
    pub fn check_host(&self, url: &Url) -> Result<(), OutOfScope> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OutOfScope::Scheme(url.scheme().to_string()));
        }
        if !self.seed_hosts_only {
            return Ok(());
        }
        let site = site_key(url);
        let host = url.host_str().unwrap_or_default();
        if self.seed_sites.contains(strip_www(&site))
            || self.allow_hosts.contains(host)
            || self.allow_hosts.contains(&site)
        {
            Ok(())
        } else {
            Err(OutOfScope::Host(site))
        }
    }
}

fn strip_www(site: &str) -> &str {
    site.strip_prefix("www.").unwrap_or(site)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn cfg() -> ScopeConfig {
        ScopeConfig {
            seed_hosts_only: true,
            allow_hosts: vec![],
            include: vec![],
            exclude: vec![],
        }
    }

    #[test]
    fn seed_sites_in_scope_others_not() {
        let s = Scope::new(&cfg(), &[url("https://example.com/start")]);
        assert_eq!(s.check(&url("https://example.com/a")), Ok(()));
        assert_eq!(s.check(&url("http://example.com/a")), Ok(()));
        assert_eq!(
            s.check(&url("https://other.org/")),
            Err(OutOfScope::Host("other.org".into()))
        );
        assert_eq!(
            s.check(&url("https://blog.example.com/")),
            Err(OutOfScope::Host("blog.example.com".into()))
        );
        assert_eq!(
            s.check(&url("https://example.com:8443/")),
            Err(OutOfScope::Host("example.com:8443".into()))
        );
    }

    #[test]
    fn www_variant_both_ways() {
        let s = Scope::new(&cfg(), &[url("https://example.com/")]);
        assert_eq!(s.check(&url("https://www.example.com/x")), Ok(()));
        let s = Scope::new(&cfg(), &[url("https://www.example.org/")]);
        assert_eq!(s.check(&url("https://example.org/x")), Ok(()));
        assert!(s.check(&url("https://www.www.example.org/x")).is_err());
        assert!(s.check(&url("https://wwwexample.org/x")).is_err());
    }

    #[test]
    fn ports_distinguish_local_test_sites() {
        let s = Scope::new(&cfg(), &[url("http://127.0.0.1:40001/")]);
        assert_eq!(s.check(&url("http://127.0.0.1:40001/a")), Ok(()));
        assert!(s.check(&url("http://127.0.0.1:40002/a")).is_err());
    }

    #[test]
    fn allow_hosts_extend_scope() {
        let mut c = cfg();
        c.allow_hosts = vec!["CDN.example.net".into(), "127.0.0.1:9000".into()];
        let s = Scope::new(&c, &[url("https://example.com/")]);
        assert_eq!(s.check(&url("https://cdn.example.net/a")), Ok(()));
        assert_eq!(s.check(&url("http://127.0.0.1:9000/a")), Ok(()));
        assert!(s.check(&url("https://www.cdn.example.net/a")).is_err());
    }

    #[test]
    fn any_host_when_not_seed_hosts_only() {
        let mut c = cfg();
        c.seed_hosts_only = false;
        let s = Scope::new(&c, &[url("https://example.com/")]);
        assert_eq!(s.check(&url("https://anything.org/")), Ok(()));
    }

    #[test]
    fn exclude_then_include_patterns() {
        let mut c = cfg();
        c.include = vec![Regex::new("/news/").unwrap(), Regex::new("/blog/").unwrap()];
        c.exclude = vec![
            Regex::new(r"\?print=").unwrap(),
            Regex::new("/news/archive").unwrap(),
        ];
        let s = Scope::new(&c, &[url("https://example.com/")]);
        assert_eq!(s.check(&url("https://example.com/news/1")), Ok(()));
        assert_eq!(s.check(&url("https://example.com/blog/1")), Ok(()));
        assert_eq!(
            s.check(&url("https://example.com/about")),
            Err(OutOfScope::NotIncluded)
        );
        assert_eq!(
            s.check(&url("https://example.com/news/archive/1")),
            Err(OutOfScope::Excluded {
                index: 1,
                pattern: "/news/archive".into()
            })
        );
        // Host is checked before patterns.
        assert_eq!(
            s.check(&url("https://other.org/news/1")),
            Err(OutOfScope::Host("other.org".into()))
        );
    }

    #[test]
    fn default_excludes_drop_assets_but_check_host_keeps_sitemaps() {
        let c = Config::default().scope;
        let s = Scope::new(&c, &[url("https://example.com/")]);
        assert!(matches!(
            s.check(&url("https://example.com/logo.PNG")),
            Err(OutOfScope::Excluded { index: 0, .. })
        ));
        assert_eq!(s.check(&url("https://example.com/article.html")), Ok(()));
        let sitemap = url("https://example.com/sitemap.xml.gz");
        assert!(s.check(&sitemap).is_err());
        assert_eq!(s.check_host(&sitemap), Ok(()));
    }

    #[test]
    fn non_http_scheme_rejected() {
        let s = Scope::new(&cfg(), &[url("https://example.com/")]);
        assert_eq!(
            s.check(&url("ftp://example.com/f")),
            Err(OutOfScope::Scheme("ftp".into()))
        );
    }
}
