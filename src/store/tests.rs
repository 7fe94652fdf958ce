//! Store tests: commits are atomic and deduplicate, queues are per-origin FIFOs, state survives
//! reopening.

use super::*;
use crate::dom::parse_html;

fn meta(url: &str, site: &str) -> PageMeta {
    PageMeta {
        url: url.into(),
        requested: None,
        site: site.into(),
        status: 200,
        content_type: Some("text/html".into()),
        headers: vec![],
        fetched_at_ms: 1,
        depth: 0,
        body_bytes: 10,
        encoding: "UTF-8".into(),
        title: None,
        truncated: false,
    }
}

/// A stored DOM without the address the store sets on it from the page's record (what these
/// tests compare is the stored tree).
fn dom_of(s: &Store, site: &str, id: u64) -> crate::dom::Dom {
    let mut dom = s.dom(site, id).unwrap().unwrap();
    dom.address = None;
    dom
}

fn open(dir: &Path) -> Store {
    Store::open(dir, 8 << 20).unwrap()
}

#[test]
fn discovered_urls_are_queued_once_per_origin_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let mut c = Commit::new();
    c.discover("http://a".into(), QueueEntry::page("http://a/1".into(), 0))
        .discover("http://b".into(), QueueEntry::page("http://b/1".into(), 0))
        .discover("http://a".into(), QueueEntry::page("http://a/2".into(), 0))
        .discover("http://a".into(), QueueEntry::page("http://a/1".into(), 0));
    let out = s.commit(c).unwrap();
    assert_eq!(out.enqueued.len(), 3);
    let mut c = Commit::new();
    c.discover("http://a".into(), QueueEntry::page("http://a/2".into(), 1));
    assert!(
        s.commit(c).unwrap().enqueued.is_empty(),
        "seen URLs are not queued again"
    );

    let a = s
        .origins()
        .into_iter()
        .find(|o| o.key == "http://a")
        .unwrap();
    let q: Vec<String> = s
        .queue_from(a.id, 0, 10)
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.url)
        .collect();
    assert_eq!(q, vec!["http://a/1", "http://a/2"]);
    assert_eq!(s.queue_lengths().unwrap()[&a.id], 2);
}

#[test]
fn links_of_a_huge_page_kept_an_origin_key_string_per_link() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let mut c = Commit::new();
    // More links than one store batch, over two origins, interleaved.
    let n = DISCOVER_BATCH * 2 + 10;
    for i in 0..n {
        let origin = if i % 3 == 0 { "http://b" } else { "http://a" };
        c.discover(origin.into(), QueueEntry::page(format!("{origin}/{i}"), 1));
    }
    assert_eq!(c.origin_keys(), 2, "one key per origin, not per link");
    let out = s.commit(c).unwrap();
    assert_eq!(out.enqueued.len(), n);
    for (i, e) in out.enqueued.iter().enumerate() {
        let origin = if i % 3 == 0 { "http://b" } else { "http://a" };
        assert_eq!(&*e.origin_key, origin, "URL {i}");
    }
    let a = s.origin_id("http://a").unwrap();
    let q = s.queue_from(a, 0, 3).unwrap();
    let urls: Vec<&str> = q.iter().map(|(_, e)| e.url.as_str()).collect();
    assert_eq!(urls, vec!["http://a/1", "http://a/2", "http://a/4"]);
}

#[test]
fn page_commit_stores_everything_and_consumes_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let mut c = Commit::new();
    c.discover("http://a".into(), QueueEntry::page("http://a/".into(), 0));
    let e = s.commit(c).unwrap().enqueued.remove(0);

    let html = b"<title>T</title><p>hello</p>";
    let dom = parse_html(std::str::from_utf8(html).unwrap()).dom;
    let paths = dom.path_set();
    let mut c = Commit::new();
    c.done(e.origin_id, e.seq)
        .page(NewPage::new(7, meta("http://a/", "a"), html, &dom, &paths))
        .discover(
            "http://a".into(),
            QueueEntry::page("http://a/next".into(), 1),
        );
    let out = s.commit(c).unwrap();
    assert!(out.page_stored);

    assert_eq!(s.page(7).unwrap().unwrap().url, "http://a/");
    assert_eq!(s.html(7).unwrap().unwrap(), html);
    assert_eq!(dom_of(&s, "a", 7), dom);
    assert_eq!(
        s.dom("a", 7).unwrap().unwrap().address.as_deref(),
        Some("http://a/"),
        "a stored DOM comes back with the address its page was fetched from"
    );
    assert_eq!(s.path_set("a", 7).unwrap().unwrap(), paths);
    assert_eq!(s.site_pages("a").unwrap(), vec![7]);
    assert_eq!(s.site_counters("a").pages, 1);
    let q: Vec<String> = s
        .queue_from(e.origin_id, 0, 10)
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.url)
        .collect();
    assert_eq!(q, vec!["http://a/next"]);

    // The same page again (another URL redirected here) is not stored twice.
    let mut c = Commit::new();
    c.page(NewPage::new(7, meta("http://a/", "a"), html, &dom, &paths));
    assert!(!s.commit(c).unwrap().page_stored);
    assert_eq!(s.site_counters("a").pages, 1);
}

