//! A page's cleaned text and what goes with it, one value under `t` (schema 7): the text's
//! cluster and hash, the byline, the fingerprint of the model that wrote it, then the text
//! itself (lz4). Before schema 7 these were four keys (`t`, `T`, `b`, `F`); a sled node per 16
//! keys costs ~220 bytes held whenever the store is open, so a page's keys are what a store
//! costs in memory (docs/benchmarks.md, "Memory").
//!
//! Owns [`CleanBatch`], the readers of the `t` value and the upgrade of the four old keys.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{corrupt, decode, encode, key, BylineRecord, CleanRecord, Store, StoreError};

/// What a `t` value holds before its text: enough to tell whether new text differs, what
/// the page's byline says, and which model wrote the text, without decompressing the text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TextHead {
    pub cluster: u32,
    /// xxh3 of the text.
    pub hash: u64,
    /// The end-of-crawl model that wrote this text (`None`: an incremental step did, or the
    /// page's bytes were replaced since).
    pub model: Option<u64>,
    /// `None` when the cleaner read no author and no date.
    pub byline: Option<BylineRecord>,
}

/// A page's `t` value, decoded up to its text (still lz4, a `CleanRecord`).
pub(crate) struct TextValue {
    pub head: TextHead,
    pub record_lz4: Vec<u8>,
}

impl TextValue {
    fn encode(&self) -> Vec<u8> {
        let mut v = encode(&self.head);
        v.extend_from_slice(&self.record_lz4);
        v
    }

    fn decode(k: &[u8], v: &[u8]) -> Result<TextValue, StoreError> {
        let (head, rest) = postcard::take_from_bytes(v).map_err(|e| corrupt(k, e))?;
        Ok(TextValue {
            head,
            record_lz4: rest.to_vec(),
        })
    }
}

/// What one [`CleanBatch`] changes of a page's `t` value (`None`: left as stored).
#[derive(Debug, Default)]
struct TextUpdate {
    /// Cluster, xxh3 of the text, and the `CleanRecord` (lz4).
    text: Option<(u32, u64, Vec<u8>)>,
    byline: Option<Option<BylineRecord>>,
    model: Option<Option<u64>>,
}

/// Cleaned output gathered for one sled batch ([`Store::put_clean_batch`]): pages' texts,
/// changed bylines and model fingerprints, in the order added (a later write wins), so a step
/// or a cluster of the end-of-crawl pass stores them with one batch, not one per page. A
/// byline or a fingerprint belongs to a page's text: for a page with none, it is not kept.
#[derive(Debug, Default)]
pub struct CleanBatch {
    pages: BTreeMap<u64, TextUpdate>,
    /// The pages given a text, by site: those with none before count in their `SiteStatus`.
    texts: HashMap<String, Vec<u64>>,
}

impl CleanBatch {
    /// The page's cleaned text, and the same text as Markdown (kept after the record in one
    /// lz4 value: a record stored without it reads as before). Text written without a model
    /// fingerprint is certified by none: the end-of-crawl pass certifies it again
    /// ([`CleanBatch::certify`], after this) when its own model wrote the text.
    pub fn cleaned(&mut self, site: &str, id: u64, record: &CleanRecord, markdown: Option<&str>) {
        match self.texts.get_mut(site) {
            Some(ids) => ids.push(id),
            None => {
                self.texts.insert(site.to_string(), vec![id]);
            }
        }
        let mut value = encode(record);
        if let Some(markdown) = markdown {
            value.extend_from_slice(&encode(&markdown));
        }
        let u = self.pages.entry(id).or_default();
        u.text = Some((
            record.cluster,
            xxhash_rust::xxh3::xxh3_64(record.text.as_bytes()),
            lz4_flex::compress_prepend_size(&value),
        ));
        u.model = Some(None);
    }

    /// What the page's byline says (an empty record: nothing). A new byline is new cleaned
    /// output, so the page's model fingerprint goes with it.
    pub fn byline(&mut self, id: u64, record: &BylineRecord) {
        let u = self.pages.entry(id).or_default();
        u.byline = Some((!record.is_empty()).then(|| record.clone()));
        u.model = Some(None);
    }

    /// The model with fingerprint `fingerprint` wrote the cleaned text of each page of `ids`
    /// (its text and byline added to this batch before it).
    pub fn certify(&mut self, ids: &[u64], fingerprint: u64) {
        for &id in ids {
            self.pages.entry(id).or_default().model = Some(Some(fingerprint));
        }
    }
}

