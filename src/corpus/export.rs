//! The export pass: every cleaned page of the chosen hosts, in order (hosts as given, pages by
//! id), made into a `Record` with the metadata its fields need, deduplicated, and handed to a
//! `Sink`. Pages are read and prepared in batches of `BATCH` on the worker pool (store reads,
//! HTML scan, language, template ratio, dedup fingerprint); decisions and writes are sequential,
//! in page order, so the output does not depend on the number of threads.
//!
//! Memory: one batch of pages, one site's cluster templates (when `template_ratio` is asked
//! for), the site's page ids, and the dedup index (signatures, not texts).

use super::dedup::{self, Fingerprint, Index, Mode};
use super::meta;
use super::ratio::Templates;
use super::record::{Field, Record};
use super::write::Sink;
use super::{lang, CorpusError};
use crate::crawl::url::{page_stem, without_credentials};
use crate::store::{Store, StoreError};

/// Pages prepared per round on the pool.
pub const BATCH: usize = 256;

/// What to export.
#[derive(Clone, Debug)]
pub struct Options {
    pub fields: Vec<Field>,
    pub dedup: Mode,
    /// Sites to export, in order (each must be in the store).
    pub hosts: Vec<String>,
    /// Worker threads.
    pub jobs: usize,
    /// What the `markdown` field keeps beyond the text.
    pub markdown: crate::output::parts::MarkdownParts,
}

/// What an export did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub exported: u64,
    /// Stored pages without cleaned text yet (their host had too few pages, or the crawl was
    /// stopped before cleaning them).
    pub not_cleaned: u64,
    /// Duplicates left out (`--dedup exact|near`), by kind.
    pub dropped_exact: u64,
    pub dropped_near: u64,
    /// Duplicates exported with `dup_of` (`--dedup mark`), by kind.
    pub marked_exact: u64,
    pub marked_near: u64,
}

/// Which inputs the chosen fields need beyond the cleaned text and the page record.
#[derive(Clone, Copy, Debug)]
struct Needs {
    html: bool,
    markdown: bool,
    lang: bool,
    ratio: bool,
    near: bool,
    fingerprint: bool,
}

impl Needs {
    fn of(fields: &[Field], dedup: Mode) -> Needs {
        let has = |f: &[Field]| f.iter().any(|x| fields.contains(x));
        Needs {
            html: has(&[
                Field::Canonical,
                Field::Published,
                Field::Author,
                Field::FromByline,
            ]),
            markdown: has(&[Field::Markdown]),
            lang: has(&[Field::Lang, Field::LangConfidence]),
            ratio: has(&[Field::TemplateRatio]),
            near: dedup.near(),
            fingerprint: dedup != Mode::None,
        }
    }
}

/// A page ready for the sequential part.
struct Prepared {
    id: u64,
    record: Record,
    fingerprint: Option<Fingerprint>,
}

/// Export the cleaned pages of `opts.hosts` from `store` into `sink` (not finished here: the
/// caller commits it). `tick` is called once per stored page looked at.
pub fn export(
    store: &Store,
    opts: &Options,
    sink: &mut dyn Sink,
    mut tick: impl FnMut(),
) -> Result<Summary, CorpusError> {
    let needs = Needs::of(&opts.fields, opts.dedup);
    let mut index = Index::new(opts.dedup);
    let mut summary = Summary::default();
    for host in &opts.hosts {
        sink.begin_host(host)?;
        let templates = if needs.ratio {
            store.site_clusters(host)?.map(|c| Templates::new(&c))
        } else {
            None
        };
        for batch in store.site_pages(host)?.chunks(BATCH) {
            let prepared = crate::pool::parallel_map(batch, opts.jobs, |&id| {
                prepare(store, host, id, needs, opts.markdown, templates.as_ref())
            });
            for page in prepared {
                tick();
                let Some(mut page) = page? else {
                    summary.not_cleaned += 1;
                    continue;
                };
                let dup = page
                    .fingerprint
                    .as_ref()
                    .and_then(|fp| index.check(page.id, fp));
                match (dup, opts.dedup) {
                    (None, _) => {}
                    (Some((_, dedup::Kind::Exact)), Mode::Exact | Mode::Near) => {
                        summary.dropped_exact += 1;
                        continue;
                    }
                    (Some((_, dedup::Kind::Near)), Mode::Exact | Mode::Near) => {
                        summary.dropped_near += 1;
                        continue;
                    }
                    (Some((of, kind)), _) => {
                        match kind {
                            dedup::Kind::Exact => summary.marked_exact += 1,
                            dedup::Kind::Near => summary.marked_near += 1,
                        }
                        page.record.dup_of = Some(page_stem(of));
                    }
                }
                sink.write(&page.record)?;
                summary.exported += 1;
            }
        }
    }
    Ok(summary)
}

