//! Receive buffer pools: FreeBSD mbuf cluster zones (moderation-algorithms.md §8.1).
//!
//! Every receive descriptor holds one cluster from a bounded zone chosen by frame size. At
//! interface init the driver fills every descriptor of every queue; if the zone runs dry it
//! prints "could not setup receive structures", frees what it took and the interface stays
//! down. At run time a descriptor whose cluster went up the stack must be refilled; a refill
//! the zone denies leaves the descriptor empty, and a frame arriving to a ring without filled
//! descriptors is dropped by the NIC.

use nictune_core::units::Bytes;

/// A cluster zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Zone {
    /// 2 KB clusters (`kern.ipc.nmbclusters`).
    Cluster,
    /// Page-size (4 KB) clusters (`kern.ipc.nmbjumbop`).
    JumboPage,
    /// 9 KB clusters (`kern.ipc.nmbjumbo9`).
    Jumbo9,
    /// 16 KB clusters (`kern.ipc.nmbjumbo16`).
    Jumbo16,
}

impl Zone {
    /// The zone a driver takes receive clusters from for `frame` (max frame size): ≤ 2048 →
    /// 2 KB, ≤ 4096 → page, ≤ 9216 → 9 KB, larger → 16 KB.
    pub fn for_frame(frame: Bytes) -> Zone {
        match frame.0 {
            0..=2048 => Zone::Cluster,
            2049..=4096 => Zone::JumboPage,
            4097..=9216 => Zone::Jumbo9,
            _ => Zone::Jumbo16,
        }
    }

