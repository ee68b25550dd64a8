//! A MariaDB node of a Galera cluster (`wsrep_on = ON` with a provider), judged as Galera
//! decides durability rather than as a lone server: a commit is acknowledged once the cluster
//! has certified it, when every node of the primary component has received it, so losing fewer
//! than all nodes loses nothing; a crash of every node at once loses what no node had flushed,
//! which `innodb_flush_log_at_trx_commit = 1` on every node prevents.

use gdid_engine::durability::{Setting, Verdict};

/// What the node says of itself and its cluster (`SHOW GLOBAL STATUS`); `None`: not said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct GaleraNode {
    /// `wsrep_cluster_status`: `Primary`, `non-Primary` or `Disconnected`.
    pub(super) cluster_status: Option<String>,
    /// `wsrep_cluster_size`: the nodes of its component.
    pub(super) cluster_size: Option<String>,
    /// `wsrep_local_state_comment`: `Synced`, `Donor/Desynced`, `Joining`, `Joined`, ….
    pub(super) local_state: Option<String>,
    /// `wsrep_ready`: whether it accepts queries.
    pub(super) ready: Option<String>,
    /// `wsrep_cluster_state_uuid`: the cluster's history, which a bootstrap keeps.
    pub(super) state_uuid: Option<String>,
}

impl GaleraNode {
    /// The node's status when `wsrep_on` is `ON` with a provider (not `none`), else `None`: a
    /// lone server. `variable` and `status` look up `SHOW GLOBAL VARIABLES` and `STATUS`.
    pub(super) fn read(
        variable: impl Fn(&str) -> Option<String>,
        status: impl Fn(&str) -> Option<String>,
    ) -> Option<GaleraNode> {
        let on = variable("wsrep_on").is_some_and(|v| super::is_on(&v));
        let provider = variable("wsrep_provider").unwrap_or_default();
        let provider = provider.trim();
        if !on || provider.is_empty() || provider.eq_ignore_ascii_case("none") {
            return None;
        }
        Some(GaleraNode {
            cluster_status: status("wsrep_cluster_status"),
            cluster_size: status("wsrep_cluster_size"),
            local_state: status("wsrep_local_state_comment"),
            ready: status("wsrep_ready"),
            state_uuid: status("wsrep_cluster_state_uuid"),
        })
    }

    /// Whether it is in the primary component.
    fn is_primary(&self) -> bool {
        self.cluster_status
            .as_deref()
            .is_some_and(|status| status.eq_ignore_ascii_case("Primary"))
    }

    /// The cluster, for the report's server line: `Galera node of cluster UUID`.
    pub(super) fn described(&self) -> String {
        match &self.state_uuid {
            Some(uuid) => format!("Galera node of cluster {uuid}"),
            None => "Galera node".to_owned(),
        }
    }
}

/// The node's cluster and state, then its crash settings as Galera makes them matter:
/// `innodb_flush_log_at_trx_commit` (`flush`) and, with a binary log, `sync_binlog`.
pub(super) fn judge(node: &GaleraNode, flush: &str, sync_binlog: Option<&str>) -> Vec<Setting> {
    let mut settings = vec![
        cluster_status(node),
        cluster_size(node),
        local_state(node),
        ready(node),
        flush_log(flush, node),
    ];
    if let Some(sync_binlog) = sync_binlog {
        settings.push(binary_log(sync_binlog));
    }
    settings
}

/// A status variable the server did not give: not judged.
fn unsaid(name: &str) -> Setting {
    Setting::new(
        name,
        "?",
        Verdict::Unknown,
        "the node did not say (is the Galera provider loaded?)",
    )
}

/// `wsrep_cluster_status`: safe in the primary component; elsewhere the node refuses writes.
fn cluster_status(node: &GaleraNode) -> Setting {
    const NAME: &str = "wsrep_cluster_status";
    match &node.cluster_status {
        None => unsaid(NAME),
        Some(status) if node.is_primary() => Setting::new(
            NAME,
            status,
            Verdict::Safe,
            "this node is in the primary component: a commit is acknowledged once the cluster \
             has certified it, when every node of the component has received it",
        ),
        Some(status) => Setting::new(
            NAME,
            status,
            Verdict::Unknown,
            "this node is not in the primary component (cut from the majority): it refuses \
             writes (ERROR 1047), so nothing is reserved here and its clients go to another \
             authority; no acknowledged block is lost by that; check a node of the primary \
             component",
        ),
    }
}

