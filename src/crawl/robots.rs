//! robots.txt per origin (RFC 9309): what a fetch of `/robots.txt` means
//! ([`RobotsEntry::from_fetch`]) and the rules for our product token, parsed once through the
//! `robotstxt` crate into a small serialisable [`RobotsRules`] that answers allow/deny without
//! re-reading the file.
//! No I/O here: the fetcher fetches, the store caches the entry (serde) until `expires_at`.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use url::Url;

use crate::config::RobotsConfig;

#[cfg(test)]
mod google_cases;
mod rules;

pub use rules::{RobotsRules, MAX_PATTERN_LITERAL_BYTES, MAX_ROBOTS_SITEMAPS, MAX_RULES};

/// What the fetcher got for `/robots.txt`, after following redirects.
#[derive(Clone, Copy, Debug)]
pub enum RobotsFetch<'a> {
    /// A 2xx response and its body (it may exceed `max_bytes`: it is cut here).
    Success(&'a [u8]),
    /// Any other final status: a 3xx that could not be followed (no `Location`), 4xx, 5xx.
    /// `retry_after` is the response's Retry-After, already capped by the caller.
    Status {
        code: u16,
        retry_after: Option<Duration>,
    },
    /// More redirects than `robots.max_redirects` (see [`may_follow_redirect`]).
    TooManyRedirects,
    /// No HTTP answer: DNS, connect, TLS, timeout, reset.
    Unreachable,
}

/// May the fetcher follow one more redirect for robots.txt, having followed `hops_done`?
///
/// RFC 9309 §2.3.1.2: follow at least five redirects, even to other hosts (robots.txt redirects
/// are not scope-checked), and apply the result to the origin that was asked for. When this says
/// no, report [`RobotsFetch::TooManyRedirects`]: the file is then treated as unavailable (allow).
pub fn may_follow_redirect(hops_done: u32, cfg: &RobotsConfig) -> bool {
    hops_done < cfg.max_redirects
}

/// Why an origin is disallowed as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unreachable {
    /// 5xx, 429, or a status RFC 9309 does not define (1xx, ≥ 600).
    Status(u16),
    Network,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreachable::Status(code) => write!(f, "HTTP {code}"),
            Unreachable::Network => f.write_str("no answer"),
        }
    }
}

/// What may be fetched from one origin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RobotsPolicy {
    /// No robots.txt (4xx, or too many redirects): everything is allowed.
    AllowAll,
    /// robots.txt unreachable and no earlier copy: nothing but `/robots.txt` itself.
    DisallowAll {
        reason: Unreachable,
    },
    Rules(RobotsRules),
}

impl RobotsPolicy {
    /// May `url` (normalised, see `crawl::url::normalize`) be fetched? `/robots.txt` always may
    /// (RFC 9309 §2.2.2).
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            RobotsPolicy::AllowAll => true,
            RobotsPolicy::DisallowAll { .. } => url.path() == "/robots.txt",
            RobotsPolicy::Rules(rules) => rules.allowed(url),
        }
    }

    /// Allow/Disallow rules a check runs through (what a check costs).
    pub fn rule_count(&self) -> usize {
        match self {
            RobotsPolicy::Rules(rules) => rules.len(),
            _ => 0,
        }
    }

    /// Crawl-delay for our token (uncapped; the caller caps it).
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsPolicy::Rules(rules) => rules.crawl_delay(),
            _ => None,
        }
    }

    /// `Sitemap:` URLs as written (resolve them against the robots.txt URL).
    pub fn sitemaps(&self) -> &[String] {
        match self {
            RobotsPolicy::Rules(rules) => rules.sitemaps(),
            _ => &[],
        }
    }
}

/// An origin's robots state as cached in the store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RobotsEntry {
    pub policy: RobotsPolicy,
    /// Fetch robots.txt again at or after this time.
    pub expires_at: SystemTime,
    /// Start of the current run of unreachable fetches; `None` after any HTTP answer that is not
    /// an error. Kept so a status view (or a later policy) can see long outages.
    pub unreachable_since: Option<SystemTime>,
}

