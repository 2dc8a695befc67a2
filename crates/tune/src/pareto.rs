//! The Pareto front of p99 latency, CPU per unit of work and rate.
//!
//! A point is on the front when no other point is at least as good on every axis and strictly
//! better on one. The front is reported whatever the objective, so a reader sees what each
//! gain costs (busy polling's 9× rate at ≈97 % CPU, testbed-notes §6, is such a trade).

use crate::objective::Reference;

/// Indices of the points (given by their mean p99, CPU per unit and rate) that no other
/// point dominates. An axis is used only when every point has a value for it.
pub fn front(points: &[Reference]) -> Vec<usize> {
    let axes = axes_present(points);
    let costs: Vec<Vec<f64>> = points.iter().map(|p| costs(p, axes)).collect();
    (0..costs.len())
        .filter(|&i| !(0..costs.len()).any(|j| j != i && dominates(&costs[j], &costs[i])))
        .collect()
}

/// Which of (p99, cpu, rate) every point has.
fn axes_present(points: &[Reference]) -> [bool; 3] {
    [
        points.iter().all(|p| p.p99_us.is_some()),
        points.iter().all(|p| p.cpu_us_per_unit.is_some()),
        points.iter().all(|p| p.rate.is_some()),
    ]
}

/// The point as costs to minimise on the present axes (rate negated).
fn costs(p: &Reference, axes: [bool; 3]) -> Vec<f64> {
    let values = [p.p99_us, p.cpu_us_per_unit, p.rate.map(|r| -r)];
    values
        .iter()
        .zip(axes)
        .filter(|(_, present)| *present)
        .map(|(v, _)| v.unwrap_or(f64::NAN))
        .collect()
}

/// `a` is no worse than `b` everywhere and better somewhere.
fn dominates(a: &[f64], b: &[f64]) -> bool {
    let no_worse = a.iter().zip(b).all(|(x, y)| x <= y);
    let better = a.iter().zip(b).any(|(x, y)| x < y);
    no_worse && better
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(p99: f64, cpu: f64, rate: f64) -> Reference {
        Reference {
            p99_us: Some(p99),
            rate: Some(rate),
            cpu_us_per_unit: Some(cpu),
        }
    }

    #[test]
    fn a_trade_off_keeps_both_ends_and_drops_the_dominated() {
        let points = [
            p(167.0, 60.0, 9_500.0), // default: cheap, slow
            p(16.0, 22.0, 88_800.0), // busy poll cross: better on every axis here
            p(407.0, 30.0, 3_500.0), // defer + 100 µs timer: dominated by busy poll
            p(30.0, 18.0, 53_900.0), // same-CPU: cheaper per transaction, slower
        ];
        assert_eq!(front(&points), vec![1, 3]);
    }

    #[test]
    fn equal_points_are_both_kept_and_missing_axes_are_ignored() {
        let a = p(10.0, 1.0, 5.0);
        assert_eq!(front(&[a, a]), vec![0, 1]);
        let mut no_cpu = p(5.0, 0.0, 1.0);
        no_cpu.cpu_us_per_unit = None;
        // Without the CPU axis, (10 µs, 5/s) and (5 µs, 1/s) trade off.
        assert_eq!(front(&[a, no_cpu]), vec![0, 1]);
    }

    fn arb_point() -> impl Strategy<Value = Reference> {
        (1.0..1000.0f64, 1.0..100.0f64, 1.0..1e5f64).prop_map(|(a, b, c)| p(a, b, c))
    }

    proptest! {
        #[test]
        fn every_point_off_the_front_is_dominated_by_one_on_it(
            points in prop::collection::vec(arb_point(), 1..40)
        ) {
            let f = front(&points);
            let all = [true; 3];
            for i in (0..points.len()).filter(|i| !f.contains(i)) {
                let by_front = f
                    .iter()
                    .any(|&j| dominates(&costs(&points[j], all), &costs(&points[i], all)));
                prop_assert!(by_front, "point {} is off the front but no front point beats it", i);
            }
            // The single best point on any one axis can never be dominated.
            let best = (0..points.len())
                .min_by(|&a, &b| points[a].p99_us.partial_cmp(&points[b].p99_us).unwrap())
                .unwrap();
            let unique = points.iter().filter(|q| q.p99_us == points[best].p99_us).count() == 1;
            prop_assert!(!unique || f.contains(&best));
        }
    }
}