/// Page `id` of `host` as a record with what `needs` asks for; `None` when it has no cleaned
/// text (or no page record).
fn prepare(
    store: &Store,
    host: &str,
    id: u64,
    needs: Needs,
    parts: crate::output::parts::MarkdownParts,
    templates: Option<&Templates>,
) -> Result<Option<Prepared>, StoreError> {
    let cleaned = if needs.markdown {
        store.cleaned_both(id)?
    } else {
        store.cleaned(id)?.map(|c| (c, None))
    };
    let (Some(page), Some((clean, markdown))) = (store.page(id)?, cleaned) else {
        return Ok(None);
    };
    let url = without_credentials(&page.url).into_owned();
    let mut record = Record {
        id: page_stem(id),
        host: host.to_string(),
        title: page.title.clone(),
        fetched_at: rfc3339_ms(page.fetched_at_ms),
        last_modified: page
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("last-modified"))
            .and_then(|(_, v)| httpdate::parse_http_date(v.trim()).ok())
            .map(|t| humantime::format_rfc3339_seconds(t).to_string()),
        cluster: clean.cluster,
        markdown: match markdown {
            // The stored Markdown itself when nothing is cut (no copy).
            Some(m) => {
                let cut = match parts.apply(&m) {
                    std::borrow::Cow::Owned(cut) => Some(cut),
                    std::borrow::Cow::Borrowed(_) => None,
                };
                cut.unwrap_or(m)
            }
            None if needs.markdown => clean.text.clone(),
            None => String::new(),
        },
        text: clean.text,
        ..Record::default()
    };
    if needs.html {
        if let Some(html) = store.html(id)? {
            let decoded = crate::dom::charset::decode_html(&html, page.content_type.as_deref());
            let stated = meta::stated(&crate::dom::meta::scan(&decoded.text), &url);
            record.canonical = stated.canonical;
            record.published = stated.published;
            record.author = stated.author;
        }
        // Markup first; the byline only for what the markup does not state.
        if record.published.is_none() || record.author.is_none() {
            if let Some(b) = store.byline(id)? {
                let (published, author) =
                    meta::with_byline(&mut record.published, &mut record.author, b);
                record.from_byline = match (author, published) {
                    (true, true) => Some("author,published"),
                    (true, false) => Some("author"),
                    (false, true) => Some("published"),
                    (false, false) => None,
                };
            }
        }
    }
    if needs.lang {
        if let Some(l) = lang::detect(&record.text) {
            record.lang = Some(l.code);
            record.lang_confidence = Some(l.confidence);
        }
    }
    if let (true, Some(t)) = (needs.ratio, templates) {
        if let Some(dom) = store.dom(&page.site, id)? {
            record.template_ratio = t.ratio(record.cluster, &dom);
        }
    }
    let fingerprint = if needs.fingerprint {
        dedup::fingerprint(&record.text, needs.near)
    } else {
        None
    };
    record.url = url;
    Ok(Some(Prepared {
        id,
        record,
        fingerprint,
    }))
}

/// Unix milliseconds as RFC 3339 (UTC, whole seconds).
pub fn rfc3339_ms(ms: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .to_string()
}
