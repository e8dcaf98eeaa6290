//! Running a batch on a given number of threads (Open3D's `nthreads` argument), with the number
//! checked and the thread pools it needs kept within bounds.
//!
//! `nthreads = 0` (and a count equal to the number of cores) runs on rayon's global pool. Any other
//! count needs a pool of its own; building one starts OS threads, which costs more than a small
//! batch, so pools are kept for reuse — but at most [`MAX_POOLS`] of them holding at most
//! [`MAX_CACHED_THREADS`] threads together, the least recently used dropped first (its threads
//! end once no batch runs on it). A caller that cycles through many counts therefore leaves a
//! bounded number of threads behind, and a count above [`MAX_THREADS`] is refused outright.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::ThreadPool;

/// The largest `nthreads` accepted: far beyond any machine's cores, far below what would exhaust
/// the process (each thread reserves a stack).
pub const MAX_THREADS: usize = 1024;
/// Pools kept for reuse.
pub const MAX_POOLS: usize = 4;
/// Threads the kept pools may hold together.
pub const MAX_CACHED_THREADS: usize = 256;

/// A checked `nthreads` argument: 0 (every core, rayon's global pool) or `1..=MAX_THREADS`.
/// Anything else, negative or too large (however large), is a `ValueError`; a non-integer is a
/// `TypeError`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NThreads(usize);

impl NThreads {
    /// Every core.
    pub const ALL: Self = Self(0);

    fn check(n: i64) -> PyResult<Self> {
        match usize::try_from(n) {
            Ok(n) if n <= MAX_THREADS => Ok(Self(n)),
            _ => Err(out_of_range(&n.to_string())),
        }
    }
}

fn out_of_range(value: &str) -> PyErr {
    PyValueError::new_err(format!(
        "nthreads must be 0 (every core) or 1..={MAX_THREADS}, got {value}"
    ))
}

impl<'a, 'py> FromPyObject<'a, 'py> for NThreads {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i64>() {
            Ok(n) => Self::check(n),
            // An int beyond i64 is as out of range as one just past the bound.
            Err(error) if error.is_instance_of::<PyOverflowError>(obj.py()) => {
                Err(out_of_range(&obj.str()?.to_string_lossy()))
            }
            Err(error) => Err(error),
        }
    }
}

/// Kept pools and their thread counts, least recently used first.
type Pools = Vec<(usize, Arc<ThreadPool>)>;

fn cache() -> &'static Mutex<Pools> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(Vec::new()))
}

/// A pool of `nthreads` threads: a kept one, or a new one (kept if the bounds allow).
fn pool(nthreads: usize) -> PyResult<Arc<ThreadPool>> {
    let mut pools = cache()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(i) = pools.iter().position(|(n, _)| *n == nthreads) {
        let entry = pools.remove(i);
        let p = Arc::clone(&entry.1);
        pools.push(entry);
        return Ok(p);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(nthreads)
        .thread_name(|i| format!("raypick-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {nthreads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push((nthreads, Arc::clone(&p)));
    // Drop the least recently used until the bounds hold (the new pool too, if it alone is over
    // them: this call still holds it, and its threads end after the call).
    while pools.len() > MAX_POOLS
        || pools.iter().map(|(n, _)| n).sum::<usize>() > MAX_CACHED_THREADS
    {
        pools.remove(0);
    }
    Ok(p)
}

/// Runs `f` on `nthreads` threads.
pub fn run<T: Send>(nthreads: NThreads, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    // A count equal to the global pool's (one thread per core) is that pool.
    if nthreads.0 == 0 || nthreads.0 == rayon::current_num_threads() {
        Ok(f())
    } else {
        Ok(pool(nthreads.0)?.install(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_checked() {
        assert_eq!(NThreads::check(0).unwrap(), NThreads::ALL);
        assert_eq!(NThreads::check(1024).unwrap(), NThreads(1024));
        for bad in [-1, 1025, 1 << 40, i64::MIN] {
            assert!(NThreads::check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kept_pools_stay_within_bounds() {
        for n in 1..=40 {
            let p = pool(n).unwrap();
            assert_eq!(p.current_num_threads(), n);
            let pools = cache().lock().unwrap();
            assert!(pools.len() <= MAX_POOLS);
            assert!(pools.iter().map(|(n, _)| n).sum::<usize>() <= MAX_CACHED_THREADS);
        }
        // The most recently used are the ones kept.
        let kept: Vec<usize> = cache().lock().unwrap().iter().map(|(n, _)| *n).collect();
        assert_eq!(kept, [37, 38, 39, 40]);
        let again = pool(39).unwrap();
        assert_eq!(again.current_num_threads(), 39);
        let kept: Vec<usize> = cache().lock().unwrap().iter().map(|(n, _)| *n).collect();
        assert_eq!(kept, [37, 38, 40, 39]);
    }
}
