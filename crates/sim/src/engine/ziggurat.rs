//! Exponential variates by the ziggurat method (Marsaglia & Tsang, "The Ziggurat Method for
//! Generating Random Variables", J. Stat. Software 5(8), 2000), for the case models' hot
//! arrival loops.
//!
//! The density e^-x is covered by 256 layers of equal area: a base strip that includes the
//! tail beyond `R`, and 255 rectangles stacked on it. A sample picks a layer with 8 random bits
//! and a point in it with 53 others; about 98.9 % of samples fall inside the part of the layer
//! wholly under the curve and cost one multiply and one compare. The rest are checked against
//! the curve, or drawn from the tail as `R + Exp(1)` (memorylessness). The result is exactly
//! Exp(1) up to floating-point rounding; inverse transform (`-ln U`) costs a logarithm per
//! sample, which profiling showed as an eighth of the router scenario's time.
//!
//! The constants are the paper's for 256 layers: `R` is the right edge of the top rectangle
//! of the base strip and `V` the area of every layer.

use super::rng::Rng;
use std::sync::OnceLock;

const LAYERS: usize = 256;
/// Right edge of the base strip's rectangle (Marsaglia & Tsang 2000, 256 layers).
const R: f64 = 7.697_117_470_131_05;
/// Area of each layer (same source).
const V: f64 = 3.949_659_822_581_572e-3;

/// Layer edges `x[i]` (x[0] the base strip's pseudo-width V/f(R), x[1] = R, x[256] = 0) and
/// the density at each edge.
struct Tables {
    x: [f64; LAYERS + 1],
    f: [f64; LAYERS + 1],
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut x = [0.0; LAYERS + 1];
        x[0] = V / (-R).exp();
        x[1] = R;
        for i in 1..LAYERS - 1 {
            x[i + 1] = -(V / x[i] + (-x[i]).exp()).ln();
        }
        x[LAYERS] = 0.0;
        let f = x.map(|v| (-v).exp());
        Tables { x, f }
    })
}

/// One Exp(1) variate from `rng`.
#[inline]
pub fn exp1(rng: &mut Rng) -> f64 {
    let t = tables();
    loop {
        let bits = rng.next_u64();
        let i = (bits & 0xFF) as usize;
        let u = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let z = u * t.x[i];
        if z < t.x[i + 1] {
            return z;
        }
        if i == 0 {
            return R - (1.0 - rng.next_f64()).ln();
        }
        let y = t.f[i] + rng.next_f64() * (t.f[i + 1] - t.f[i]);
        if y < (-z).exp() {
            return z;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layers_close_at_zero() {
        // The recursion from R must end with a top layer of area V under f(0) = 1.
        let t = tables();
        let top = t.x[LAYERS - 1] * (1.0 - t.f[LAYERS - 1]);
        assert!((top - V).abs() < 0.01 * V, "top layer area {top}");
        assert!(t.x.windows(2).skip(1).all(|w| w[0] > w[1]));
    }

    #[test]
    fn moments_and_cdf_match_exp1() {
        let mut rng = Rng::new(7, 0);
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| exp1(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.006, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
        // Empirical CDF at a few points, including the tail beyond R.
        for x in [0.05, 0.5, 1.0, 2.0, 4.0, 8.0] {
            let emp = xs.iter().filter(|&&v| v <= x).count() as f64 / n as f64;
            let cdf = 1.0 - (-x).exp();
            assert!((emp - cdf).abs() < 0.004, "F({x}) {emp} vs {cdf}");
        }
        assert!(xs.iter().any(|&v| v > R), "the tail is reached");
    }
}