/// `wsrep_cluster_size`: how many nodes have each acknowledged commit.
fn cluster_size(node: &GaleraNode) -> Setting {
    const NAME: &str = "wsrep_cluster_size";
    let Some(size) = &node.cluster_size else {
        return unsaid(NAME);
    };
    let meaning = match size.trim().parse::<u64>() {
        Err(_) => {
            return Setting::new(
                NAME,
                size,
                Verdict::Unknown,
                "not a number of nodes: the node's answer is not understood here",
            );
        }
        Ok(_) if !node.is_primary() => {
            "the nodes of this node's component, which is not the primary one".to_owned()
        }
        Ok(1) => "the cluster is this node alone: its crash is a crash of every node (see \
                  innodb_flush_log_at_trx_commit)"
            .to_owned(),
        Ok(n) => format!(
            "each acknowledged commit is on the {n} nodes: a crash of fewer than all of them \
             loses none (a node that comes back gets what it missed from the others, by IST or \
             SST)"
        ),
    };
    Setting::new(NAME, size, Verdict::Safe, meaning)
}

/// `wsrep_local_state_comment`: synced (or a donor, still certified), or not taking writes.
fn local_state(node: &GaleraNode) -> Setting {
    const NAME: &str = "wsrep_local_state_comment";
    let Some(state) = &node.local_state else {
        return unsaid(NAME);
    };
    let (verdict, meaning) = match state.trim() {
        "Synced" => (
            Verdict::Safe,
            "this node has applied what the cluster certified before, and takes writes",
        ),
        "Donor/Desynced" | "Desynced" => (
            Verdict::Safe,
            "this node gives a state transfer to a joining node (or was desynced by an \
             operator): its writes may wait, and are certified by the cluster as ever",
        ),
        _ => (
            Verdict::Unknown,
            "this node is not synced with the cluster (it joins, or catches up): it refuses \
             writes until it is, and its clients go to another authority; no acknowledged \
             block is lost by that",
        ),
    };
    Setting::new(NAME, state, verdict, meaning)
}

/// `wsrep_ready`: whether the node accepts queries at all.
fn ready(node: &GaleraNode) -> Setting {
    const NAME: &str = "wsrep_ready";
    match &node.ready {
        None => unsaid(NAME),
        Some(ready) if super::is_on(ready) => {
            Setting::new(NAME, ready, Verdict::Safe, "this node accepts queries")
        }
        Some(ready) => Setting::new(
            NAME,
            ready,
            Verdict::Unknown,
            "this node refuses queries (ERROR 1047: WSREP has not yet prepared node for \
             application use): gdid's writes here fail, and its clients go to another \
             authority; no acknowledged block is lost by that",
        ),
    }
}

/// `innodb_flush_log_at_trx_commit` on a node: what a crash of every node at once loses.
fn flush_log(flush: &str, node: &GaleraNode) -> Setting {
    const NAME: &str = "innodb_flush_log_at_trx_commit";
    match flush.trim() {
        // 3 is MariaDB's "1 with three syncs per group commit": as durable.
        "1" | "3" => Setting::new(
            NAME,
            flush,
            Verdict::Safe,
            "this node flushes its redo log at each commit: with every node set so (a node sees \
             only its own setting: check each), a crash of every node at once loses no \
             acknowledged commit, the cluster being bootstrapped again from its most advanced \
             node (the highest seqno)",
        ),
        _ => Setting::new(
            NAME,
            flush,
            Verdict::IssuedAgain,
            format!(
                "this node flushes its redo log about once a second (a crash of mariadbd loses \
                 it with 0, of the machine with 2): a crash of fewer than all nodes loses \
                 nothing, the others have each acknowledged commit, but a crash of every node \
                 at once (a power cut) loses up to a second of acknowledged commits on all of \
                 them, and the cluster bootstrapped again keeps its state UUID{}, so gdid sees \
                 the same store and their ids are issued again; set it to 1 on every node",
                node.state_uuid
                    .as_deref()
                    .map_or(String::new(), |uuid| format!(" ({uuid})"))
            ),
        ),
    }
}

