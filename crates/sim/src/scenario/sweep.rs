//! Sweeps: the cartesian product of `--sweep KEY=V1,V2,...` axes, and a parallel runner.
//!
//! Runs are independent, so a sweep parallelises across points (sim-notes §2.4, technique 5):
//! worker threads take the next point index from a shared counter. Results come back in point
//! order whatever the thread timing, so a sweep's output is as deterministic as a single run.

use super::error::ScenarioError;
use super::Scenario;
use nictune_core::progress::Progress;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One sweep axis: a key and its values (as typed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The key.
    pub key: String,
    /// Its values.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `KEY=V1,V2,...`.
    pub fn parse(text: &str) -> Result<Axis, ScenarioError> {
        let (k, v) = text
            .split_once('=')
            .ok_or_else(|| ScenarioError::Assignment(text.to_string()))?;
        let values: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(ScenarioError::Assignment(text.to_string()));
        }
        Ok(Axis {
            key: k.trim().to_string(),
            values,
        })
    }
}

/// Every point of the product, first axis slowest; each value is validated.
pub fn points(base: &Scenario, axes: &[Axis]) -> Result<Vec<Scenario>, ScenarioError> {
    let mut out = vec![base.clone()];
    for axis in axes {
        let mut next = Vec::with_capacity(out.len() * axis.values.len());
        for s in &out {
            for v in &axis.values {
                let mut p = s.clone();
                p.set(&axis.key, v)?;
                next.push(p);
            }
        }
        out = next;
    }
    Ok(out)
}

/// Runs `f` on every item with up to `threads` threads; results in item order.
pub fn run_parallel<T, R, F>(items: &[T], threads: usize, progress: &dyn Progress, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    progress.start(items.len() as u64, "sim sweep");
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    break;
                };
                let r = f(item);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
                progress.advance(1);
            });
        }
    });
    progress.finish();
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::progress::NoProgress;

    #[test]
    fn product_and_order() {
        let base = Scenario::from_toml("t", "").unwrap();
        let axes = [
            Axis::parse("client.itr=0,8000").unwrap(),
            Axis::parse("server.clock_ppm=1,2,3").unwrap(),
        ];
        let pts = points(&base, &axes).unwrap();
        assert_eq!(pts.len(), 6);
        let r = pts[4].resolved();
        assert_eq!(r["client.itr"].to_string(), "8000");
        assert_eq!(r["server.clock_ppm"].to_string(), "2");
        assert!(points(&base, &[Axis::parse("client.itr=0,x").unwrap()]).is_err());
        assert!(Axis::parse("client.itr").is_err());
    }

    #[test]
    fn parallel_results_keep_item_order() {
        let items: Vec<u64> = (0..50).collect();
        let out = run_parallel(&items, 4, &NoProgress, |x| x * x);
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
    }
}