/// Regression: a store of schema 8 holds DOMs of the earlier encoding (8-bit flags, no
/// `Element::extra` or `Dom::info`), which the new decoder cannot read. Opened now, such a
/// page's DOM and path set are made again from its stored HTML, as the crawl would parse it.
#[test]
fn regression_older_dom_encoding_is_parsed_again_from_the_html() {
    let dir = tempfile::tempdir().unwrap();
    let html = b"<title>T</title><noscript><p>the thread</p></noscript><pre>a\n  b</pre>";
    {
        let s = open(dir.path());
        let mut c = Commit::new();
        let page = NewPage::new(
            7,
            meta("http://a/", "a"),
            html,
            &Default::default(),
            &[1, 2, 3],
        )
        .with_dom_bytes(&[3, 0, 1, 2]);
        c.page(page);
        assert!(s.commit(c).unwrap().page_stored);
        s.insert_one(key::bytes(key::META, b"schema"), &8u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_eq!(s.check_schema(false).unwrap(), SCHEMA_VERSION);
    let dom = parse_html(std::str::from_utf8(html).unwrap()).dom;
    assert_eq!(dom_of(&s, "a", 7), dom);
    assert_eq!(s.path_set("a", 7).unwrap().unwrap(), dom.path_set());
    // A page stored now is read as stored.
    let fresh = b"<p>new</p>";
    let fresh_dom = parse_html("<p>new</p>").dom;
    let mut c = Commit::new();
    c.page(NewPage::new(
        8,
        meta("http://a/b", "a"),
        fresh,
        &fresh_dom,
        &[9],
    ));
    s.commit(c).unwrap();
    assert_eq!(dom_of(&s, "a", 8), fresh_dom);
    assert_eq!(s.path_set("a", 8).unwrap().unwrap(), vec![9]);
}

/// A DOM of encoding version 2 hides a page veiled until its scripts run; read back, the page
/// is parsed again with today's parse, which shows it.
#[test]
fn regression_a_version_2_dom_is_parsed_again_from_the_html() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let prose = "<p>Rangers counted the boats left at the lake and asked walkers to carry out \
                 everything they bring in, a rule that starts in spring.</p>"
        .repeat(6);
    let html = format!("<body><div style='visibility:hidden'>{prose}</div></body>");
    let today = parse_html(&html).dom;
    assert!(crate::dom::text::visible_text(&today).contains("Rangers"));
    let mut v2 = crate::dom::tree::ENCODING.to_vec();
    v2[5] = 2;
    let mut c = Commit::new();
    c.page(
        NewPage::new(
            7,
            meta("http://a/", "a"),
            html.as_bytes(),
            &Default::default(),
            &today.path_set(),
        )
        .with_dom_bytes(&v2),
    );
    s.commit(c).unwrap();
    assert_eq!(dom_of(&s, "a", 7), today);
}

#[test]
fn a_second_url_with_the_same_body_is_recorded_as_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let html = b"<p>same bytes</p>";
    let dom = parse_html("<p>same bytes</p>").dom;
    let paths = dom.path_set();
    let mut c = Commit::new();
    c.page(NewPage::new(1, meta("http://a/x", "a"), html, &dom, &paths));
    assert!(s.commit(c).unwrap().page_stored);
    let mut c = Commit::new();
    c.page(NewPage::new(
        2,
        meta("http://a/x?print=1", "a"),
        html,
        &dom,
        &paths,
    ));
    // Asked before the commit, the store gives the verdict the commit then reaches (the WARC
    // archive writes a revisit on it); the stored page itself has no twin.
    assert_eq!(s.twin_of(c.new_page().unwrap()).unwrap(), Some(1));
    let again = NewPage::new(1, meta("http://a/x", "a"), html, &dom, &paths);
    assert_eq!(s.twin_of(&again).unwrap(), None);
    let out = s.commit(c).unwrap();
    assert!(!out.page_stored);
    assert_eq!(out.duplicate_of, Some(1));
    assert_eq!(s.site_counters("a").pages, 1);
    let errors: Vec<(String, ErrorRecord)> = s.errors().map(|e| e.unwrap()).collect();
    assert_eq!(errors[0].0, "http://a/x?print=1");
    assert_eq!(errors[0].1.kind, "duplicate");
    // Another site may hold the same bytes: sites are learned separately.
    let mut c = Commit::new();
    c.page(NewPage::new(3, meta("http://b/x", "b"), html, &dom, &paths));
    assert!(s.commit(c).unwrap().page_stored);
}

#[test]
fn cleaned_text_and_its_summary_agree() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    assert_eq!(s.cleaned_sum(9).unwrap(), None);
    assert!(!s.has_cleaned(9).unwrap());
    let rec = CleanRecord {
        cluster: 3,
        text: "kept text\n".into(),
        updated_at_ms: 1,
    };
    s.put_cleaned(9, &rec).unwrap();
    assert_eq!(s.cleaned(9).unwrap().unwrap(), rec);
    let (cluster, hash) = s.cleaned_sum(9).unwrap().unwrap();
    assert_eq!(cluster, 3);
    assert_eq!(hash, xxhash_rust::xxh3::xxh3_64(b"kept text\n"));
    s.put_cleaned(
        9,
        &CleanRecord {
            text: "other".into(),
            ..rec
        },
    )
    .unwrap();
    assert_ne!(s.cleaned_sum(9).unwrap().unwrap().1, hash);
    s.put_cleaned(0x0100, &rec).unwrap();
    assert_eq!(s.cleaned_ids().unwrap(), [9, 0x0100].into());
}

/// A page's model fingerprint certifies its current cleaned text only: any other write of its
/// text or byline, and new bytes for the page, remove it (`learn::site` then cleans it again).
#[test]
fn a_model_fingerprint_goes_with_new_text_a_new_byline_or_new_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let html = b"<p>first bytes</p>";
    let dom = parse_html("<p>first bytes</p>").dom;
    let mut c = Commit::new();
    c.page(NewPage::new(
        1,
        meta("http://a/x", "a"),
        html,
        &dom,
        &dom.path_set(),
    ));
    assert!(s.commit(c).unwrap().page_stored);
    let rec = CleanRecord {
        cluster: 0,
        text: "first".into(),
        updated_at_ms: 1,
    };
    assert_eq!(s.clean_model(1).unwrap(), None);
    s.put_cleaned(1, &rec).unwrap();
    s.put_clean_models(&[1], 77).unwrap();
    assert_eq!(s.clean_model(1).unwrap(), Some(77));
    s.put_cleaned(1, &rec).unwrap();
    assert_eq!(s.clean_model(1).unwrap(), None, "text written again");
    s.put_clean_models(&[1], 77).unwrap();
    let byline = BylineRecord {
        author: Some("A. Writer".into()),
        published: None,
    };
    s.put_byline(1, &byline).unwrap();
    assert_eq!(s.clean_model(1).unwrap(), None, "a new byline");
    s.put_clean_models(&[1], 77).unwrap();
    let html = b"<p>second bytes</p>";
    let dom = parse_html("<p>second bytes</p>").dom;
    let mut c = Commit::new();
    c.replace(
        NewPage::new(1, meta("http://a/x", "a"), html, &dom, &dom.path_set()),
        xxhash_rust::xxh3::xxh3_64(b"<p>first bytes</p>"),
    );
    s.commit(c).unwrap();
    assert_eq!(s.clean_model(1).unwrap(), None, "the page replaced");
}

/// A page's Markdown is kept with its text; text stored without it (before Markdown was)
/// reads as before and has none.
#[test]
fn markdown_is_stored_with_the_text_and_text_without_it_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let rec = |text: &str| CleanRecord {
        cluster: 1,
        text: text.into(),
        updated_at_ms: 1,
    };
    let mut batch = CleanBatch::default();
    batch.cleaned("a", 1, &rec("Title\nbody"), Some("# Title\n\nbody\n"));
    batch.cleaned("a", 2, &rec("old text"), None);
    s.put_clean_batch(batch).unwrap();
    assert_eq!(s.cleaned(1).unwrap(), Some(rec("Title\nbody")));
    assert_eq!(
        s.cleaned_markdown(1).unwrap().as_deref(),
        Some("# Title\n\nbody\n")
    );
    assert_eq!(s.cleaned(2).unwrap(), Some(rec("old text")));
    assert_eq!(s.cleaned_markdown(2).unwrap(), None);
    assert_eq!(s.cleaned_markdown(3).unwrap(), None);
}

