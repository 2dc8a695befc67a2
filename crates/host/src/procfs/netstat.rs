//! `/proc/net/netstat`: pairs of lines, a header of counter names then their values, per
//! group (`TcpExt:`, `IpExt:`, ...). Only `TcpExt: BusyPollRxPackets` is read here (packets
//! received inside a busy-poll loop; the counter is per network namespace).

/// The value of `group: name`, or `None` when the file does not have it.
pub fn counter(text: &str, group: &str, name: &str) -> Option<u64> {
    let prefix = format!("{group}:");
    let mut lines = text.lines().filter(|l| l.starts_with(&prefix));
    while let (Some(header), Some(values)) = (lines.next(), lines.next()) {
        let names = header[prefix.len()..].split_whitespace();
        let mut vals = values[prefix.len()..].split_whitespace();
        for n in names {
            let v = vals.next()?;
            if n == name {
                return v.parse().ok();
            }
        }
    }
    None
}

/// Busy-poll receive packets so far.
pub fn busy_poll_rx_packets(text: &str) -> Option<u64> {
    counter(text, "TcpExt", "BusyPollRxPackets")
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shortened from this machine's /proc/net/netstat (6.18, 2026-11-21): the real file has
    // ~130 TcpExt counters; the shape (header line, value line, per group) is unchanged.
    const NETSTAT: &str = "\
TcpExt: SyncookiesSent DelayedACKs BusyPollRxPackets TCPAutoCorking
TcpExt: 0 54 887716 2
IpExt: InNoRoutes InTruncatedPkts BusyPollRxPackets
IpExt: 0 0 99
";

    #[test]
    fn finds_the_counter_in_its_own_group() {
        assert_eq!(busy_poll_rx_packets(NETSTAT), Some(887_716));
        assert_eq!(counter(NETSTAT, "IpExt", "BusyPollRxPackets"), Some(99));
        assert_eq!(counter(NETSTAT, "TcpExt", "Missing"), None);
        assert_eq!(busy_poll_rx_packets("TcpExt: A B\nTcpExt: 1\n"), None);
    }
}
