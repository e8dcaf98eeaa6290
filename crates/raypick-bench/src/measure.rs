//! Timing: a warm-up, then the median (and range) of several runs.

use std::time::Instant;

/// Wall-clock seconds over the timed runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Median run (the mean of the two middle runs for an even count).
    pub median: f64,
    /// Fastest run.
    pub min: f64,
    /// Slowest run.
    pub max: f64,
}

impl Stats {
    /// Median, minimum and maximum of `samples` (seconds).
    ///
    /// # Panics
    /// When `samples` is empty or holds a NaN (the harness never produces either).
    pub fn from_samples(samples: &[f64]) -> Self {
        assert!(!samples.is_empty(), "no samples");
        let mut s = samples.to_vec();
        s.sort_by(|a, b| a.partial_cmp(b).expect("timings are never NaN"));
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Self {
            median,
            min: s[0],
            max: s[n - 1],
        }
    }

    /// Millions of rays per second at the median, for `rays` rays per run.
    pub fn mrays(&self, rays: usize) -> f64 {
        rays as f64 / self.median / 1e6
    }
}

/// Runs `f` once to warm up (caches, page faults, thread pool start-up), then `runs` times, timing
/// each; returns the statistics and the last run's result.
///
/// # Panics
/// When `runs` is 0.
pub fn time_runs<T>(runs: usize, mut f: impl FnMut() -> T) -> (Stats, T) {
    assert!(runs > 0, "at least one timed run");
    let mut last = f();
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        last = std::hint::black_box(f());
        samples.push(start.elapsed().as_secs_f64());
    }
    (Stats::from_samples(&samples), last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = Stats::from_samples(&[3.0, 1.0, 2.0, 10.0, 0.5]);
        assert_eq!((s.median, s.min, s.max), (2.0, 0.5, 10.0));
        assert_eq!(Stats::from_samples(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert_eq!(Stats::from_samples(&[2.0]).mrays(1_000_000), 0.5);
    }

    #[test]
    fn time_runs_calls_warm_up_plus_runs() {
        let mut calls = 0;
        let (stats, last) = time_runs(5, || {
            calls += 1;
            calls
        });
        assert_eq!((calls, last), (6, 6));
        assert!(stats.min >= 0.0 && stats.min <= stats.median && stats.median <= stats.max);
    }
}