/// A `CleanBatch` writes what `put_cleaned_many`, `put_byline` and `put_clean_models` would,
/// in the order added: a fingerprint certified after the page's text and byline stands, one
/// added before them does not.
#[test]
fn a_clean_batch_stores_texts_bylines_and_fingerprints_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let rec = |text: &str| CleanRecord {
        cluster: 3,
        text: text.into(),
        updated_at_ms: 1,
    };
    let byline = BylineRecord {
        author: Some("A. Writer".into()),
        published: None,
    };
    let mut batch = CleanBatch::default();
    batch.cleaned("a", 1, &rec("one"), None);
    batch.byline(1, &byline);
    batch.cleaned("a", 2, &rec("two"), None);
    batch.certify(&[1, 2], 77);
    batch.certify(&[3], 5);
    batch.byline(3, &byline);
    s.put_clean_batch(batch).unwrap();
    assert_eq!(s.cleaned(1).unwrap(), Some(rec("one")));
    assert_eq!(s.cleaned(2).unwrap(), Some(rec("two")));
    assert_eq!(
        s.cleaned_sum(2).unwrap(),
        Some((3, xxhash_rust::xxh3::xxh3_64(b"two")))
    );
    assert_eq!(s.byline(1).unwrap(), Some(byline.clone()));
    assert_eq!(s.byline(2).unwrap(), None);
    assert_eq!(s.clean_model(1).unwrap(), Some(77));
    assert_eq!(s.clean_model(2).unwrap(), Some(77));
    assert_eq!(
        s.clean_model(3).unwrap(),
        None,
        "a byline after the fingerprint"
    );
    // An empty byline removes the stored one; an empty batch writes nothing.
    let mut batch = CleanBatch::default();
    batch.byline(1, &BylineRecord::default());
    s.put_clean_batch(batch).unwrap();
    assert_eq!(s.byline(1).unwrap(), None);
    assert_eq!(s.clean_model(1).unwrap(), None);
    s.put_clean_batch(CleanBatch::default()).unwrap();
    assert_eq!(s.cleaned(1).unwrap(), Some(rec("one")));
}

#[test]
fn state_survives_reopen_and_origin_ids_stay_unique() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        let mut c = Commit::new();
        c.discover("http://a".into(), QueueEntry::page("http://a/1".into(), 0));
        s.commit(c).unwrap();
        s.flush().unwrap();
    }
    let s = open(dir.path());
    let mut c = Commit::new();
    c.discover("http://b".into(), QueueEntry::page("http://b/1".into(), 0))
        .discover("http://a".into(), QueueEntry::page("http://a/2".into(), 0));
    let out = s.commit(c).unwrap();
    let ids: HashSet<u32> = s.origins().iter().map(|o| o.id).collect();
    assert_eq!(ids.len(), 2);
    let a2 = out
        .enqueued
        .iter()
        .find(|e| &*e.origin_key == "http://a")
        .unwrap();
    assert_eq!(a2.seq, 1, "sequence numbers continue after reopening");
    assert!(s.is_seen("http://a/1").unwrap());
}

#[test]
fn a_second_open_of_the_same_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let _s = open(dir.path());
    let err = Store::open(dir.path(), 8 << 20).err().unwrap();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
}

#[test]
fn other_schema_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        s.tree
            .insert(key::bytes(key::META, b"schema"), &99u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
    }
    let err = Store::open(dir.path(), 8 << 20).err().unwrap();
    assert!(matches!(err, StoreError::Schema { found: 99, .. }), "{err}");
}

#[test]
fn a_store_behind_its_marker_is_damaged_and_reads_never_create_one() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = Store::open_existing(&empty, 8 << 20).err().unwrap();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err}");
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    {
        let s = open(dir.path());
        s.flush().unwrap();
        s.flush().unwrap();
    }
    // The open flushed too (stamp 1: a new stamp per open), then the two flushes.
    let marker = dir.path().join(MARKER);
    assert!(std::fs::read_to_string(&marker)
        .unwrap()
        .contains("\"stamp\":3"));
    drop(Store::open_existing(dir.path(), 8 << 20).unwrap());
    std::fs::write(&marker, r#"{"store":"thresher","schema":1,"stamp":5}"#).unwrap();
    let err = Store::open(dir.path(), 8 << 20).err().unwrap();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("stamp 4"), "{err}");
}

use std::collections::HashSet;

/// The revisit queue gives pages whose sitemap `<lastmod>` is newer first, then pages a feed
/// links to, then the rest oldest fetch first; a page is queued once.
#[test]
fn revisits_come_lastmod_first_then_feed_then_oldest() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let slot = |page: u64, order: u64| RevisitSlot {
        origin: 3,
        class: class::AGE,
        order,
        page,
    };
    let entry = |page: u64| QueueEntry {
        kind: EntryKind::Revisit,
        ..QueueEntry::page(format!("http://a/{page}"), 1)
    };
    let list: Vec<(RevisitSlot, QueueEntry)> = [(1, 500), (2, 100), (3, 300), (4, 200)]
        .iter()
        .map(|&(p, o)| (slot(p, o), entry(p)))
        .collect();
    assert_eq!(s.queue_revisits(&list).unwrap(), 4);
    assert_eq!(s.queue_revisits(&list).unwrap(), 0, "queued once");
    assert!(s
        .promote_revisit(slot(3, 300).in_class(class::FEED))
        .unwrap());
    assert!(s
        .promote_revisit(slot(1, 500).in_class(class::LASTMOD))
        .unwrap());
    assert!(
        !s.promote_revisit(slot(1, 500).in_class(class::FEED))
            .unwrap(),
        "never moved down"
    );
    assert!(
        !s.promote_revisit(slot(9, 1).in_class(class::LASTMOD))
            .unwrap(),
        "a page not queued stays out"
    );
    let order: Vec<u64> = s
        .revisits_of(3, &Default::default(), 10)
        .unwrap()
        .into_iter()
        .map(|(sl, e)| {
            assert_eq!(e.url, format!("http://a/{}", sl.page));
            sl.page
        })
        .collect();
    assert_eq!(order, vec![1, 3, 2, 4]);
    assert_eq!(s.revisit_lengths().unwrap()[&3], 4);
    let taken = [slot(1, 500).in_class(class::LASTMOD)]
        .into_iter()
        .collect();
    assert_eq!(s.revisits_of(3, &taken, 1).unwrap()[0].0.page, 3);
}

