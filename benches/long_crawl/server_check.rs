//! `--server-check`: how fast the universe server is on its own, so a crawl figure is known to
//! measure the crawler. First page generation alone on this thread, then HTTP: the server on
//! its runtime and a reqwest client on another (one worker) fetching random pages with 32
//! requests in flight; the server's share is its threads' CPU time.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::procfs;
use crate::support::lorem::Rng;
use crate::universe::{markup, serve, Spec, Universe};

pub fn run(spec: &Spec, duration: Duration, server_threads: usize) -> Result<ExitCode, String> {
    let universe = Arc::new(Universe::new(spec.clone()));

    // Generation alone.
    let mut rng = Rng::new(1);
    let (mut pages, mut bytes) = (0u64, 0u64);
    let t = Instant::now();
    let cpu0 = procfs::cpu_time("thread-self").unwrap_or_default();
    while t.elapsed() < duration / 2 {
        let html = markup::render(&universe, rng.below(spec.origins), rng.below(spec.pages));
        bytes += html.len() as u64;
        pages += 1;
    }
    let cpu = procfs::cpu_time("thread-self").unwrap_or_default() - cpu0;
    println!(
        "generation alone: {pages} pages in {:.1} s = {:.0} pages/s ({:.0} per CPU second), {:.1} KB/page",
        t.elapsed().as_secs_f64(),
        pages as f64 / t.elapsed().as_secs_f64(),
        pages as f64 / cpu.as_secs_f64().max(1e-3),
        bytes as f64 / pages as f64 / 1000.0
    );

    // Over HTTP.
    let (server, counters) = serve::serve(universe.clone(), server_threads);
    let bases: Arc<Vec<String>> = Arc::new(server.origins().iter().map(|o| o.base()).collect());
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let errors = Arc::new(AtomicU64::new(0));
    let server_cpu0 = procfs::threads_cpu_time("test-server");
    let t = Instant::now();
    client_rt.block_on(async {
        let client = crate::support::client();
        let tasks: Vec<_> = (0..32u64)
            .map(|k| {
                let (client, bases, universe, errors) = (
                    client.clone(),
                    bases.clone(),
                    universe.clone(),
                    errors.clone(),
                );
                let spec = spec.clone();
                tokio::spawn(async move {
                    let mut rng = Rng::new(100 + k);
                    while t.elapsed() < duration {
                        let o = rng.below(spec.origins);
                        let url =
                            format!("{}{}", bases[o], universe.path(o, rng.below(spec.pages)));
                        let ok = match client.get(&url).send().await {
                            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                            _ => false,
                        };
                        if !ok {
                            errors.fetch_add(1, Relaxed);
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
    });
    let secs = t.elapsed().as_secs_f64();
    let server_cpu = procfs::threads_cpu_time("test-server") - server_cpu0;
    let served = counters.pages();
    println!(
        "over HTTP ({server_threads} server thread(s), a 1-thread reqwest client, 32 in flight): \
         {served} pages in {secs:.1} s = {:.0} pages/s, {:.1} MB/s; server CPU {:.2} s = {:.0} \
         pages per server CPU second; {} errors",
        served as f64 / secs,
        counters.bytes.load(Relaxed) as f64 / 1e6 / secs,
        server_cpu.as_secs_f64(),
        served as f64 / server_cpu.as_secs_f64().max(1e-3),
        errors.load(Relaxed)
    );
    drop(server);
    Ok(ExitCode::SUCCESS)
}