impl Store {
    /// A page's `t` value, decoded up to its text.
    pub(crate) fn text_value(&self, id: u64) -> Result<Option<TextValue>, StoreError> {
        let k = key::page(key::CLEANED, id);
        match self.tree.get(&k)? {
            None => Ok(None),
            Some(v) => TextValue::decode(&k, &v).map(Some),
        }
    }

    fn text_head(&self, id: u64) -> Result<Option<TextHead>, StoreError> {
        let k = key::page(key::CLEANED, id);
        match self.tree.get(&k)? {
            None => Ok(None),
            Some(v) => Ok(Some(
                postcard::take_from_bytes(&v).map_err(|e| corrupt(&k, e))?.0,
            )),
        }
    }

    /// The page's cleaned text, if the template engine has produced it.
    pub fn cleaned(&self, id: u64) -> Result<Option<CleanRecord>, StoreError> {
        Ok(self.cleaned_both(id)?.map(|(record, _)| record))
    }

    /// The page's cleaned text as Markdown (`None`: no text, or text stored before Markdown
    /// was).
    pub fn cleaned_markdown(&self, id: u64) -> Result<Option<String>, StoreError> {
        Ok(self.cleaned_both(id)?.and_then(|(_, markdown)| markdown))
    }

    /// The page's cleaned text and its Markdown, when stored.
    pub fn cleaned_both(
        &self,
        id: u64,
    ) -> Result<Option<(CleanRecord, Option<String>)>, StoreError> {
        let k = key::page(key::CLEANED, id);
        let Some(v) = self.tree.get(&k)? else {
            return Ok(None);
        };
        let (_, record_lz4): (TextHead, &[u8]) =
            postcard::take_from_bytes(&v).map_err(|e| corrupt(&k, e))?;
        let bytes = lz4_flex::decompress_size_prepended(record_lz4).map_err(|e| corrupt(&k, e))?;
        let (record, rest): (CleanRecord, &[u8]) =
            postcard::take_from_bytes(&bytes).map_err(|e| corrupt(&k, e))?;
        let markdown = if rest.is_empty() {
            None
        } else {
            Some(decode::<String>(&k, rest)?)
        };
        Ok(Some((record, markdown)))
    }

    /// The ids of every page with cleaned text, read in one pass over the store's keys: what
    /// the upgrade to schema 5 counts per site, in one sequential scan instead of one lookup
    /// per page.
    pub fn cleaned_ids(&self) -> Result<std::collections::HashSet<u64>, StoreError> {
        self.page_ids(key::CLEANED)
    }

    /// Whether the page has cleaned text (without decoding it).
    pub fn has_cleaned(&self, id: u64) -> Result<bool, StoreError> {
        Ok(self.tree.contains_key(key::page(key::CLEANED, id))?)
    }

    /// The page's cleaned text's cluster and xxh3 hash, read without decompressing the text:
    /// enough to tell whether new text differs.
    pub fn cleaned_sum(&self, id: u64) -> Result<Option<(u32, u64)>, StoreError> {
        Ok(self.text_head(id)?.map(|h| (h.cluster, h.hash)))
    }

    /// The fingerprint of the end-of-crawl model that wrote the page's current cleaned text
    /// (`None`: an incremental step wrote it, the page was replaced since, or it has none).
    pub fn clean_model(&self, id: u64) -> Result<Option<u64>, StoreError> {
        Ok(self.text_head(id)?.and_then(|h| h.model))
    }

    /// What the page's byline said when it was last cleaned (`None`: nothing, or never read).
    pub fn byline(&self, id: u64) -> Result<Option<BylineRecord>, StoreError> {
        Ok(self.text_head(id)?.and_then(|h| h.byline))
    }

