//! Hosts over their page budget: a `U` record per site that reached `crawl.max_pages_per_host`
//! with URLs left in its queue. The URLs themselves stay in the origins' queues (a later run
//! with a larger budget fetches them from there); the record says they are over budget, not
//! queued, so `status` shows them apart. Each run's end replaces the whole set (a new key
//! space: stores without it read as "nothing over budget", no schema change).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{decode, encode, key, Store, StoreError};

/// A site over its page budget, as the last run left it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverBudgetRecord {
    /// The run's `crawl.max_pages_per_host`.
    pub budget: u64,
    /// URLs its origins kept queued when the run ended.
    pub urls: u64,
    /// When the run ended (Unix ms).
    pub at_ms: u64,
}

/// Records written per sled batch. sled keeps every tree node a batch replaces until the batch
/// ends: one batch of a broad crawl's 10,000 records held ~70 MB of replaced nodes at the
/// run's end, its peak memory (a heap profile of the 10,000 × 10 broad crawl, 2026-11-29).
const RECORDS_PER_BATCH: usize = 256;

impl Store {
    /// Record `hosts` (site, URLs queued) as over `budget`, and no other site. Written in
    /// batches of `RECORDS_PER_BATCH` (256): a run stopped part-way leaves some records of the run
    /// before beside this one's, which the next run's end replaces.
    pub fn set_over_budget(&self, budget: u64, hosts: &[(String, u64)]) -> Result<(), StoreError> {
        let keep: HashMap<&str, u64> = hosts.iter().map(|(s, n)| (s.as_str(), *n)).collect();
        let mut stale = Vec::new();
        for item in self.tree.scan_prefix([key::OVER_BUDGET]) {
            let (k, _) = item?;
            if !keep.contains_key(String::from_utf8_lossy(&k[1..]).as_ref()) {
                stale.push(k);
            }
        }
        let at_ms = super::now_ms();
        for chunk in hosts.chunks(RECORDS_PER_BATCH) {
            let mut batch = sled::Batch::default();
            for (site, urls) in chunk {
                let rec = OverBudgetRecord {
                    budget,
                    urls: *urls,
                    at_ms,
                };
                batch.insert(key::bytes(key::OVER_BUDGET, site.as_bytes()), encode(&rec));
            }
            self.apply(batch)?;
        }
        for chunk in stale.chunks(RECORDS_PER_BATCH) {
            let mut batch = sled::Batch::default();
            for k in chunk {
                batch.remove(k.clone());
            }
            self.apply(batch)?;
        }
        Ok(())
    }

    /// The sites the last run left over their page budget.
    pub fn over_budget(&self) -> Result<HashMap<String, OverBudgetRecord>, StoreError> {
        let mut out = HashMap::new();
        for item in self.tree.scan_prefix([key::OVER_BUDGET]) {
            let (k, v) = item?;
            let site = String::from_utf8_lossy(&k[1..]).into_owned();
            out.insert(site, decode(&k, &v)?);
        }
        Ok(out)
    }
}