/// Regression: a page of 230,000 links put 230,000 queue keys into sled's in-memory tree. Queued
/// URLs are now segments of `SEGMENT_ENTRIES`: few keys, read back in order, consumed entries
/// skipped (also out of order), and a segment removed once all of it is consumed.
#[test]
fn queued_urls_of_a_huge_page_are_few_sled_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let n = 10_000;
    let mut c = Commit::new();
    for i in 0..n {
        c.discover(
            "http://a".into(),
            QueueEntry::page(format!("http://a/{i}"), 1),
        );
    }
    let out = s.commit(c).unwrap();
    assert_eq!(out.enqueued.len(), n);
    let id = out.enqueued[0].origin_id;
    let segments = || s.tree.scan_prefix([key::FRONTIER]).count();
    assert!(
        segments() <= n.div_ceil(SEGMENT_ENTRIES) + n.div_ceil(DISCOVER_BATCH),
        "{} sled keys for {n} queued URLs",
        segments()
    );
    assert_eq!(s.tree.scan_prefix([key::QUEUE]).count(), 0);
    assert_eq!(s.queue_lengths().unwrap()[&id], n as u64);

    // Consume 1 before 0, then the rest of the first segment and more.
    let mut c = Commit::new();
    c.done(id, 1);
    s.commit(c).unwrap();
    let head: Vec<u64> = s
        .queue_from(id, 0, 3)
        .unwrap()
        .iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(head, vec![0, 2, 3], "a consumed entry is skipped");
    let before = segments();
    let mut c = Commit::new();
    for seq in (0..SEGMENT_ENTRIES as u64 + 10).filter(|&q| q != 1) {
        c.done(id, seq);
    }
    s.commit(c).unwrap();
    assert_eq!(segments(), before - 1, "a segment all consumed is removed");
    let next = s.queue_from(id, 0, 1).unwrap();
    assert_eq!(next[0].0, SEGMENT_ENTRIES as u64 + 10);
    assert_eq!(next[0].1.url, format!("http://a/{}", SEGMENT_ENTRIES + 10));
    assert_eq!(
        s.queue_lengths().unwrap()[&id],
        (n - SEGMENT_ENTRIES - 10) as u64
    );

    // The consumed state survives reopening; a resume reads on from where it was.
    s.flush().unwrap();
    drop(s);
    let s = open(dir.path());
    assert_eq!(s.queue_from(id, 0, 1).unwrap(), next);
    assert_eq!(
        s.queue_lengths().unwrap()[&id],
        (n - SEGMENT_ENTRIES - 10) as u64
    );
}

/// A store of schema 1 (one key per queue entry) is upgraded when opened: its queued URLs come
/// back in order, nothing consumed comes back, new URLs queue after them.
#[test]
fn a_schema_1_queue_is_upgraded_to_segments_in_order() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        let t = &s.tree;
        t.insert(key::bytes(key::META, b"schema"), &1u32.to_be_bytes())
            .unwrap();
        let rec = OriginRecord {
            id: 4,
            key: "http://a".into(),
            next_seq: 600,
        };
        t.insert(key::bytes(key::ORIGIN, b"http://a"), encode(&rec))
            .unwrap();
        // Entries 0..100 consumed, 100..600 queued except 300.
        for seq in (100..600u64).filter(|&q| q != 300) {
            let mut k = key::queue_prefix(4);
            k.extend_from_slice(&seq.to_be_bytes());
            let e = QueueEntry::page(format!("http://a/{seq}"), 1);
            t.insert(k, encode(&e)).unwrap();
            t.insert(key::bytes(key::SEEN, e.url.as_bytes()), &[][..])
                .unwrap();
        }
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(s.tree.scan_prefix([key::QUEUE]).count(), 0);
    assert_eq!(s.queue_lengths().unwrap()[&4], 499);
    let urls: Vec<String> = s
        .queue_from(4, 0, 1000)
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.url)
        .collect();
    let want: Vec<String> = (100..600u64)
        .filter(|&q| q != 300)
        .map(|q| format!("http://a/{q}"))
        .collect();
    assert_eq!(urls, want);
    let mut c = Commit::new();
    c.discover(
        "http://a".into(),
        QueueEntry::page("http://a/new".into(), 1),
    )
    .discover(
        "http://a".into(),
        QueueEntry::page("http://a/150".into(), 1),
    );
    let out = s.commit(c).unwrap();
    assert_eq!(out.enqueued.len(), 1, "the seen set came through");
    let all = s.queue_from(4, 0, 1000).unwrap();
    assert_eq!(all.last().unwrap().1.url, "http://a/new");
}

/// Regression (`links3`): one sled key per seen URL cost ~90 bytes of sled's in-memory tree each;
/// the seen set is now 8-byte URL hashes in buckets, no key holding a URL.
#[test]
fn seen_set_holds_url_hashes_in_buckets_not_a_key_per_url() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let n = 10_000;
    let mut c = Commit::new();
    for i in (0..n).chain([7, 9_999]) {
        c.discover(
            "http://a".into(),
            QueueEntry::page(format!("http://a/{i}"), 1),
        );
    }
    assert_eq!(
        s.commit(c).unwrap().enqueued.len(),
        n,
        "duplicates in one commit"
    );
    let mut keys = 0;
    let mut hashes = 0;
    for item in s.tree.scan_prefix([key::SEEN]) {
        let (k, v) = item.unwrap();
        assert_eq!(k.len(), 3, "a bucket key, not a URL: {k:?}");
        assert_eq!(v.len() % 8, 0);
        keys += 1;
        hashes += v.len() / 8;
    }
    assert_eq!(hashes, n, "one hash per URL");
    assert!(keys < n, "{keys} keys for {n} URLs");
    assert!(s.is_seen("http://a/0").unwrap() && s.is_seen("http://a/9999").unwrap());
    assert!(!s.is_seen("http://a/10000").unwrap());
    let mut c = Commit::new();
    c.discover("http://a".into(), QueueEntry::page("http://a/5".into(), 1))
        .discover(
            "http://a".into(),
            QueueEntry::page("http://a/new".into(), 1),
        );
    let out = s.commit(c).unwrap();
    assert_eq!(out.enqueued.len(), 1, "a seen URL is not queued again");
}

/// Regression (1M pages): with a small sled cache every new link's bucket was decoded from sled
/// again. The commits keep the buckets they use in memory, only once their batch is applied;
/// a reopened store reads them from the tree again, with the same answers.
#[test]
fn the_seen_set_kept_in_memory_answers_as_the_tree_does_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let discover = |s: &Store, urls: &[&str]| {
        let mut c = Commit::new();
        for u in urls {
            c.discover(
                "http://a".into(),
                QueueEntry::page(format!("http://a/{u}"), 1),
            );
        }
        let out = s.commit(c).unwrap();
        out.enqueued.len()
    };
    {
        let s = open(dir.path());
        let all: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        assert_eq!(discover(&s, &all), 100);
        let in_tree = s.tree.scan_prefix([key::SEEN]).count();
        assert_eq!(
            s.lock().seen.buckets_held(),
            in_tree,
            "every bucket used is in memory"
        );
        assert_eq!(discover(&s, &["5", "new"]), 1, "from memory: 5 was seen");
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_eq!(
        s.lock().seen.buckets_held(),
        0,
        "nothing in memory after a reopen"
    );
    assert_eq!(
        discover(&s, &["7", "new", "newer"]),
        1,
        "from the tree: 7 and new were seen"
    );
    assert!(s.lock().seen.buckets_held() > 0);
}

