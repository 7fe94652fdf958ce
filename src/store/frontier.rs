//! The per-origin FIFO queues as segments: one sled value holds up to [`SEGMENT_ENTRIES`]
//! consecutive queue entries of an origin, so 690,000 queued URLs are a few thousand sled values
//! instead of 690,000 keys (sled's in-memory tree held about 200 MB for them and the seen set).
//! A segment is written once, in the same atomic batch as the seen-set entries of its
//! URLs, and removed once every entry in it is consumed; what is consumed is the origin's
//! [`Consumed`] record, written in the batch of the commit that consumes. So a kill -9 loses at
//! most the commits sled had not flushed, as before.
//!
//! Also the schema 1 → 2 upgrade of a store whose queue entries were one key each.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{decode, encode, key, QueueEntry, Store, StoreError};

/// Entries per segment at most: a refill of the scheduler's buffer (32 entries) decodes at most
/// two segments of this size (~10 KB), and 256 entries per sled value make the queue's key count
/// negligible beside the seen set.
pub const SEGMENT_ENTRIES: usize = 256;

/// What an origin's queue has consumed: every entry below `below`, and the entries of `above`
/// (consumed out of order, ascending, all ≥ `below`; as many as were in flight at once).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consumed {
    pub below: u64,
    pub above: Vec<u64>,
}

impl Consumed {
    pub fn contains(&self, seq: u64) -> bool {
        seq < self.below || self.above.binary_search(&seq).is_ok()
    }

    /// Mark `seq` consumed; false when it already was.
    pub fn insert(&mut self, seq: u64) -> bool {
        if seq < self.below {
            return false;
        }
        match self.above.binary_search(&seq) {
            Ok(_) => return false,
            Err(i) => self.above.insert(i, seq),
        }
        let run = self
            .above
            .iter()
            .zip(self.below..)
            .take_while(|(&s, want)| s == *want)
            .count();
        self.below += run as u64;
        self.above.drain(..run);
        true
    }

    /// Entries still queued out of `next_seq` ever queued.
    pub fn queued(&self, next_seq: u64) -> u64 {
        next_seq.saturating_sub(self.below + self.above.len() as u64)
    }
}

/// A segment's value: entry count (u32 big-endian), then the entries, postcard one after another.
pub(crate) fn encode_segment(entries: &[&QueueEntry]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + entries.len() * 48);
    v.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    for e in entries {
        v.extend_from_slice(&encode(e));
    }
    v
}

fn segment_len(k: &[u8], v: &[u8]) -> Result<u64, StoreError> {
    let n: [u8; 4] = v
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| super::corrupt(k, "queue segment without a count"))?;
    Ok(u64::from(u32::from_be_bytes(n)))
}

fn segment_first(k: &[u8]) -> Result<u64, StoreError> {
    k.get(5..13)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| super::corrupt(k, "queue segment key length"))
}

fn decode_segment(k: &[u8], v: &[u8]) -> Result<Vec<QueueEntry>, StoreError> {
    let n = segment_len(k, v)? as usize;
    let mut rest = &v[4..];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (e, r) = postcard::take_from_bytes(rest).map_err(|e| super::corrupt(k, e))?;
        out.push(e);
        rest = r;
    }
    Ok(out)
}

