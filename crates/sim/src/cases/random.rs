//! Deterministic random streams for the case models: SplitMix64 (Steele, Lea & Flood 2014),
//! one independent stream per traffic source so adding a source never shifts another's draws.

/// One random stream.
#[derive(Debug, Clone)]
pub struct Stream(u64);

impl Stream {
    /// Stream `index` of `seed`.
    pub fn new(seed: u64, index: u64) -> Stream {
        let mut s = Stream(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        s.next_u64();
        s
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponential gap in ns with mean `mean_ns` (at least 1 ns).
    pub fn exp_ns(&mut self, mean_ns: f64) -> u64 {
        ((-mean_ns * self.unit().ln()) as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(1, 0);
                move |_| s.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(1, 0);
                move |_| s.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(1, 1);
                move |_| s.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn exponential_mean() {
        let mut s = Stream::new(7, 0);
        let n = 100_000;
        let mean = (0..n).map(|_| s.exp_ns(1000.0)).sum::<u64>() as f64 / n as f64;
        assert!((mean - 1000.0).abs() < 15.0, "{mean}");
    }
}