/// A store of schema 2 (one seen key per URL) is upgraded when opened: every URL it had seen is
/// still seen, no old key is left, and an upgrade cut short finishes on the next open.
#[test]
fn a_schema_2_seen_set_is_upgraded_to_hash_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..5_000).map(|i| format!("http://a/{i}")).collect();
    let old_keys = |s: &Store| {
        s.tree
            .scan_prefix([key::SEEN])
            .filter(|i| i.as_ref().unwrap().0.len() != 3)
            .count()
    };
    {
        let s = open(dir.path());
        s.tree
            .insert(key::bytes(key::META, b"schema"), &2u32.to_be_bytes())
            .unwrap();
        for u in &urls {
            s.tree
                .insert(key::bytes(key::SEEN, u.as_bytes()), &[][..])
                .unwrap();
        }
        // An earlier upgrade cut short: some URLs already in their buckets, their keys gone.
        let mut seen = seen::SeenBatch::default();
        let mut batch = sled::Batch::default();
        for u in &urls[..100] {
            assert!(seen.insert(&s.tree, u).unwrap());
            batch.remove(key::bytes(key::SEEN, u.as_bytes()));
        }
        seen.write(&mut batch);
        s.tree.apply_batch(batch).unwrap();
        assert_eq!(old_keys(&s), urls.len() - 100);
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(old_keys(&s), 0);
    assert!(urls.iter().all(|u| s.is_seen(u).unwrap()));
    let hashes: usize = s
        .tree
        .scan_prefix([key::SEEN])
        .map(|i| i.unwrap().1.len() / 8)
        .sum();
    assert_eq!(hashes, urls.len(), "each URL once");
    let mut c = Commit::new();
    c.discover("http://a".into(), QueueEntry::page(urls[4_000].clone(), 1))
        .discover(
            "http://a".into(),
            QueueEntry::page("http://a/new".into(), 1),
        );
    assert_eq!(s.commit(c).unwrap().enqueued.len(), 1);
}

/// The store records today's schema (an upgraded store included).
fn assert_schema_is_current(s: &Store) {
    let v = s
        .tree
        .get(key::bytes(key::META, b"schema"))
        .unwrap()
        .unwrap();
    assert_eq!(v.as_ref(), &SCHEMA_VERSION.to_be_bytes());
}