impl RobotsEntry {
    /// The entry after a fetch of robots.txt (RFC 9309 §2.3.1):
    /// - 2xx: the rules for `token`, from the first `cfg.max_bytes` of the body (a line cut by
    ///   the limit is dropped: half a rule could allow more than the whole one); cached for
    ///   `cfg.cache_ttl`.
    /// - 4xx except 429, a 3xx that could not be followed, too many redirects: unavailable →
    ///   allow all, for `cfg.cache_ttl`.
    /// - 429, 5xx, other codes, network errors: unreachable → retry after `cfg.error_retry` (or
    ///   Retry-After if longer). 429 counts as unreachable, not as a 4xx: it says "not now",
    ///   not "no file" (Google does the same). Meanwhile, if `previous` holds an earlier good
    ///   copy (rules or allow-all), it stays in force: RFC 9309 §2.4 lets a crawler keep a
    ///   cached copy past its expiry while the file is unreachable. Without one, the origin is
    ///   disallowed. We never switch a long-unreachable origin to allow-all (§2.3.1.4's 30-day
    ///   "MAY"): a server answering 5xx for that long has nothing to crawl either.
    pub fn from_fetch(
        fetch: RobotsFetch<'_>,
        previous: Option<&RobotsEntry>,
        now: SystemTime,
        cfg: &RobotsConfig,
        token: &str,
    ) -> RobotsEntry {
        let fresh = |policy| RobotsEntry {
            policy,
            expires_at: now + cfg.cache_ttl,
            unreachable_since: None,
        };
        let (reason, retry_after) = match fetch {
            RobotsFetch::Success(body) => {
                let text = String::from_utf8_lossy(cut_body(body, cfg.max_bytes));
                return fresh(RobotsPolicy::Rules(RobotsRules::parse(&text, token)));
            }
            // A 2xx passed as a bare status (204) is an empty file.
            RobotsFetch::Status {
                code: 200..=299, ..
            } => return fresh(RobotsPolicy::Rules(RobotsRules::parse("", token))),
            RobotsFetch::TooManyRedirects => return fresh(RobotsPolicy::AllowAll),
            RobotsFetch::Status { code, .. } if (300..500).contains(&code) && code != 429 => {
                return fresh(RobotsPolicy::AllowAll)
            }
            RobotsFetch::Status { code, retry_after } => (Unreachable::Status(code), retry_after),
            RobotsFetch::Unreachable => (Unreachable::Network, None),
        };
        let policy = match previous.map(|p| &p.policy) {
            Some(p @ (RobotsPolicy::Rules(_) | RobotsPolicy::AllowAll)) => p.clone(),
            _ => RobotsPolicy::DisallowAll { reason },
        };
        RobotsEntry {
            policy,
            expires_at: now + cfg.error_retry.max(retry_after.unwrap_or_default()),
            unreachable_since: previous.and_then(|p| p.unreachable_since).or(Some(now)),
        }
    }

    /// Must robots.txt be fetched again before the next request to this origin? When the entry
    /// has expired, or its rules were selected for another product token (config changed).
    pub fn needs_fetch(&self, now: SystemTime, token: &str) -> bool {
        let other_token = matches!(&self.policy, RobotsPolicy::Rules(r) if r.token() != token);
        now >= self.expires_at || other_token
    }
}