impl Store {
    /// Up to `limit` queue entries of `origin` with sequence number ≥ `from` not yet consumed,
    /// in order.
    pub fn queue_from(
        &self,
        origin: u32,
        from: u64,
        limit: usize,
    ) -> Result<Vec<(u64, QueueEntry)>, StoreError> {
        let consumed = self
            .lock()
            .consumed
            .get(&origin)
            .cloned()
            .unwrap_or_default();
        let from = from.max(consumed.below);
        // The segment holding `from` starts at or before it.
        let begin = match self
            .tree
            .range(key::frontier(origin, 0)..=key::frontier(origin, from))
            .next_back()
        {
            Some(item) => segment_first(&item?.0)?,
            None => from,
        };
        let mut out = Vec::new();
        let range = key::frontier(origin, begin)..=key::frontier(origin, u64::MAX);
        for item in self.tree.range(range) {
            let (k, v) = item?;
            let first = segment_first(&k)?;
            if first + segment_len(&k, &v)? <= from {
                continue;
            }
            for (seq, e) in (first..).zip(decode_segment(&k, &v)?) {
                if seq >= from && !consumed.contains(seq) {
                    out.push((seq, e));
                    if out.len() == limit {
                        return Ok(out);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Queued URLs per origin id, for the origins with any (used at startup and by `status`).
    pub fn queue_lengths(&self) -> Result<HashMap<u32, u64>, StoreError> {
        let reg = self.lock();
        Ok(reg
            .origins
            .values()
            .filter_map(|o| {
                let queued = reg
                    .consumed
                    .get(&o.id)
                    .map_or(o.next_seq, |c| c.queued(o.next_seq));
                (queued > 0).then_some((o.id, queued))
            })
            .collect())
    }

    /// Remove `origin`'s segments whose entries are all consumed (into `batch`).
    pub(crate) fn drop_consumed_segments(
        &self,
        origin: u32,
        consumed: &Consumed,
        batch: &mut sled::Batch,
    ) -> Result<(), StoreError> {
        let range = key::frontier(origin, 0)..key::frontier(origin, consumed.below);
        for item in self.tree.range(range) {
            let (k, v) = item?;
            if segment_first(&k)? + segment_len(&k, &v)? <= consumed.below {
                batch.remove(k);
            }
        }
        Ok(())
    }

    /// Schema 1 → 2: every origin's per-entry queue keys become segments, renumbered from the
    /// origin's `next_seq` on (in order), with everything before consumed. One atomic batch per
    /// segment, so an upgrade cut short continues where it stopped when the store is opened
    /// again; the schema number changes last.
    pub(crate) fn upgrade_queue_v1(&self) -> Result<(), StoreError> {
        let origins: Vec<_> = self.lock().origins.values().cloned().collect();
        for mut rec in origins {
            let consumed = self.consumed_record(rec.id)?.unwrap_or(Consumed {
                below: rec.next_seq,
                above: Vec::new(),
            });
            loop {
                let mut old = Vec::new();
                let prefix = key::queue_prefix(rec.id);
                for item in self.tree.scan_prefix(&prefix).take(SEGMENT_ENTRIES) {
                    let (k, v) = item?;
                    let entry: QueueEntry = decode(&k, &v)?;
                    old.push((k, entry));
                }
                let mut batch = sled::Batch::default();
                batch.insert(key::consumed(rec.id), encode(&consumed));
                if !old.is_empty() {
                    let entries: Vec<&QueueEntry> = old.iter().map(|(_, e)| e).collect();
                    batch.insert(
                        key::frontier(rec.id, rec.next_seq),
                        encode_segment(&entries),
                    );
                    rec.next_seq += old.len() as u64;
                    for (k, _) in &old {
                        batch.remove(k);
                    }
                }
                batch.insert(key::bytes(key::ORIGIN, rec.key.as_bytes()), encode(&rec));
                self.apply(batch)?;
                if old.len() < SEGMENT_ENTRIES {
                    break;
                }
            }
            let mut reg = self.lock();
            reg.consumed.insert(rec.id, consumed.clone());
            reg.origins.insert(rec.key.clone(), rec);
        }
        Ok(())
    }

    pub(crate) fn consumed_record(&self, origin: u32) -> Result<Option<Consumed>, StoreError> {
        self.get(&key::consumed(origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumed_advances_its_watermark_over_a_run() {
        let mut c = Consumed::default();
        assert!(c.insert(1));
        assert!(c.insert(2));
        assert_eq!((c.below, c.above.clone()), (0, vec![1, 2]));
        assert!(c.insert(0));
        assert_eq!((c.below, c.above.clone()), (3, vec![]));
        assert!(!c.insert(1), "already consumed");
        assert!(c.insert(5));
        assert!(c.contains(5) && c.contains(2) && !c.contains(3) && !c.contains(6));
        assert_eq!(c.queued(8), 4);
    }
}
