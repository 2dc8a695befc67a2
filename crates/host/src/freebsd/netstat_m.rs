//! `netstat -m`: mbuf and cluster usage, limits and denied requests.
//!
//! Lines used (FreeBSD 8 and later):
//! `65547/19835/85382/204800 mbuf clusters in use (current/cache/total/max)` and
//! `0/0/0 requests for mbufs denied (mbufs/clusters/mbuf+clusters)`.

use crate::error::{dec, ParseError};
use serde::Serialize;

const INPUT: &str = "netstat -m";

/// The numbers the doctor needs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MbufStats {
    /// Clusters in use now (`current` of `mbuf clusters in use`).
    pub clusters_current: Option<u64>,
    /// Clusters cached by UMA, free but held (`cache`).
    pub clusters_cache: Option<u64>,
    /// Clusters allocated, in use plus cached (`total`).
    pub clusters_total: Option<u64>,
    /// The limit (kern.ipc.nmbclusters).
    pub clusters_max: Option<u64>,
    /// Mbuf requests denied (`requests for mbufs denied`, first field).
    pub denied_mbufs: Option<u64>,
    /// Cluster requests denied (second field).
    pub denied_clusters: Option<u64>,
    /// Mbuf+cluster (packet zone) requests denied (third field).
    pub denied_mbuf_clusters: Option<u64>,
}

/// Parses `netstat -m` output; lines it does not use are skipped.
pub fn parse_netstat_m(text: &str) -> Result<MbufStats, ParseError> {
    let mut m = MbufStats::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some((numbers, rest)) = line.trim().split_once(' ') else {
            continue;
        };
        let fields = || -> Result<Vec<u64>, ParseError> {
            numbers.split('/').map(|w| dec(INPUT, n, rest, w)).collect()
        };
        if rest.starts_with("mbuf clusters in use") {
            let f = fields()?;
            m.clusters_current = f.first().copied();
            m.clusters_cache = f.get(1).copied();
            m.clusters_total = f.get(2).copied();
            m.clusters_max = f.get(3).copied();
        } else if rest.starts_with("requests for mbufs denied") {
            let f = fields()?;
            m.denied_mbufs = f.first().copied();
            m.denied_clusters = f.get(1).copied();
            m.denied_mbuf_clusters = f.get(2).copied();
        }
    }
    Ok(m)
}

impl MbufStats {
    /// All denied requests together.
    pub fn denied(&self) -> u64 {
        [
            self.denied_mbufs,
            self.denied_clusters,
            self.denied_mbuf_clusters,
        ]
        .iter()
        .flatten()
        .fold(0, |sum: u64, c| sum.saturating_add(*c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_case5_line_after_the_fix() {
        let text = "65547/19835/85382/204800 mbuf clusters in use (current/cache/total/max)\n\
                    0/0/0 requests for mbufs denied (mbufs/clusters/mbuf+clusters)\n";
        let m = parse_netstat_m(text).unwrap();
        assert_eq!(m.clusters_current, Some(65547));
        assert_eq!(m.clusters_max, Some(204800));
        assert_eq!(m.denied(), 0);
    }

    #[test]
    fn bad_numbers_are_errors() {
        assert!(
            parse_netstat_m("1/x/3/4 mbuf clusters in use (current/cache/total/max)\n").is_err()
        );
        assert_eq!(parse_netstat_m("").unwrap(), MbufStats::default());
    }
}