#[test]
fn a_schema_3_store_gets_doms_and_path_sets_keyed_by_site() {
    let dir = tempfile::tempdir().unwrap();
    let page_of = |i: u64| {
        let site = if i % 2 == 0 { "a" } else { "b" };
        let html = format!("<title>T{i}</title><p>page {i}</p>");
        let dom = parse_html(&html).dom;
        (site, html, dom)
    };
    let old_keys = |s: &Store| {
        [key::DOM, key::PATHS]
            .iter()
            .map(|&p| {
                s.tree
                    .scan_prefix([p])
                    .filter(|i| i.as_ref().unwrap().0.len() == 9)
                    .count()
            })
            .sum::<usize>()
    };
    {
        let s = open(dir.path());
        for i in 1..=20u64 {
            let (site, html, dom) = page_of(i);
            let url = format!("http://{site}/{i}");
            let mut c = Commit::new();
            c.page(NewPage::new(
                i,
                meta(&url, site),
                html.as_bytes(),
                &dom,
                &dom.path_set(),
            ));
            s.commit(c).unwrap();
            as_stored_before_schema_6(&s, site, i);
        }
        // Schema 3 keyed both by page id alone; an earlier upgrade cut short left pages 1-3
        // moved already.
        for i in 4..=20u64 {
            let site = page_of(i).0;
            for p in [key::DOM, key::PATHS] {
                let v = s.tree.remove(key::of_site(p, site, i)).unwrap().unwrap();
                s.tree.insert(key::page(p, i), v).unwrap();
            }
        }
        s.tree
            .insert(key::bytes(key::META, b"schema"), &3u32.to_be_bytes())
            .unwrap();
        assert_eq!(old_keys(&s), 2 * 17);
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(old_keys(&s), 0);
    for i in 1..=20u64 {
        let (site, _, dom) = page_of(i);
        assert_eq!(dom_of(&s, site, i), dom, "page {i}");
        assert_eq!(s.path_set(site, i).unwrap().unwrap(), dom.path_set());
    }
    // One site's DOMs are one run of keys: reading a site touches its own tree nodes.
    let mut prefix = vec![key::DOM];
    prefix.extend_from_slice(b"a\0");
    assert_eq!(s.tree.scan_prefix(&prefix).count(), 10);
}

/// Pages with text and clusters per site, counted the slow way `status` used to: every page's
/// text flag, and the site's clustering decoded.
fn counted_status(s: &Store, site: &str) -> SiteStatus {
    let cleaned = s.cleaned_ids().unwrap();
    SiteStatus {
        cleaned: s
            .site_pages(site)
            .unwrap()
            .iter()
            .filter(|id| cleaned.contains(id))
            .count() as u64,
        clusters: s
            .site_clusters(site)
            .unwrap()
            .map_or(0, |k| k.clusters.len() as u64),
    }
}

/// Stores `n` pages, ids 1..=n, alternately of sites "a" and "b".
fn two_sites(s: &Store, n: u64) {
    two_sites_from(s, 1, n)
}

/// Stores pages `first..=last` as [`two_sites`] does.
fn two_sites_from(s: &Store, first: u64, last: u64) {
    for i in first..=last {
        let site = if i % 2 == 0 { "a" } else { "b" };
        let html = format!("<p>page {i}</p>");
        let dom = parse_html(&html).dom;
        let mut c = Commit::new();
        c.page(NewPage::new(
            i,
            meta(&format!("http://{site}/{i}"), site),
            html.as_bytes(),
            &dom,
            &dom.path_set(),
        ));
        assert!(s.commit(c).unwrap().page_stored);
    }
}

fn clusters_of(n: usize) -> SiteClusters {
    SiteClusters {
        detector: "text-max".into(),
        clusters: (0..n as u32)
            .map(|id| ClusterSummary {
                id,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `status` on a 1M-page store read every page's text flag (seconds cold): each site's
/// `SiteStatus` now counts its pages with text as texts are stored — a page once, however often
/// it is cleaned again or appears in one batch — and its clusters as they are stored.
#[test]
fn status_reads_a_record_per_site_not_every_pages_text() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    two_sites(&s, 9);
    let rec = |text: &str| CleanRecord {
        cluster: 0,
        text: text.into(),
        updated_at_ms: 1,
    };
    let mut batch = CleanBatch::default();
    for id in [2, 4, 4, 1] {
        let site = if id % 2 == 0 { "a" } else { "b" };
        batch.cleaned(site, id, &rec("first"), None);
    }
    s.put_clean_batch(batch).unwrap();
    assert_eq!(s.site_status("a").unwrap().cleaned, 2);
    assert_eq!(s.site_status("b").unwrap().cleaned, 1);
    // Cleaned again, with new pages beside: only the new ones count.
    let mut batch = CleanBatch::default();
    for id in [2, 4, 6, 3] {
        let site = if id % 2 == 0 { "a" } else { "b" };
        batch.cleaned(site, id, &rec("again"), None);
    }
    s.put_clean_batch(batch).unwrap();
    s.put_site_clusters("a", &clusters_of(3)).unwrap();
    s.put_site_clusters("b", &clusters_of(5)).unwrap();
    s.put_site_clusters("a", &clusters_of(2)).unwrap();
    for site in ["a", "b"] {
        assert_eq!(
            s.site_status(site).unwrap(),
            counted_status(&s, site),
            "{site}"
        );
    }
    assert_eq!(
        s.site_status("a").unwrap(),
        SiteStatus {
            cleaned: 3,
            clusters: 2
        }
    );
    assert_eq!(s.site_status("c").unwrap(), SiteStatus::default());
}

#[test]
fn a_schema_4_store_gets_a_site_status_per_site() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        two_sites(&s, 12);
        let texts: Vec<_> = [1, 2, 4, 7, 8, 10]
            .iter()
            .map(|&id| {
                let record = CleanRecord {
                    cluster: 0,
                    text: format!("text {id}"),
                    updated_at_ms: 1,
                };
                (id, record)
            })
            .collect();
        s.put_cleaned_many(&texts).unwrap();
        s.put_site_clusters("b", &clusters_of(4)).unwrap();
        // Schema 4 had no such records.
        for k in s.tree.scan_prefix([key::SITE_STATUS]).keys() {
            s.tree.remove(k.unwrap()).unwrap();
        }
        s.tree
            .insert(key::bytes(key::META, b"schema"), &4u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(
        s.site_status("a").unwrap(),
        SiteStatus {
            cleaned: 4,
            clusters: 0
        }
    );
    assert_eq!(
        s.site_status("b").unwrap(),
        SiteStatus {
            cleaned: 2,
            clusters: 4
        }
    );
}

#[test]
fn bytes_by_kind_adds_up_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    two_sites(&s, 3);
    let kinds = s.bytes_by_kind().unwrap();
    let pages = kinds.iter().find(|k| k.prefix == 'p').unwrap();
    assert_eq!(pages.keys, 3);
    assert_eq!(pages.key_bytes, 3 * 9);
    let stored: u64 = (1..=3u64)
        .map(|i| s.tree.get(key::page(key::PAGE, i)).unwrap().unwrap().len() as u64)
        .sum();
    assert_eq!(pages.value_bytes, stored);
    let all: u64 = kinds.iter().map(|k| k.keys).sum();
    assert_eq!(all, s.tree.len() as u64);
}

/// Page `id`'s HTML, DOM and path set moved back into sled, as every store before schema 6 kept them.
fn as_stored_before_schema_6(s: &Store, site: &str, id: u64) {
    let r = s.page_ref(id).unwrap().unwrap();
    let html = s.pages.read(&r, pages::Part::Html).unwrap().unwrap();
    let dom = s.pages.read(&r, pages::Part::Dom).unwrap().unwrap();
    let paths = s.pages.read(&r, pages::Part::Paths).unwrap().unwrap();
    s.tree.insert(key::page(key::HTML, id), html).unwrap();
    s.tree
        .insert(key::of_site(key::DOM, site, id), dom)
        .unwrap();
    s.tree
        .insert(key::of_site(key::PATHS, site, id), paths)
        .unwrap();
    let mut record = s.page_record(id).unwrap().unwrap();
    record.at = None;
    s.tree
        .insert(key::page(key::PAGE, id), encode(&record))
        .unwrap();
}

#[test]
fn page_bytes_live_in_page_files_and_sled_keeps_only_where() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    two_sites(&s, 4);
    for prefix in [key::HTML, key::DOM, key::PATHS] {
        assert_eq!(s.tree.scan_prefix([prefix]).count(), 0, "nothing inline");
    }
    let refs: u64 = (1..=4u64)
        .map(|i| s.page_ref(i).unwrap().unwrap().len())
        .sum();
    assert_eq!(s.page_file_bytes().unwrap(), refs);
    assert_eq!(
        s.html(3).unwrap().unwrap(),
        b"<p>page 3</p>",
        "read back through its reference"
    );
    let dom = parse_html("<p>page 3</p>").dom;
    assert_eq!(s.path_set("b", 3).unwrap().unwrap(), dom.path_set());
    assert_eq!(dom_of(&s, "b", 3), dom);
    assert!(s.size_on_disk() >= refs);
}

#[test]
fn a_schema_5_store_keeps_its_inline_pages_and_writes_new_ones_to_page_files() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        two_sites(&s, 2);
        for (site, id) in [("b", 1), ("a", 2)] {
            as_stored_before_schema_6(&s, site, id);
        }
        s.tree
            .insert(key::bytes(key::META, b"schema"), &5u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
    }
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(
        s.html(1).unwrap().unwrap(),
        b"<p>page 1</p>",
        "inline, as before"
    );
    assert_eq!(
        s.path_set("b", 1).unwrap().unwrap(),
        parse_html("<p>page 1</p>").dom.path_set()
    );
    assert_eq!(dom_of(&s, "a", 2), parse_html("<p>page 2</p>").dom);
    // A recrawl replaces page 2: its new bytes go to a page file, its inline ones go away.
    let html = "<p>page 2, changed</p>";
    let dom = parse_html(html).dom;
    let new = NewPage::new(
        2,
        meta("http://a/2", "a"),
        html.as_bytes(),
        &dom,
        &dom.path_set(),
    );
    let old = xxhash_rust::xxh3::xxh3_64(b"<p>page 2</p>");
    let mut c = Commit::new();
    c.replace(new, old);
    s.commit(c).unwrap();
    assert!(s.page_ref(2).unwrap().is_some());
    assert!(s.tree.get(key::page(key::HTML, 2)).unwrap().is_none());
    assert!(s
        .tree
        .get(key::of_site(key::DOM, "a", 2))
        .unwrap()
        .is_none());
    assert!(s
        .tree
        .get(key::of_site(key::PATHS, "a", 2))
        .unwrap()
        .is_none());
    assert_eq!(s.path_set("a", 2).unwrap().unwrap(), dom.path_set());
    assert_eq!(s.html(2).unwrap().unwrap(), html.as_bytes());
    assert_eq!(dom_of(&s, "a", 2), dom);
}

#[test]
fn page_files_cut_short_since_the_last_flush_are_damage() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        two_sites(&s, 3);
        s.flush().unwrap();
    }
    let marker = std::fs::read_to_string(dir.path().join(MARKER)).unwrap();
    let file = dir.path().join(pages::DIR).join("000000.pages");
    let len = std::fs::metadata(&file).unwrap().len();
    assert!(
        marker.contains(&format!("\"last_page_file\":[0,{len}]")),
        "{marker}"
    );
    drop(Store::open(dir.path(), 8 << 20).unwrap());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let err = Store::open(dir.path(), 8 << 20).err().unwrap();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn compaction_gives_back_the_bytes_of_replaced_pages() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = open(dir.path());
        two_sites(&s, 1);
        let one = s.page_ref(1).unwrap().unwrap().len();
        // Two pages a file: 0 holds pages 1 and 2, file 1 pages 3 and 4.
        s.pages.file_bytes = 2 * one + 10;
        two_sites_from(&s, 2, 4);
        let file_of = |id| s.page_ref(id).unwrap().unwrap().file;
        assert_eq!([1, 2, 3, 4].map(file_of), [0, 0, 1, 1]);
        assert_eq!(s.compact_page_files().unwrap(), Compacted::default());

        // A recrawl replaces page 1: half of file 0 is dead.
        let html = "<p>page 1, changed</p>";
        let dom = parse_html(html).dom;
        let new = NewPage::new(
            1,
            meta("http://b/1", "b"),
            html.as_bytes(),
            &dom,
            &dom.path_set(),
        );
        let mut c = Commit::new();
        c.replace(new, xxhash_rust::xxh3::xxh3_64(b"<p>page 1</p>"));
        s.commit(c).unwrap();
        assert_eq!(s.dead_bytes(0).unwrap(), one);

        let done = s.compact_page_files().unwrap();
        assert_eq!(
            done,
            Compacted {
                files_removed: 1,
                pages_moved: 1,
                bytes_freed: 2 * one,
            }
        );
        let ids: Vec<u32> = s.pages.files().unwrap().iter().map(|f| f.0).collect();
        assert!(!ids.contains(&0), "file 0 is gone: {ids:?}");
        assert_ne!(file_of(2), 0, "page 2 moved");
        assert_eq!(s.dead_bytes(0).unwrap(), 0);
        assert_eq!(s.compact_page_files().unwrap(), Compacted::default());
    }
    let s = open(dir.path());
    assert_eq!(s.html(1).unwrap().unwrap(), b"<p>page 1, changed</p>");
    assert_eq!(s.html(2).unwrap().unwrap(), b"<p>page 2</p>");
    assert_eq!(dom_of(&s, "a", 2), parse_html("<p>page 2</p>").dom);
    assert_eq!(s.html(4).unwrap().unwrap(), b"<p>page 4</p>");
}