    /// Apply a [`CleanBatch`] (cleaned texts, bylines, model fingerprints) as one sled batch,
    /// each page's `t` value written whole from what the batch changes and what was stored,
    /// with each site's `SiteStatus` counting the pages that had no text before.
    pub fn put_clean_batch(&self, batch: CleanBatch) -> Result<(), StoreError> {
        let CleanBatch { pages, texts } = batch;
        if pages.is_empty() {
            return Ok(());
        }
        let _held = self.hold_site_status();
        let mut out = sled::Batch::default();
        let mut had_text = std::collections::HashSet::new();
        for (id, u) in pages {
            let k = key::page(key::CLEANED, id);
            let old = self.tree.get(&k)?;
            let (mut head, old_record): (TextHead, &[u8]) = match &old {
                Some(v) => {
                    had_text.insert(id);
                    postcard::take_from_bytes(v).map_err(|e| corrupt(&k, e))?
                }
                // A byline or fingerprint of a page with no text: nothing to keep it with.
                None if u.text.is_none() => continue,
                None => (TextHead::default(), &[]),
            };
            if let Some(byline) = u.byline {
                head.byline = byline;
            }
            if let Some(model) = u.model {
                head.model = model;
            }
            let record = match &u.text {
                Some((cluster, hash, record_lz4)) => {
                    head.cluster = *cluster;
                    head.hash = *hash;
                    record_lz4.as_slice()
                }
                None => old_record,
            };
            let mut value = encode(&head);
            value.extend_from_slice(record);
            out.insert(k, value);
        }
        for (site, ids) in &texts {
            let mut seen = std::collections::HashSet::with_capacity(ids.len());
            let first = ids
                .iter()
                .filter(|&&id| seen.insert(id) && !had_text.contains(&id))
                .count() as u64;
            if first > 0 {
                let mut status = self.site_status(site)?;
                status.cleaned += first;
                out.insert(
                    key::bytes(key::SITE_STATUS, site.as_bytes()),
                    encode(&status),
                );
            }
        }
        self.apply(out)?;
        Ok(())
    }

    /// The page's bytes were replaced: no model has cleaned the new ones, so its text (kept
    /// until it is cleaned again) loses its fingerprint, in `batch`.
    pub(crate) fn uncertify(&self, batch: &mut sled::Batch, id: u64) -> Result<(), StoreError> {
        if let Some(mut value) = self.text_value(id)? {
            if value.head.model.take().is_some() {
                batch.insert(key::page(key::CLEANED, id), value.encode());
            }
        }
        Ok(())
    }

    /// Schema 6 → 7, texts: each page's `t` (lz4 `CleanRecord`), `T` (cluster · xxh3), `F`
    /// (model) and `b` (byline) become one `t` value, `UPGRADE_PAGES` pages per atomic batch,
    /// driven by the `T` keys: a page done has none, so an interrupted upgrade goes on where it
    /// stopped at the next open. Bylines and fingerprints of pages with no text are dropped
    /// (they belonged to none).
    pub(crate) fn upgrade_texts_v6(&self) -> Result<(), StoreError> {
        const UPGRADE_PAGES: usize = 4096;
        loop {
            let mut batch = sled::Batch::default();
            let mut n = 0;
            for item in self.tree.scan_prefix([key::CLEAN_SUM]).take(UPGRADE_PAGES) {
                let (k, sum) = item?;
                n += 1;
                let id = u64::from_be_bytes(
                    k[1..]
                        .try_into()
                        .map_err(|_| corrupt(&k, "clean summary key"))?,
                );
                batch.remove(k.clone());
                batch.remove(key::page(key::CLEAN_MODEL, id));
                batch.remove(key::page(key::BYLINE, id));
                let tk = key::page(key::CLEANED, id);
                let Some(record_lz4) = self.tree.get(&tk)? else {
                    continue;
                };
                if sum.len() != 12 {
                    return Err(corrupt(&k, "clean summary is not 12 bytes"));
                }
                let model = match self.tree.get(key::page(key::CLEAN_MODEL, id))? {
                    None => None,
                    Some(v) => {
                        Some(u64::from_be_bytes(v.as_ref().try_into().map_err(|_| {
                            corrupt(&k, "clean model fingerprint is not 8 bytes")
                        })?))
                    }
                };
                let bk = key::page(key::BYLINE, id);
                let byline: Option<BylineRecord> = match self.tree.get(&bk)? {
                    None => None,
                    Some(v) => Some(decode(&bk, &v)?),
                };
                let value = TextValue {
                    head: TextHead {
                        cluster: u32::from_be_bytes([sum[0], sum[1], sum[2], sum[3]]),
                        hash: u64::from_be_bytes(
                            sum[4..12].try_into().expect("invariant: 8 bytes"),
                        ),
                        model,
                        byline: byline.filter(|b| !b.is_empty()),
                    },
                    record_lz4: record_lz4.to_vec(),
                };
                batch.insert(tk, value.encode());
            }
            if n == 0 {
                break;
            }
            self.apply(batch)?;
        }
        self.remove_prefix(key::CLEAN_MODEL)?;
        self.remove_prefix(key::BYLINE)
    }
}
