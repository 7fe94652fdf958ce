//! Gathering a cluster crawl's corpus into a local data directory (`thresher export --cluster
//! URLS`), for `export` to write it once, from any machine (docs/cluster.md, "The corpus"):
//! every partition log's `exchange` records are spooled — read only, so the workers go on — and
//! imported as `crawl --import-warc` imports, fetching nothing ([`CrawlRun::import_only`]),
//! then cleaned as at a crawl's end. The directory remembers how far it read each log: the next
//! gathering adds what is new.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CrawlRun, Event, RunError};
use crate::cluster::{ClusterError, Engine};
use crate::config::Config;
use crate::crawl::import::ImportSummary;
use crate::store::{Store, StoreError};

/// The store's mark of a gathered corpus, with how far each partition's log was read.
const GATHERED_META: &str = "cluster_export";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Gathered {
    /// The engine it was gathered from (for the reader; not checked).
    urls: String,
    /// Partition → the log sequence of the last record imported.
    read: BTreeMap<u32, u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{0} holds a crawl's data, not a corpus gathered from a cluster: give `export --cluster` \
         a --data directory of its own"
    )]
    NotGathered(PathBuf),
    #[error("storing the partition logs' pages: {0}")]
    Import(Box<RunError>),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// What a gathering did.
#[derive(Debug, Default)]
pub struct Gathering {
    pub partitions: u32,
    /// `exchange` records read from the logs (beyond what earlier gatherings read).
    pub records: u64,
    pub import: Option<ImportSummary>,
}

impl Gathering {
    pub fn line(&self, data: &Path) -> String {
        let pages = self.import.as_ref().map_or(0, |i| i.pages);
        let already = self.import.as_ref().map_or(0, |i| i.already);
        format!(
            "Gathered {} new record(s) from {} partition logs into {}: {pages} page(s) stored, \
             {already} already there.",
            self.records,
            self.partitions,
            data.display()
        )
    }
}

/// Bring every page the cluster at `urls` has committed into `config`'s data directory (made
/// if need be; refused if it holds anything else than a gathered corpus) and clean it; cleaned
/// text also goes to `DATA/text`. `events` hears the import's run (`CrawlRun::run`).
pub fn gather(
    urls: &str,
    config: &Config,
    events: impl Fn(Event<'_>) + Send + Sync + 'static,
) -> Result<Gathering, GatherError> {
    let data = config.crawl.data_dir.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(GatherError::Runtime)?;
    // The engine first: an export that cannot reach it makes no directory.
    let (engine, partitions) = runtime.block_on(async {
        let engine = Engine::connect(urls).await?;
        let spec = engine.spec().await?;
        Ok::<_, ClusterError>((engine, spec.partitions))
    })?;
    let mut gathered = mark(&data, urls, config.store.cache_bytes)?;
    let work = data.join("cluster-export");
    std::fs::create_dir_all(&work).map_err(|source| GatherError::Io {
        path: work.clone(),
        source,
    })?;
    let (files, read) = runtime.block_on(spool_all(&engine, partitions, &work, &gathered.read))?;
    drop(runtime);
    let mut gathering = Gathering {
        partitions,
        ..Gathering::default()
    };
    for (_, records) in &files {
        gathering.records += records;
    }
    let paths: Vec<PathBuf> = files.into_iter().map(|(p, _)| p).collect();
    if !paths.is_empty() {
        let mut config = config.clone();
        config.crawl.out_dir = data.join("text");
        let report = CrawlRun::import_only(config, paths.clone())
            .run(events)
            .map_err(|e| GatherError::Import(Box::new(e)))?;
        if let Some(e) = report.learn_failed() {
            return Err(GatherError::Import(Box::new(e)));
        }
        gathering.import = report.crawl.imported;
    }
    for p in &paths {
        let _ = std::fs::remove_file(p);
    }
    // Only now, with every page stored: a gathering cut short reads the same records again
    // (importing a page twice stores it once).
    gathered.read.extend(read);
    let store = Store::open(&data, config.store.cache_bytes)?;
    store.put_meta(GATHERED_META, &gathered)?;
    store.flush()?;
    Ok(gathering)
}

/// Mark `data` as a gathered corpus (a new directory), or read its mark (one gathered before);
/// a crawl's data directory is refused.
fn mark(data: &Path, urls: &str, cache_bytes: u64) -> Result<Gathered, GatherError> {
    match Store::open_existing(data, cache_bytes) {
        Ok(store) => store
            .get_meta::<Gathered>(GATHERED_META)?
            .ok_or_else(|| GatherError::NotGathered(data.to_path_buf())),
        Err(StoreError::NotAStore { .. }) => {
            let store = Store::open(data, cache_bytes)?;
            let gathered = Gathered {
                urls: urls.to_string(),
                read: BTreeMap::new(),
            };
            store.put_meta(GATHERED_META, &gathered)?;
            store.flush()?;
            Ok(gathered)
        }
        Err(e) => Err(e.into()),
    }
}

/// Spool each partition's log after what was read before into `work/p<N>.warc.gz`, with the
/// partition's last snapshot before it when that covers more (`work/p<N>-snapshot.warc.gz`):
/// the files with records (and how many each has), and the last sequence read of each log.
async fn spool_all(
    engine: &Engine,
    partitions: u32,
    work: &Path,
    read: &BTreeMap<u32, u64>,
) -> Result<(Vec<(PathBuf, u64)>, BTreeMap<u32, u64>), GatherError> {
    let mut files = Vec::new();
    let mut last = BTreeMap::new();
    for p in 0..partitions {
        let after = read.get(&p).copied().unwrap_or(0);
        let file = work.join(format!("p{p}.warc.gz"));
        let spooled = engine.log_reader(p).await?.spool(after, &file).await?;
        last.insert(p, spooled.last);
        // A snapshot that covers records past what was read: the log may no longer hold them
        // (purged). Read first; what it shares with the log's tail is stored once.
        if let Some(snap) = spooled.snapshot.filter(|s| s.covers > after) {
            let (warc, links) = (
                work.join(format!("p{p}-snapshot.warc.gz")),
                work.join(format!("p{p}-snapshot.links")),
            );
            engine.get_snapshot(&snap.name, &warc, &links).await?;
            let _ = std::fs::remove_file(&links);
            files.push((warc, snap.records));
        }
        if spooled.exchanges > 0 {
            files.push((file, spooled.exchanges));
        } else {
            let _ = std::fs::remove_file(&file);
        }
    }
    Ok((files, last))
}