/// Regression (the frontier figure): sled defers freeing every node copy a write
/// replaces to crossbeam-epoch's default collector, which frees 8 bags of them per 128 pins;
/// a store that only wrote piled them up (1,000,000 URLs queued: 424–610 MB). Frees deferred
/// before a store write (5,000: ~79 bags, more than a few writes' own pins would collect) have
/// all run once at most 3 writes have returned (without the reclaim: 16). Other tests' garbage
/// shares the collector, so the test allows more than one write.
#[test]
fn store_writes_free_what_sled_deferred() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let freed = Arc::new(AtomicUsize::new(0));
    {
        let guard = crossbeam_epoch::pin();
        for _ in 0..5_000 {
            let freed = Arc::clone(&freed);
            guard.defer(move || freed.fetch_add(1, Ordering::Relaxed));
        }
        guard.flush();
    }
    // Without the store's reclaim, 16 writes of this test (alone) were needed.
    for i in 0..3 {
        if freed.load(Ordering::Relaxed) == 5_000 {
            break;
        }
        let mut c = Commit::new();
        c.discover(
            "http://a".into(),
            QueueEntry::page(format!("http://a/{i}"), 0),
        );
        s.commit(c).unwrap();
    }
    assert_eq!(freed.load(Ordering::Relaxed), 5_000);
}

/// Page `id`'s records as schema 6 kept them: `p` the metadata alone and `B` where its bytes
/// are; `t` the text alone, `T` its cluster and hash, `F` its model, `b` its byline.
fn as_stored_in_schema_6(s: &Store, id: u64) {
    let record = s.page_record(id).unwrap().unwrap();
    s.tree
        .insert(key::page(key::PAGE, id), encode(&record.meta))
        .unwrap();
    if let Some(at) = record.at {
        s.tree
            .insert(key::page(key::PAGE_BYTES, id), encode(&at))
            .unwrap();
    }
    let Some(text) = s.text_value(id).unwrap() else {
        return;
    };
    let mut sum = text.head.cluster.to_be_bytes().to_vec();
    sum.extend_from_slice(&text.head.hash.to_be_bytes());
    s.tree
        .insert(key::page(key::CLEANED, id), text.record_lz4)
        .unwrap();
    s.tree.insert(key::page(key::CLEAN_SUM, id), sum).unwrap();
    if let Some(model) = text.head.model {
        s.tree
            .insert(key::page(key::CLEAN_MODEL, id), &model.to_be_bytes()[..])
            .unwrap();
    }
    if let Some(byline) = text.head.byline {
        s.tree
            .insert(key::page(key::BYLINE, id), encode(&byline))
            .unwrap();
    }
}

/// Everything the store answers about page `id`.
fn page_view(s: &Store, site: &str, id: u64) -> impl PartialEq + std::fmt::Debug {
    (
        s.page(id).unwrap(),
        s.page_ref(id).unwrap(),
        s.html(id).unwrap(),
        s.path_set(site, id).unwrap(),
        s.cleaned(id).unwrap(),
        s.cleaned_sum(id).unwrap(),
        s.clean_model(id).unwrap(),
        s.byline(id).unwrap(),
        s.has_cleaned(id).unwrap(),
    )
}

/// A schema 6 store (7.7 keys a page at 1M pages) is upgraded when opened to one `p` and one
/// `t` value a page: every page reads as before, no retired key is left, and a store whose
/// upgrade was cut short (some pages done, some not) finishes on the next open.
#[test]
fn a_schema_6_store_gets_one_page_value_and_one_text_value_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let site = |i: u64| if i % 2 == 0 { "a" } else { "b" };
    let before = {
        let s = open(dir.path());
        two_sites(&s, 5);
        let rec = |i: u64| CleanRecord {
            cluster: i as u32,
            text: format!("text of page {i}"),
            updated_at_ms: i,
        };
        s.put_cleaned_many(&(1..=4).map(|i| (i, rec(i))).collect::<Vec<_>>())
            .unwrap();
        let byline = BylineRecord {
            author: Some("A. Writer".into()),
            published: Some("2026-11-25".into()),
        };
        s.put_byline(1, &byline).unwrap();
        s.put_clean_models(&[1, 2], 77).unwrap();
        as_stored_before_schema_6(&s, "a", 4);
        let before: Vec<_> = (1..=5).map(|i| page_view(&s, site(i), i)).collect();
        // Pages 1-4 as schema 6 kept them; page 5 already upgraded (a cut-short upgrade), and
        // a fingerprint of page 9, which has no text.
        for i in 1..=4 {
            as_stored_in_schema_6(&s, i);
        }
        s.tree
            .insert(key::page(key::CLEAN_MODEL, 9), &7u64.to_be_bytes()[..])
            .unwrap();
        s.tree
            .insert(key::bytes(key::META, b"schema"), &6u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
        before
    };
    let s = open(dir.path());
    assert_schema_is_current(&s);
    let after: Vec<_> = (1..=5).map(|i| page_view(&s, site(i), i)).collect();
    assert_eq!(after, before);
    assert_eq!(s.clean_model(1).unwrap(), Some(77), "the model kept");
    assert!(s.byline(1).unwrap().is_some(), "the byline kept");
    for prefix in [
        key::PAGE_BYTES,
        key::CLEAN_SUM,
        key::CLEAN_MODEL,
        key::BYLINE,
    ] {
        assert_eq!(
            s.tree.scan_prefix([prefix]).count(),
            0,
            "no {:?} key left",
            prefix as char
        );
    }
    assert_eq!(s.tree.scan_prefix([key::PAGE]).count(), 5);
    assert_eq!(s.tree.scan_prefix([key::CLEANED]).count(), 4);
}

