//! Running a batch on a given number of threads (Open3D's `nthreads` argument).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;
use rayon::ThreadPool;

/// One pool per thread count asked for, built once and kept: building a pool starts OS threads,
/// which costs more than a small batch.
fn pool(nthreads: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(p) = pools.get(&nthreads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(nthreads)
        .thread_name(|i| format!("raypick-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {nthreads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.insert(nthreads, p.clone());
    Ok(p)
}

/// Runs `f` on `nthreads` threads (0: rayon's global pool, one thread per core).
pub fn run<T: Send>(nthreads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    if nthreads == 0 {
        Ok(f())
    } else {
        Ok(pool(nthreads)?.install(f))
    }
}