/// The body to parse: at most `max` bytes, without a last line the limit cut.
fn cut_body(body: &[u8], max: u64) -> &[u8] {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if body.len() <= max {
        return body;
    }
    let cut = &body[..max];
    match cut.iter().rposition(|&b| b == b'\n' || b == b'\r') {
        Some(end) => &cut[..end],
        None => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    const TOKEN: &str = "thresher";

    fn cfg() -> RobotsConfig {
        Config::default().robots
    }

    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn fetch(f: RobotsFetch<'_>, previous: Option<&RobotsEntry>) -> RobotsEntry {
        RobotsEntry::from_fetch(f, previous, t0(), &cfg(), TOKEN)
    }

    fn status(code: u16) -> RobotsFetch<'static> {
        RobotsFetch::Status {
            code,
            retry_after: None,
        }
    }

    #[test]
    fn success_parses_rules_for_our_token_and_caches_for_ttl() {
        let body = b"User-agent: *\nDisallow: /\n\nUser-agent: Thresher\nDisallow: /private\n\
                     Crawl-delay: 3\nSitemap: https://example.com/sitemap.xml\n";
        let e = fetch(RobotsFetch::Success(body), None);
        assert!(e.policy.allowed(&url("https://example.com/public")));
        assert!(!e.policy.allowed(&url("https://example.com/private/x")));
        assert_eq!(e.policy.crawl_delay(), Some(Duration::from_secs(3)));
        assert_eq!(e.policy.sitemaps(), ["https://example.com/sitemap.xml"]);
        assert_eq!(e.expires_at, t0() + cfg().cache_ttl);
        assert_eq!(e.unreachable_since, None);
        assert!(!e.needs_fetch(t0(), TOKEN));
        assert!(e.needs_fetch(t0() + cfg().cache_ttl, TOKEN));
        assert!(e.needs_fetch(t0(), "otherbot"));
    }

    #[test]
    fn unavailable_means_allow_all() {
        for code in [400, 401, 403, 404, 410, 451, 300, 304] {
            let e = fetch(status(code), None);
            assert_eq!(e.policy, RobotsPolicy::AllowAll, "{code}");
            assert!(e.policy.allowed(&url("https://example.com/a")), "{code}");
            assert_eq!(e.expires_at, t0() + cfg().cache_ttl, "{code}");
        }
        let e = fetch(status(204), None);
        assert!(e.policy.allowed(&url("https://example.com/a")));
        assert!(matches!(e.policy, RobotsPolicy::Rules(_)));
        let e = fetch(RobotsFetch::TooManyRedirects, None);
        assert_eq!(e.policy, RobotsPolicy::AllowAll);
        assert!(e.policy.allowed(&url("https://example.com/anything")));
    }

    #[test]
    fn unreachable_means_disallow_all_and_retry_soon() {
        for (f, reason) in [
            (status(500), Unreachable::Status(500)),
            (status(503), Unreachable::Status(503)),
            (status(429), Unreachable::Status(429)),
            (status(199), Unreachable::Status(199)),
            (RobotsFetch::Unreachable, Unreachable::Network),
        ] {
            let e = fetch(f, None);
            assert_eq!(e.policy, RobotsPolicy::DisallowAll { reason }, "{f:?}");
            assert_eq!(e.expires_at, t0() + cfg().error_retry, "{f:?}");
            assert_eq!(e.unreachable_since, Some(t0()));
            assert!(!e.policy.allowed(&url("https://example.com/")));
            assert!(e.policy.allowed(&url("https://example.com/robots.txt")));
        }
        // A longer Retry-After wins over error_retry, a shorter one does not.
        let long = Duration::from_secs(3600);
        let e = fetch(
            RobotsFetch::Status {
                code: 503,
                retry_after: Some(long),
            },
            None,
        );
        assert_eq!(e.expires_at, t0() + long);
        let e = fetch(
            RobotsFetch::Status {
                code: 503,
                retry_after: Some(Duration::from_secs(1)),
            },
            None,
        );
        assert_eq!(e.expires_at, t0() + cfg().error_retry);
    }

    #[test]
    fn outage_keeps_an_earlier_good_copy_and_its_start_time() {
        let good = fetch(RobotsFetch::Success(b"User-agent: *\nDisallow: /x\n"), None);
        let later = t0() + Duration::from_secs(86_400);
        let first = RobotsEntry::from_fetch(status(502), Some(&good), later, &cfg(), TOKEN);
        assert_eq!(first.policy, good.policy);
        assert_eq!(first.unreachable_since, Some(later));
        assert_eq!(first.expires_at, later + cfg().error_retry);
        let much_later = later + Duration::from_secs(3600);
        let second = RobotsEntry::from_fetch(
            RobotsFetch::Unreachable,
            Some(&first),
            much_later,
            &cfg(),
            TOKEN,
        );
        assert_eq!(second.policy, good.policy);
        assert_eq!(second.unreachable_since, Some(later));
        // An earlier outage is not a good copy.
        let third = fetch(status(500), Some(&fetch(status(500), None)));
        assert!(matches!(third.policy, RobotsPolicy::DisallowAll { .. }));
        // Recovery clears the outage.
        let ok = fetch(status(404), Some(&second));
        assert_eq!(ok.unreachable_since, None);
    }

    #[test]
    fn body_is_cut_at_max_bytes_without_the_cut_line() {
        let mut c = cfg();
        let head = "User-agent: *\nDisallow: /private\n";
        let body = format!("{head}Allow: /private/but-this-one-is-open\n");
        // The limit falls inside the Allow line: "Allow: /" alone would open everything.
        c.max_bytes = (head.len() + "Allow: /".len()) as u64;
        let e =
            RobotsEntry::from_fetch(RobotsFetch::Success(body.as_bytes()), None, t0(), &c, TOKEN);
        assert!(!e
            .policy
            .allowed(&url("https://example.com/private/but-this-one-is-open")));
        assert!(!e.policy.allowed(&url("https://example.com/private/x")));
        c.max_bytes = body.len() as u64;
        let e =
            RobotsEntry::from_fetch(RobotsFetch::Success(body.as_bytes()), None, t0(), &c, TOKEN);
        assert!(e
            .policy
            .allowed(&url("https://example.com/private/but-this-one-is-open")));
        assert_eq!(cut_body(b"no newline at all", 5), b"");
        assert_eq!(cut_body(b"a\r\nbc", 4), b"a\r");
    }

    #[test]
    fn invalid_utf8_body_is_read_lossily() {
        let body = b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /x\n";
        let e = fetch(RobotsFetch::Success(body), None);
        assert!(!e.policy.allowed(&url("https://example.com/x")));
    }

    #[test]
    fn redirect_limit() {
        let c = cfg();
        assert!(may_follow_redirect(0, &c));
        assert!(may_follow_redirect(c.max_redirects - 1, &c));
        assert!(!may_follow_redirect(c.max_redirects, &c));
    }

    #[test]
    fn entries_round_trip_through_serde() {
        let body = b"User-agent: *\nDisallow: /x\nCrawl-delay: 1.5\nSitemap: https://e.com/s.xml\n";
        for e in [
            fetch(RobotsFetch::Success(body), None),
            fetch(status(404), None),
            fetch(RobotsFetch::Unreachable, None),
        ] {
            let bytes = postcard::to_allocvec(&e).unwrap();
            assert_eq!(postcard::from_bytes::<RobotsEntry>(&bytes).unwrap(), e);
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<RobotsEntry>(&json).unwrap(), e);
        }
    }
}
