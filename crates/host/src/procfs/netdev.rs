//! `/proc/net/dev`: packet, byte, error and drop counters per interface since it appeared.

use crate::error::ParseError;
use serde::Serialize;

const INPUT: &str = "/proc/net/dev";

/// One interface's counters, in the file's column order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct NetDevCounters {
    /// Interface name, the text before the colon.
    pub name: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// rx_errors: receive errors of all kinds as the driver counts them.
    pub rx_errs: u64,
    /// rx_dropped + rx_missed_errors: packets the stack or driver dropped, and packets the
    /// NIC missed for lack of descriptors (net/core/net-procfs.c).
    pub rx_drop: u64,
    /// rx_fifo_errors: the NIC's receive FIFO overflowed.
    pub rx_fifo: u64,
    /// rx_length + rx_over + rx_crc + rx_frame errors.
    pub rx_frame: u64,
    /// rx_compressed: compressed packets received (CSLIP, PPP).
    pub rx_compressed: u64,
    /// Multicast packets received.
    pub rx_multicast: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// tx_errors: transmit errors of all kinds.
    pub tx_errs: u64,
    /// tx_dropped: packets the driver or stack dropped on transmit.
    pub tx_drop: u64,
    /// tx_fifo_errors: transmit FIFO errors as the driver counts them.
    pub tx_fifo: u64,
    /// Collisions (half-duplex links).
    pub tx_colls: u64,
    /// tx_carrier + tx_aborted + tx_window + tx_heartbeat errors.
    pub tx_carrier: u64,
    /// tx_compressed: compressed packets transmitted.
    pub tx_compressed: u64,
}

impl NetDevCounters {
    fn from_fields(name: &str, f: &[u64; 16]) -> Self {
        NetDevCounters {
            name: name.to_string(),
            rx_bytes: f[0],
            rx_packets: f[1],
            rx_errs: f[2],
            rx_drop: f[3],
            rx_fifo: f[4],
            rx_frame: f[5],
            rx_compressed: f[6],
            rx_multicast: f[7],
            tx_bytes: f[8],
            tx_packets: f[9],
            tx_errs: f[10],
            tx_drop: f[11],
            tx_fifo: f[12],
            tx_colls: f[13],
            tx_carrier: f[14],
            tx_compressed: f[15],
        }
    }
}

/// Parses the text of `/proc/net/dev` (two header lines, then `name: 16 numbers`).
pub fn parse_net_dev(text: &str) -> Result<Vec<NetDevCounters>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(2) {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let (name, values) = super::labelled_counts(INPUT, n, line)?;
        let fields: [u64; 16] = values.as_slice().try_into().map_err(|_| {
            ParseError::new(INPUT, n, format!("{} counters; 16 expected", values.len()))
        })?;
        out.push(NetDevCounters::from_fields(name, &fields));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../fixtures/linux-vm-6.18/proc/net/dev");

    #[test]
    fn parses_the_captured_file() {
        let devs = parse_net_dev(FIXTURE).unwrap();
        let names: Vec<&str> = devs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["lo", "ifb0", "ifb1", "eth0"]);
        let lo = &devs[0];
        // Loopback receives exactly what it sends.
        assert_eq!((lo.rx_bytes, lo.rx_packets), (lo.tx_bytes, lo.tx_packets));
        assert!(devs[3].rx_packets > 0);
    }

    #[test]
    fn fields_land_in_their_columns() {
        let text = "h1\nh2\n  eth9: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
        let d = &parse_net_dev(text).unwrap()[0];
        assert_eq!(
            (d.rx_bytes, d.rx_drop, d.rx_fifo, d.rx_multicast),
            (1, 4, 5, 8)
        );
        assert_eq!(
            (d.tx_bytes, d.tx_drop, d.tx_carrier, d.tx_compressed),
            (9, 12, 15, 16)
        );
    }

    #[test]
    fn short_rows_are_errors() {
        let err = parse_net_dev("h1\nh2\n eth0: 1 2 3\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.problem.contains("3 counters"), "{err}");
    }
}
