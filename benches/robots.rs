//! robots.txt check cost: `RobotsRules::allowed` (group extracted once) against the
//! `robotstxt` crate's matcher re-parsing the whole file per check, on a 379 KiB robots.txt (10,000 groups).
//! Run: `cargo bench --bench robots`.

use criterion::{criterion_group, criterion_main, Criterion};
use robotstxt::DefaultMatcher;
use thresher::crawl::robots::RobotsRules;
use url::Url;

fn big_robots() -> String {
    let mut body = String::from("User-agent: *\nDisallow: /private/\nAllow: /private/ok\n\n");
    for i in 0..10_000 {
        body.push_str(&format!("User-agent: bot{i}\nDisallow: /x{i}/\n\n"));
    }
    body.push_str("User-agent: thresher\nDisallow: /*.pdf$\nDisallow: /search?\nCrawl-delay: 1\n");
    body
}

fn bench(c: &mut Criterion) {
    let body = big_robots();
    let url = Url::parse("https://example.com/articles/2024/some-article.html").unwrap();
    let mut g = c.benchmark_group("robots");
    g.bench_function("parse_once", |b| {
        b.iter(|| RobotsRules::parse(&body, "thresher"))
    });
    let rules = RobotsRules::parse(&body, "thresher");
    g.bench_function("allowed_reduced", |b| b.iter(|| rules.allowed(&url)));
    g.bench_function("allowed_full_matcher", |b| {
        b.iter(|| {
            DefaultMatcher::default().one_agent_allowed_by_robots(&body, "thresher", url.as_str())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