    /// The sysctl that bounds the zone.
    pub fn sysctl(self) -> &'static str {
        match self {
            Zone::Cluster => "kern.ipc.nmbclusters",
            Zone::JumboPage => "kern.ipc.nmbjumbop",
            Zone::Jumbo9 => "kern.ipc.nmbjumbo9",
            Zone::Jumbo16 => "kern.ipc.nmbjumbo16",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Zone limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneLimits {
    /// `kern.ipc.nmbclusters`.
    pub nmbclusters: u64,
    /// `kern.ipc.nmbjumbop`.
    pub nmbjumbop: u64,
    /// `kern.ipc.nmbjumbo9`.
    pub nmbjumbo9: u64,
    /// `kern.ipc.nmbjumbo16`.
    pub nmbjumbo16: u64,
}

impl ZoneLimits {
    /// FreeBSD ≥ 10 defaults (`kern_mbuf.c#tunable_mbinit`): maxmbufmem = min(physmem, kmem)/2,
    /// nmbclusters = maxmbufmem/2048/4, nmbjumbop = /4096/4, nmbjumbo9 = /9216/6,
    /// nmbjumbo16 = /16384/6.
    pub fn freebsd10(physmem: Bytes, kmem: Bytes) -> ZoneLimits {
        let m = physmem.0.min(kmem.0) / 2;
        ZoneLimits {
            nmbclusters: m / 2048 / 4,
            nmbjumbop: m / 4096 / 4,
            nmbjumbo9: m / 9216 / 6,
            nmbjumbo16: m / 16384 / 6,
        }
    }

    /// Older kernels: `NMBCLUSTERS = 1024 + maxusers · 64` (maxusers 384 → 25600, the
    /// default of Case 5); jumbo zones set separately.
    pub fn legacy(maxusers: u64) -> u64 {
        1024 + maxusers * 64
    }

    /// The limit of `zone`.
    pub fn limit(&self, zone: Zone) -> u64 {
        match zone {
            Zone::Cluster => self.nmbclusters,
            Zone::JumboPage => self.nmbjumbop,
            Zone::Jumbo9 => self.nmbjumbo9,
            Zone::Jumbo16 => self.nmbjumbo16,
        }
    }
}

/// Failure to bring an interface up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{interface}: could not setup receive structures ({needed} clusters from {sysctl}, {available} of {limit} left)")]
pub struct SetupError {
    /// The interface, e.g. `igb1`.
    pub interface: String,
    /// Clusters the interface needs (queues × rxd).
    pub needed: u64,
    /// Clusters that were left in the zone.
    pub available: u64,
    /// The zone's limit.
    pub limit: u64,
    /// The sysctl bounding the zone.
    pub sysctl: &'static str,
}

/// The host's cluster zones with their use counters (what `netstat -m` shows).
#[derive(Debug, Clone)]
pub struct Pool {
    limits: ZoneLimits,
    in_use: [u64; 4],
    denied: [u64; 4],
}

impl Pool {
    /// Empty zones with these limits.
    pub fn new(limits: ZoneLimits) -> Pool {
        Pool {
            limits,
            in_use: [0; 4],
            denied: [0; 4],
        }
    }

    /// Takes one cluster; false (and a denied request) when the zone is exhausted.
    pub fn alloc(&mut self, zone: Zone) -> bool {
        let i = zone.index();
        if self.in_use[i] < self.limits.limit(zone) {
            self.in_use[i] += 1;
            true
        } else {
            self.denied[i] += 1;
            false
        }
    }

    /// Returns `n` clusters.
    pub fn free(&mut self, zone: Zone, n: u64) {
        let i = zone.index();
        self.in_use[i] = self.in_use[i].saturating_sub(n);
    }

    /// Clusters in use.
    pub fn in_use(&self, zone: Zone) -> u64 {
        self.in_use[zone.index()]
    }

    /// Requests denied so far.
    pub fn denied(&self, zone: Zone) -> u64 {
        self.denied[zone.index()]
    }

    /// The limits.
    pub fn limits(&self) -> &ZoneLimits {
        &self.limits
    }

    /// `*_setup_receive_structures` for one interface: one cluster per descriptor of every
    /// queue, all or nothing (a failure frees what was taken).
    pub fn setup_receive(
        &mut self,
        interface: &str,
        queues: u32,
        rxd: u32,
        zone: Zone,
    ) -> Result<(), SetupError> {
        let needed = queues as u64 * rxd as u64;
        let available = self.limits.limit(zone).saturating_sub(self.in_use(zone));
        for taken in 0..needed {
            if !self.alloc(zone) {
                self.free(zone, taken);
                return Err(SetupError {
                    interface: interface.to_owned(),
                    needed,
                    available,
                    limit: self.limits.limit(zone),
                    sysctl: zone.sysctl(),
                });
            }
        }
        Ok(())
    }
}

/// Brings up `ports` interfaces named `{driver}{n}` in attach order; each result says whether
/// that interface came up.
pub fn bring_up(
    pool: &mut Pool,
    driver: &str,
    ports: u32,
    queues: u32,
    rxd: u32,
    frame: Bytes,
) -> Vec<Result<(), SetupError>> {
    let zone = Zone::for_frame(frame);
    (0..ports)
        .map(|p| pool.setup_receive(&format!("{driver}{p}"), queues, rxd, zone))
        .collect()
}

/// One receive ring's descriptors at run time.
#[derive(Debug, Clone)]
pub struct RxRing {
    zone: Zone,
    size: u32,
    filled: u32,
    dropped: u64,
}

impl RxRing {
    /// A ring whose descriptors were all filled at setup.
    pub fn filled(zone: Zone, size: u32) -> RxRing {
        RxRing {
            zone,
            size,
            filled: size,
            dropped: 0,
        }
    }

    /// A frame arrives: it takes a filled descriptor, or is dropped (false) when none is left.
    pub fn receive(&mut self) -> bool {
        if self.filled == 0 {
            self.dropped += 1;
            return false;
        }
        self.filled -= 1;
        true
    }

    /// The driver refills empty descriptors from `pool` until the zone denies one; returns
    /// how many it filled.
    pub fn refill(&mut self, pool: &mut Pool) -> u32 {
        let mut n = 0;
        while self.filled < self.size && pool.alloc(self.zone) {
            self.filled += 1;
            n += 1;
        }
        n
    }

    /// Filled descriptors.
    pub fn filled_count(&self) -> u32 {
        self.filled
    }

    /// Frames dropped for lack of a filled descriptor.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(nmbclusters: u64) -> ZoneLimits {
        ZoneLimits {
            nmbclusters,
            nmbjumbop: 12800,
            nmbjumbo9: 6400,
            nmbjumbo16: 3200,
        }
    }

    #[test]
    fn zones_by_frame_size() {
        assert_eq!(Zone::for_frame(Bytes(1518)), Zone::Cluster);
        assert_eq!(Zone::for_frame(Bytes(2048)), Zone::Cluster);
        assert_eq!(Zone::for_frame(Bytes(4096)), Zone::JumboPage);
        assert_eq!(Zone::for_frame(Bytes(9018)), Zone::Jumbo9);
        assert_eq!(Zone::for_frame(Bytes(9217)), Zone::Jumbo16);
    }

    #[test]
    fn default_formulas() {
        assert_eq!(ZoneLimits::legacy(384), 25600);
        // 4 GiB: maxmbufmem 2 GiB → 262144 clusters.
        let l = ZoneLimits::freebsd10(Bytes(4 << 30), Bytes(8 << 30));
        assert_eq!(l.nmbclusters, 262_144);
        assert_eq!(l.nmbjumbop, 131_072);
    }

    #[test]
    fn case5_nmbclusters_25600_cannot_start_ten_ports() {
        let mut pool = Pool::new(limits(25600));
        let r = bring_up(&mut pool, "igb", 10, 4, 4096, Bytes(1518));
        assert!(r[0].is_ok(), "igb0 takes 16384 of 25600");
        let e = r[1].as_ref().unwrap_err();
        assert_eq!(e.interface, "igb1");
        assert_eq!((e.needed, e.available), (16384, 9216));
        assert!(e
            .to_string()
            .starts_with("igb1: could not setup receive structures"));
        assert!(r[2..].iter().all(|r| r.is_err()));
        assert_eq!(
            pool.in_use(Zone::Cluster),
            16384,
            "failed ports freed their clusters"
        );
    }

    #[test]
    fn case5_nmbclusters_204800_starts_all_ports() {
        let mut pool = Pool::new(limits(204_800));
        assert!(bring_up(&mut pool, "igb", 10, 4, 4096, Bytes(1518))
            .iter()
            .all(|r| r.is_ok()));
        assert_eq!(pool.in_use(Zone::Cluster), 163_840);
    }

    #[test]
    fn jumbo_frames_draw_on_their_own_zone() {
        let mut pool = Pool::new(limits(1 << 20));
        let r = bring_up(&mut pool, "ix", 1, 8, 1024, Bytes(9018));
        assert_eq!(r[0].as_ref().unwrap_err().sysctl, "kern.ipc.nmbjumbo9");
    }

    #[test]
    fn refill_failure_empties_the_ring_and_drops_follow() {
        let mut pool = Pool::new(limits(6));
        let mut ring = RxRing::filled(Zone::Cluster, 4);
        pool.setup_receive("em0", 1, 4, Zone::Cluster).unwrap();
        for _ in 0..4 {
            assert!(ring.receive());
        }
        // The stack still holds the 4 clusters: only 2 are left in the zone.
        assert_eq!(ring.refill(&mut pool), 2);
        assert_eq!(pool.denied(Zone::Cluster), 1);
        assert!(ring.receive() && ring.receive());
        assert!(!ring.receive(), "no filled descriptor: dropped");
        assert_eq!(ring.dropped(), 1);
        pool.free(Zone::Cluster, 4); // the stack freed the first frames
        assert_eq!(ring.refill(&mut pool), 4);
        assert_eq!(ring.filled_count(), 4);
    }
}