/// A schema 7 store (a site's pages and body hashes one key a page each) is upgraded when
/// opened to buckets: every site lists the same pages, every body finds the same page, no
/// schema 7 key is left, and a store whose upgrade was cut short (some entries already in
/// buckets) finishes on the next open.
#[test]
fn a_schema_7_store_gets_its_site_pages_and_body_hashes_in_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60;
    fn body(i: u64) -> String {
        format!("<p>page {i}</p>")
    }
    fn twin_query_hash(i: u64) -> u64 {
        xxhash_rust::xxh3::xxh3_64(body(i).as_bytes())
    }
    let site = |i: u64| if i % 2 == 0 { "a" } else { "b" };
    // A page of another URL with page `i`'s body: `twin_of` names page `i`.
    let twin_query = |i: u64| {
        let dom = parse_html(&body(i)).dom;
        NewPage::new(
            1000 + i,
            meta(&format!("http://{}/copy-{i}", site(i)), site(i)),
            body(i).as_bytes(),
            &dom,
            &dom.path_set(),
        )
    };
    let buckets = |s: &Store| {
        [key::SITE_PAGE, key::CONTENT]
            .map(|p| s.tree.scan_prefix([p]).count())
            .to_vec()
    };
    // One bucket per site and top byte (of the page id for `S`, the body hash for `D`).
    let expected: Vec<usize> = [|i: u64| i >> 56, |i: u64| twin_query_hash(i) >> 56]
        .iter()
        .map(|top| {
            (1..=n)
                .map(|i| (site(i), top(i)))
                .collect::<std::collections::HashSet<_>>()
                .len()
        })
        .collect();
    let (pages_before, twins_before) = {
        let s = open(dir.path());
        two_sites(&s, n);
        let pages_before = [s.site_pages("a").unwrap(), s.site_pages("b").unwrap()];
        let twins: Vec<_> = (1..=n)
            .map(|i| s.twin_of(&twin_query(i)).unwrap())
            .collect();
        assert!(twins
            .iter()
            .enumerate()
            .all(|(i, t)| *t == Some(i as u64 + 1)));
        assert_eq!(buckets(&s), expected);
        assert_eq!(expected[0], 2, "60 small ids: one bucket a site");
        // Back to schema 7's keys, except pages past n / 2 (a cut-short upgrade moved them).
        for prefix in [key::SITE_PAGE, key::CONTENT] {
            for k in s.tree.scan_prefix([prefix]).keys() {
                s.tree.remove(k.unwrap()).unwrap();
            }
        }
        let mut index = super::site_index::SiteIndexBatch::default();
        for i in 1..=n {
            let content = twin_query(i).content_hash();
            if i > n / 2 {
                index.add_page(&s.tree, site(i), 0, i).unwrap();
                index.set_body(&s.tree, site(i), 0, content, i).unwrap();
            } else {
                s.tree
                    .insert(key::of_site(key::SITE_PAGE, site(i), i), &[][..])
                    .unwrap();
                s.tree
                    .insert(
                        key::of_site(key::CONTENT, site(i), content),
                        &i.to_be_bytes(),
                    )
                    .unwrap();
            }
        }
        let mut batch = sled::Batch::default();
        index.write(&mut batch);
        s.tree.apply_batch(batch).unwrap();
        s.tree
            .insert(key::bytes(key::META, b"schema"), &7u32.to_be_bytes())
            .unwrap();
        s.flush().unwrap();
        (pages_before, twins)
    };
    let s = open(dir.path());
    assert_schema_is_current(&s);
    assert_eq!(
        [s.site_pages("a").unwrap(), s.site_pages("b").unwrap()],
        pages_before
    );
    let twins: Vec<_> = (1..=n)
        .map(|i| s.twin_of(&twin_query(i)).unwrap())
        .collect();
    assert_eq!(twins, twins_before);
    for prefix in [key::SITE_PAGE, key::CONTENT] {
        let left = s
            .tree
            .scan_prefix([prefix])
            .keys()
            .filter(|k| k.as_ref().unwrap().len() == 1 + 1 + 1 + 8)
            .count();
        assert_eq!(left, 0, "no {:?} key of schema 7 left", prefix as char);
    }
    assert_eq!(buckets(&s), expected);
}

/// A recrawl that replaces a page's body moves its body hash in the site's index in the same
/// commit as a new page of the same body: the new page is the replaced page's twin, and the old
/// body belongs to no page.
#[test]
fn a_replaced_body_and_a_new_twin_in_one_commit_share_the_sites_index() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    two_sites(&s, 4);
    let page = |id: u64, url: &str, html: &str| {
        let dom = parse_html(html).dom;
        NewPage::new(id, meta(url, "a"), html.as_bytes(), &dom, &dom.path_set())
    };
    let old = page(2, "http://a/2", "<p>page 2</p>");
    let new = page(2, "http://a/2", "<p>page 2, new</p>");
    let mut c = Commit::new();
    c.replace(new, old.content_hash())
        .page(page(77, "http://a/77", "<p>page 2, new</p>"));
    let out = s.commit(c).unwrap();
    assert_eq!(
        out.duplicate_of,
        Some(2),
        "the replaced body, seen in the same commit"
    );
    assert!(!out.page_stored);
    assert_eq!(
        s.twin_of(&page(78, "http://a/78", "<p>page 2</p>"))
            .unwrap(),
        None
    );
    assert_eq!(s.site_pages("a").unwrap(), vec![2, 4]);
}

#[test]
fn hosts_over_budget_are_replaced_as_a_whole_at_each_run_end() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert!(
        store.over_budget().unwrap().is_empty(),
        "none in a new store"
    );
    store
        .set_over_budget(10, &[("a:1".into(), 5), ("b:1".into(), 7)])
        .unwrap();
    store.set_over_budget(20, &[("b:1".into(), 3)]).unwrap();
    drop(store);
    let store = open(dir.path());
    let over = store.over_budget().unwrap();
    assert_eq!(over.len(), 1, "{over:?}");
    let b = &over["b:1"];
    assert_eq!((b.budget, b.urls), (20, 3));
    store.set_over_budget(0, &[]).unwrap();
    assert!(store.over_budget().unwrap().is_empty());
}

/// A broad crawl's end records thousands of hosts over budget, in several batches: the set
/// still replaces the last run's whole.
#[test]
fn many_hosts_over_budget_replace_the_last_runs_set_across_batches() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let hosts = |from: usize, to: usize, urls: u64| -> Vec<(String, u64)> {
        (from..to)
            .map(|i| (format!("s{i}.example:80"), urls))
            .collect()
    };
    store.set_over_budget(10, &hosts(0, 700, 4)).unwrap();
    assert_eq!(store.over_budget().unwrap().len(), 700);
    store.set_over_budget(20, &hosts(500, 1300, 9)).unwrap();
    let over = store.over_budget().unwrap();
    assert_eq!(over.len(), 800, "the first run's 500 others are gone");
    assert!(over.values().all(|r| (r.budget, r.urls) == (20, 9)));
    assert!(!over.contains_key("s499.example:80") && over.contains_key("s1299.example:80"));
}
