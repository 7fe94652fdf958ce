//! `thresher cluster …`: set up a crawl across machines on NATS JetStream (docs/cluster.md).
//! Without the `cluster` feature the command says how to get a build that has it.

use crate::cli::ClusterArgs;
#[cfg(test)]
use crate::cli::ClusterCommand;

#[derive(Debug, thiserror::Error)]
pub enum ClusterCmdError {
    #[cfg(feature = "cluster")]
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(
        "this thresher was built without the cluster mode: build it with \
         `cargo build --release --features cluster` (docs/cluster.md)"
    )]
    NotBuilt,
}

pub fn run(args: &ClusterArgs) -> Result<(), ClusterCmdError> {
    #[cfg(feature = "cluster")]
    {
        use crate::cli::ClusterCommand;
        use crate::cluster::{Init, Spec};
        match &args.command {
            ClusterCommand::Init(a) => {
                let spec = Spec {
                    partitions: a.partitions,
                    replicas: a.replicas,
                    lease_ttl: a.lease_ttl,
                };
                let what = match crate::run::cluster::init(&a.nats, &spec)? {
                    Init::Created => "created",
                    Init::AlreadyThere => "already initialised with the same spec; checked",
                };
                println!(
                    "Cluster at {}: {what} ({} partitions, {} replica(s), lease TTL {}).",
                    a.nats,
                    spec.partitions,
                    spec.replicas,
                    humantime::format_duration(spec.lease_ttl)
                );
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = args;
        Err(ClusterCmdError::NotBuilt)
    }
}

/// `thresher status --cluster URLS [--json]`: the report's text.
pub fn status(urls: &str, json: bool) -> Result<String, ClusterCmdError> {
    #[cfg(feature = "cluster")]
    {
        let report = crate::run::cluster::report(urls)?;
        Ok(if json {
            super::json_text(&report)
        } else {
            report.render()
        })
    }
    #[cfg(not(feature = "cluster"))]
    {
        let _ = (urls, json);
        Err(ClusterCmdError::NotBuilt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `thresher cluster init --nats nats://h:4222`, parsed.
    fn init_args() -> ClusterArgs {
        let cli =
            crate::cli::Cli::parse_from(["thresher", "cluster", "init", "--nats", "nats://h:4222"]);
        let crate::cli::Command::Cluster(args) = cli.command else {
            panic!("parsed as another command");
        };
        args
    }

    #[cfg(not(feature = "cluster"))]
    #[test]
    fn without_the_feature_cluster_init_and_status_say_how_to_build_it() {
        let e = run(&init_args()).unwrap_err();
        assert!(e.to_string().contains("--features cluster"), "{e}");
        let e = status("nats://h:4222", false).unwrap_err();
        assert!(e.to_string().contains("--features cluster"), "{e}");
    }

    #[test]
    fn cluster_init_flags_default_to_a_one_node_cluster_of_1024_partitions() {
        let ClusterCommand::Init(init) = init_args().command;
        assert_eq!((init.partitions, init.replicas), (1024, 1));
        assert_eq!(init.lease_ttl, std::time::Duration::from_secs(15));
    }
}
