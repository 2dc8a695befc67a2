//! Receive-side scaling: the Toeplitz hash over the IPv4 4-tuple and the 128-entry
//! indirection table that maps it to a queue.

/// The RSS key most drivers and Microsoft's RSS specification use by default.
pub const DEFAULT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Indirection table entries (82576/82599 RETA).
pub const INDIRECTION_ENTRIES: usize = 128;

/// An IPv4 flow as the NIC hashes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
}

impl FlowKey {
    /// The hash input: source, destination, source port, destination port (network order).
    fn bytes(&self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&self.src);
        b[4..8].copy_from_slice(&self.dst);
        b[8..10].copy_from_slice(&self.sport.to_be_bytes());
        b[10..].copy_from_slice(&self.dport.to_be_bytes());
        b
    }
}

/// The Toeplitz hash of `input` under `key` (key must be at least input + 4 bytes long).
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    let mut result = 0u32;
    for (i, byte) in input.iter().enumerate() {
        let next = key[i + 4];
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | ((next >> (7 - bit)) & 1) as u32;
        }
    }
    result
}

/// Hash plus indirection table: which queue each flow lands on.
#[derive(Debug, Clone)]
pub struct Rss {
    key: [u8; 40],
    table: [u16; INDIRECTION_ENTRIES],
}

impl Rss {
    /// The default key and the default table spreading entries round-robin over `queues`
    /// (`ethtool_rxfh_indir_default`).
    pub fn new(queues: u16) -> Rss {
        let mut table = [0u16; INDIRECTION_ENTRIES];
        for (i, e) in table.iter_mut().enumerate() {
            *e = (i % queues.max(1) as usize) as u16;
        }
        Rss {
            key: DEFAULT_KEY,
            table,
        }
    }

    /// The flow's hash.
    pub fn hash(&self, flow: &FlowKey) -> u32 {
        toeplitz(&self.key, &flow.bytes())
    }

    /// The queue a flow is received on (low 7 bits of the hash index the table).
    pub fn queue(&self, flow: &FlowKey) -> u16 {
        self.table[self.hash(flow) as usize % INDIRECTION_ENTRIES]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> FlowKey {
        FlowKey {
            src,
            dst,
            sport,
            dport,
        }
    }

    #[test]
    fn matches_the_published_verification_vectors() {
        // Microsoft "Verifying the RSS hash calculation", IPv4 with TCP ports.
        let f = flow([66, 9, 149, 187], 2794, [161, 142, 100, 80], 1766);
        assert_eq!(Rss::new(4).hash(&f), 0x51cc_c178);
        let f = flow([199, 92, 111, 2], 14230, [65, 69, 140, 83], 4739);
        assert_eq!(Rss::new(4).hash(&f), 0xc626_b0ea);
    }

    #[test]
    fn default_table_spreads_many_flows_over_all_queues() {
        let rss = Rss::new(4);
        let mut per_queue = [0u32; 4];
        for i in 0..4000u32 {
            let f = flow(
                [198, 18, (i >> 8) as u8, i as u8],
                1024 + (i % 5000) as u16,
                [198, 19, 0, 1],
                80,
            );
            per_queue[rss.queue(&f) as usize] += 1;
        }
        assert!(
            per_queue.iter().all(|&n| (800..=1200).contains(&n)),
            "{per_queue:?}"
        );
    }

    #[test]
    fn a_flow_always_lands_on_the_same_queue() {
        let rss = Rss::new(8);
        let f = flow([198, 18, 0, 1], 5000, [198, 18, 0, 2], 80);
        assert_eq!(rss.queue(&f), rss.queue(&f));
    }
}