/// `sync_binlog` on a node with a binary log: a node is recovered by the cluster, not from it.
fn binary_log(sync_binlog: &str) -> Setting {
    let flushed = if sync_binlog.trim() == "1" {
        "flushed at each commit"
    } else {
        "not flushed at each commit (1 would, for its own readers: replicas, point-in-time \
         recovery)"
    };
    Setting::new(
        "sync_binlog",
        sync_binlog,
        Verdict::Safe,
        format!(
            "a crashed node is recovered by the cluster, not from its binary log: what it lost \
             comes back from the others (IST or SST); the binary log is {flushed}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synced node of a primary component of three.
    fn synced() -> GaleraNode {
        GaleraNode {
            cluster_status: Some("Primary".into()),
            cluster_size: Some("3".into()),
            local_state: Some("Synced".into()),
            ready: Some("ON".into()),
            state_uuid: Some("f4c62a25-ea93-11f1-9cc3-03485e81fdac".into()),
        }
    }

    fn verdict_of(settings: &[Setting], name: &str) -> Verdict {
        settings
            .iter()
            .find(|setting| setting.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .verdict
    }

    #[test]
    fn a_synced_node_flushing_each_commit_is_safe_whatever_sync_binlog() {
        for sync_binlog in [None, Some("0"), Some("1")] {
            let settings = judge(&synced(), "1", sync_binlog);
            assert!(
                settings.iter().all(|s| s.verdict == Verdict::Safe),
                "{settings:?}"
            );
        }
    }

    #[test]
    fn a_lazy_flush_is_issued_again_by_a_crash_of_every_node_and_says_the_uuid() {
        for flush in ["0", "2"] {
            let settings = judge(&synced(), flush, Some("0"));
            let flush = settings
                .iter()
                .find(|s| s.name == "innodb_flush_log_at_trx_commit")
                .unwrap();
            assert_eq!(flush.verdict, Verdict::IssuedAgain);
            assert!(flush.meaning.contains("keeps its state UUID (f4c62a25-"));
            assert_eq!(verdict_of(&settings, "sync_binlog"), Verdict::Safe);
        }
    }

    #[test]
    fn a_node_out_of_the_primary_component_or_not_synced_refuses_writes() {
        let mut node = synced();
        node.cluster_status = Some("non-Primary".into());
        node.cluster_size = Some("1".into());
        node.local_state = Some("Initialized".into());
        node.ready = Some("OFF".into());
        let settings = judge(&node, "1", None);
        for name in [
            "wsrep_cluster_status",
            "wsrep_local_state_comment",
            "wsrep_ready",
        ] {
            assert_eq!(verdict_of(&settings, name), Verdict::Unknown, "{name}");
        }
        assert!(
            settings
                .iter()
                .all(|s| s.verdict <= Verdict::Unknown && !s.meaning.contains("issued again"))
        );
        let mut donor = synced();
        donor.local_state = Some("Donor/Desynced".into());
        assert_eq!(
            verdict_of(&judge(&donor, "1", None), "wsrep_local_state_comment"),
            Verdict::Safe
        );
    }

    #[test]
    fn answers_missing_or_not_understood_are_unknown() {
        let node = GaleraNode {
            cluster_size: Some("three".into()),
            ..GaleraNode::default()
        };
        let settings = judge(&node, "1", None);
        for name in [
            "wsrep_cluster_status",
            "wsrep_cluster_size",
            "wsrep_local_state_comment",
            "wsrep_ready",
        ] {
            assert_eq!(verdict_of(&settings, name), Verdict::Unknown, "{name}");
        }
    }

    #[test]
    fn only_wsrep_on_with_a_provider_is_a_galera_node() {
        let lookup = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let none = |_: &str| None;
        for variables in [
            &[][..],
            &[
                ("wsrep_on", "OFF"),
                ("wsrep_provider", "/usr/lib/galera.so"),
            ],
            &[("wsrep_on", "ON"), ("wsrep_provider", "none")],
        ] {
            assert_eq!(GaleraNode::read(lookup(variables), none), None);
        }
        let on = &[("wsrep_on", "ON"), ("wsrep_provider", "/usr/lib/galera.so")];
        let node = GaleraNode::read(lookup(on), lookup(&[("wsrep_cluster_status", "Primary")]));
        assert!(node.is_some_and(|node| node.is_primary()));
    }
}
