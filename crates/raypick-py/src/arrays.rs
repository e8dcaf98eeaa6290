//! numpy in and out: any array-like with the right last dimension in, C-contiguous numpy arrays
//! shaped like the input's leading dimensions out.
//!
//! Inputs are copied into Rust vectors while the GIL is held (so another Python thread cannot
//! change them under a query that runs detached), whatever their dtype, strides or memory order,
//! with one exception: the rays of the batch queries ([`read_rows`]), which a C-contiguous float32
//! array lends without a copy and which the query reads with atomic loads (see [`FloatRows`]).
//!
//! The answer arrays of `cast_rays` take their memory from a pool of arrays of the same size that
//! numpy has freed ([`pooled`], at most [`POOL_BYTES`] kept), instead of fresh pages that the
//! kernel must fault in and zero on every call.

use glam::DVec3;
use numpy::ndarray::{ArrayView, IxDyn};
use numpy::prelude::*;
use numpy::{Element, PyArray, PyArrayDyn, PyUntypedArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

/// A float array read from Python: `data` holds `shape.iter().product() * last` values in C order.
pub struct Floats {
    /// The leading shape (everything but the last dimension).
    pub lead: Vec<usize>,
    /// The values, C order, as `f32`.
    pub data: Vec<f32>,
}

impl Floats {
    /// Number of rows (`product(lead)`).
    pub fn rows(&self) -> usize {
        self.lead.iter().product()
    }
}

/// Rows of floats for a query that runs detached (the GIL released): lent by the array without a
/// copy when it is float32, C-contiguous and aligned (a million rays are 24 MB, whose copy cost 3
/// to 10 ms, single-threaded under the GIL, before every cast), otherwise converted into a copy
/// as [`read_floats`] does.
///
/// A lent array stays alive and its memory in place while this value lives (it holds a reference
/// and a read-only borrow, so numpy refuses to resize it), but another Python thread may still
/// write to it while the query runs. The query therefore sees the values as [`AtomicU32`]s and
/// reads each one once with an atomic load ([`FloatRows::values`]): a concurrent write yields rays
/// made of old and new values, as in any library that reads numpy memory without the GIL, never a
/// data race in Rust's terms.
pub struct FloatRows<'py> {
    /// The leading shape (everything but the last dimension).
    pub lead: Vec<usize>,
    source: RowSource<'py>,
}

enum RowSource<'py> {
    Lent(numpy::PyReadonlyArrayDyn<'py, f32>),
    Copied(Vec<f32>),
}

impl FloatRows<'_> {
    /// The values in C order, as the bits of `f32`s (`f32::from_bits(v.load(Relaxed))`).
    pub fn values(&self) -> &[AtomicU32] {
        let floats: &[f32] = match &self.source {
            RowSource::Lent(a) => match a.as_slice() {
                Ok(s) => s,
                // `read_rows` lends only C-contiguous arrays, whose slice always exists.
                Err(_) => unreachable!("a lent array is C-contiguous"),
            },
            RowSource::Copied(v) => v,
        };
        // SAFETY: `AtomicU32` has the size and alignment of `u32`, which `f32` shares, so the
        // cast keeps the length and every element's place; `read_rows` lends only arrays whose
        // data are aligned for `f32`. The atomic view is shared and this crate never stores
        // through it; a store by another thread outside Rust meets atomic loads only.
        unsafe { &*(floats as *const [f32] as *const [AtomicU32]) }
    }
}

/// The float32 bits of `values[i]`, read once.
#[inline]
pub fn value(values: &[AtomicU32], i: usize) -> f32 {
    f32::from_bits(values[i].load(Ordering::Relaxed))
}

/// Reads an array of rows of `last` floats for a detached query ([`FloatRows`]), with the checks
/// and messages of [`read_floats`].
pub fn read_rows<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    last: usize,
) -> PyResult<FloatRows<'py>> {
    let a = as_ndarray(obj, name)?;
    if let Ok(t) = a.cast::<PyArrayDyn<f32>>() {
        let shape = t.shape().to_vec();
        let aligned = (t.data() as usize).is_multiple_of(std::mem::align_of::<f32>());
        if t.is_c_contiguous() && aligned && shape.last() == Some(&last) {
            if let Ok(lent) = t.try_readonly() {
                return Ok(FloatRows {
                    lead: shape[..shape.len() - 1].to_vec(),
                    source: RowSource::Lent(lent),
                });
            }
        }
    }
    let f = read_floats(a.as_any(), name, last, None)?;
    Ok(FloatRows {
        lead: f.lead,
        source: RowSource::Copied(f.data),
    })
}

/// `obj` as a numpy array (arrays pass through, anything else goes through `numpy.asarray`).
///
/// Tensors of other libraries on the CPU (PyTorch, Open3D, JAX, CuPy on the host…) come through
/// DLPack (`numpy.from_dlpack`) without a copy: `numpy.asarray` makes an array of objects of an
/// Open3D tensor. A tensor on a GPU is refused with DLPack's own message.
pub fn as_ndarray<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        return Ok(a.clone());
    }
    let np = obj.py().import("numpy")?;
    if obj.hasattr("__dlpack__")? && obj.hasattr("__dlpack_device__")? {
        let a = np.call_method1("from_dlpack", (obj,)).map_err(|e| {
            PyValueError::new_err(format!(
                "{name}: cannot read the tensor through DLPack (it must be on the CPU): {e}"
            ))
        })?;
        return a
            .cast_into::<PyUntypedArray>()
            .map_err(|_| PyValueError::new_err(format!("{name} must be an array of numbers")));
    }
    let a = np
        .call_method1("asarray", (obj,))
        .map_err(|e| PyValueError::new_err(format!("{name} must be an array of numbers: {e}")))?;
    a.cast_into::<PyUntypedArray>()
        .map_err(|_| PyValueError::new_err(format!("{name} must be an array of numbers")))
}

fn shape_str(shape: &[usize]) -> String {
    let inner: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if inner.len() == 1 {
        format!("({},)", inner[0])
    } else {
        format!("({})", inner.join(", "))
    }
}

fn dtype_str(a: &Bound<'_, PyUntypedArray>) -> String {
    a.dtype()
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Copies `a` (any strides) into a C-order vector of `f32`.
fn copy_as_f32(a: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<f32>> {
    // numpy allows arrays at addresses that do not suit their dtype (a view into a byte buffer at
    // an odd offset); Rust reads only aligned values, so those go through numpy's aligned copy.
    if !a.getattr("flags")?.getattr("aligned")?.extract::<bool>()? {
        let aligned = a.call_method0("copy")?;
        return copy_as_f32(aligned.cast::<PyUntypedArray>()?);
    }
    if let Ok(t) = a.cast::<PyArrayDyn<f32>>() {
        let r = t.readonly();
        // `as_slice` also accepts Fortran-contiguous arrays (memory order): only C order is row order.
        return Ok(match r.as_slice() {
            Ok(s) if t.is_c_contiguous() => s.to_vec(),
            _ => r.as_array().iter().copied().collect(),
        });
    }
    if let Ok(t) = a.cast::<PyArrayDyn<f64>>() {
        let r = t.readonly();
        return Ok(match r.as_slice() {
            Ok(s) if t.is_c_contiguous() => s.iter().map(|&x| x as f32).collect(),
            _ => r.as_array().iter().map(|&x| x as f32).collect(),
        });
    }
    // float16, longdouble, integers: let numpy convert (value-preserving for what f32 can hold).
    let converted = a.call_method1("astype", ("float64",))?;
    copy_as_f32(converted.cast::<PyUntypedArray>()?)
}

/// Copies `a` (any strides, a real dtype) into a C-order vector of `f64`.
fn copy_as_f64(a: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<f64>> {
    if !a.getattr("flags")?.getattr("aligned")?.extract::<bool>()? {
        let aligned = a.call_method0("copy")?;
        return copy_as_f64(aligned.cast::<PyUntypedArray>()?);
    }
    if let Ok(t) = a.cast::<PyArrayDyn<f64>>() {
        let r = t.readonly();
        return Ok(match r.as_slice() {
            Ok(s) if t.is_c_contiguous() => s.to_vec(),
            _ => r.as_array().iter().copied().collect(),
        });
    }
    if let Ok(t) = a.cast::<PyArrayDyn<f32>>() {
        let r = t.readonly();
        return Ok(r.as_array().iter().map(|&x| f64::from(x)).collect());
    }
    let converted = a.call_method1("astype", ("float64",))?;
    copy_as_f64(converted.cast::<PyUntypedArray>()?)
}

/// Checks that `a` is real-valued with last dimension `last` (see [`read_floats`]) and returns
/// its leading shape.
fn checked_lead(
    a: &Bound<'_, PyUntypedArray>,
    name: &str,
    last: usize,
    exact_ndim: Option<usize>,
) -> PyResult<Vec<usize>> {
    let kind = a.dtype().kind();
    if !matches!(kind, b'f' | b'i' | b'u') {
        return Err(PyValueError::new_err(format!(
            "{name} must be a float32 or float64 array, got dtype {}",
            dtype_str(a)
        )));
    }
    let shape = a.shape().to_vec();
    let ndim_ok = match exact_ndim {
        Some(n) => shape.len() == n,
        None => !shape.is_empty(),
    };
    if !ndim_ok || shape.last() != Some(&last) {
        let want = match exact_ndim {
            Some(2) => format!("(N, {last})"),
            Some(1) => format!("({last},)"),
            _ => format!("(..., {last})"),
        };
        return Err(PyValueError::new_err(format!(
            "{name} must have shape {want}, got {}",
            shape_str(&shape)
        )));
    }
    Ok(shape[..shape.len() - 1].to_vec())
}

/// Reads a real-valued array (see [`read_floats`]) in `f64`: its leading shape and its values.
pub fn read_floats64(
    obj: &Bound<'_, PyAny>,
    name: &str,
    last: usize,
    exact_ndim: Option<usize>,
) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let a = as_ndarray(obj, name)?;
    let lead = checked_lead(&a, name, last, exact_ndim)?;
    Ok((lead, copy_as_f64(&a)?))
}

/// Positions in a scene's frame: the first three values of every row of `last` minus `origin`,
/// subtracted in `f64` and rounded to `f32` once (the other values rounded as they are). With the
/// origin at zero this is [`read_floats`] exactly.
pub fn read_floats_from(
    obj: &Bound<'_, PyAny>,
    name: &str,
    last: usize,
    exact_ndim: Option<usize>,
    origin: DVec3,
) -> PyResult<Floats> {
    if origin == DVec3::ZERO {
        return read_floats(obj, name, last, exact_ndim);
    }
    let (lead, values) = read_floats64(obj, name, last, exact_ndim)?;
    Ok(Floats {
        lead,
        data: shifted(&values, last, origin),
    })
}

/// `values` (rows of `last`, the first three a position) with `origin` subtracted, as `f32`.
pub fn shifted(values: &[f64], last: usize, origin: DVec3) -> Vec<f32> {
    let o = origin.to_array();
    values
        .chunks_exact(last)
        .flat_map(|row| {
            row.iter()
                .enumerate()
                .map(move |(k, &x)| if k < 3 { (x - o[k]) as f32 } else { x as f32 })
        })
        .collect()
}

/// [`read_rows`] for a scene whose frame is at `origin`: rays are lent as they are when the origin
/// is zero, else read in `f64`, moved and rounded once ([`read_floats_from`]).
pub fn read_rows_from<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    last: usize,
    origin: DVec3,
) -> PyResult<FloatRows<'py>> {
    if origin == DVec3::ZERO {
        return read_rows(obj, name, last);
    }
    let f = read_floats_from(obj, name, last, None, origin)?;
    Ok(FloatRows {
        lead: f.lead,
        source: RowSource::Copied(f.data),
    })
}

/// Reads a real-valued array whose last dimension is `last` (`min_ndim` dimensions at least,
/// `exact_ndim` exactly when given). Accepts float32 and float64 (any strides), other float widths
/// and integers; rejects booleans, complex numbers, strings and objects with a `ValueError`.
pub fn read_floats(
    obj: &Bound<'_, PyAny>,
    name: &str,
    last: usize,
    exact_ndim: Option<usize>,
) -> PyResult<Floats> {
    let a = as_ndarray(obj, name)?;
    let lead = checked_lead(&a, name, last, exact_ndim)?;
    let data = copy_as_f32(&a)?;
    Ok(Floats { lead, data })
}

/// Reads a `(3,)` vector (a point or direction).
pub fn read_vec3(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<glam::Vec3> {
    let f = read_floats(obj, name, 3, Some(1))?;
    Ok(glam::Vec3::from_slice(&f.data))
}

/// Reads an `(M, 3)` integer array of triangle indices and checks them against `num_vertices`.
pub fn read_triangles(
    obj: &Bound<'_, PyAny>,
    name: &str,
    num_vertices: usize,
) -> PyResult<Vec<[u32; 3]>> {
    let a = as_ndarray(obj, name)?;
    let kind = a.dtype().kind();
    if !matches!(kind, b'i' | b'u') {
        return Err(PyValueError::new_err(format!(
            "{name} must be an integer array (e.g. int32, int64, uint32), got dtype {}",
            dtype_str(&a)
        )));
    }
    let shape = a.shape().to_vec();
    if shape.len() != 2 || shape[1] != 3 {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape (M, 3), got {}",
            shape_str(&shape)
        )));
    }
    let converted = a.call_method1("astype", ("int64",))?;
    let t = converted.cast::<PyArrayDyn<i64>>()?.readonly();
    let view = t.as_array();
    let mut out = Vec::with_capacity(shape[0]);
    let mut tri = [0u32; 3];
    for (k, &i) in view.iter().enumerate() {
        if i < 0 || i as u64 >= num_vertices as u64 {
            return Err(PyValueError::new_err(format!(
                "{name}[{}, {}] = {i} is out of range for {num_vertices} vertices",
                k / 3,
                k % 3
            )));
        }
        tri[k % 3] = i as u32;
        if k % 3 == 2 {
            out.push(tri);
        }
    }
    Ok(out)
}

/// A numpy array of shape `lead + tail` from C-order `data`.
pub fn to_numpy<'py, T: Element>(
    py: Python<'py>,
    data: Vec<T>,
    lead: &[usize],
    tail: &[usize],
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let mut shape = lead.to_vec();
    shape.extend_from_slice(tail);
    PyArray::from_vec(py, data).reshape(IxDyn(&shape))
}

/// Memory of answer arrays that numpy has freed, kept for the next arrays of the same size
/// ([`pooled`]); at most [`POOL_BYTES`] in all.
static POOL: Mutex<Vec<Box<[u32]>>> = Mutex::new(Vec::new());

/// Most bytes [`POOL`] keeps: the answers of about seven million rays.
pub const POOL_BYTES: usize = 256 << 20;

/// The memory behind an array made by [`pooled`], set as the array's base object: when numpy frees
/// the array it frees this, whose drop hands the memory back to [`POOL`].
#[pyclass(frozen)]
struct PooledBuffer {
    /// `Box::into_raw` of the words; only numpy reaches them (through the array), never this
    /// object, so no Rust reference to them exists while the array lives.
    words: RawWords,
}

/// A pointer to boxed words, owned.
struct RawWords(*mut [u32]);

// SAFETY: `RawWords` owns its allocation like a `Box<[u32]>`, which is `Send` and `Sync`; the
// object holding it never reads or writes the words (numpy does, under the GIL or rust-numpy's
// borrow checks, as for any array).
unsafe impl Send for RawWords {}
// SAFETY: as above.
unsafe impl Sync for RawWords {}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        // SAFETY: `words` came from `Box::into_raw` in `pooled` and is turned back into a box only
        // here, once; the array that used it is gone (this object was its base).
        let words = unsafe { Box::from_raw(self.words.0) };
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let held: usize = pool.iter().map(|b| b.len()).sum();
        if (held + words.len()) * 4 <= POOL_BYTES {
            pool.push(words);
        }
    }
}

/// A C-order array of shape `lead + tail` of a 4-byte element type, to be filled in place: **every
/// element must be written**, it holds arbitrary (initialized) values. Its memory is that of an
/// array of the same size which numpy has freed, when the pool has one ([`POOL`]), else new zeroed
/// memory. Casting a million rays writes 36 MB of answers: fresh memory each call cost a page
/// fault per page and the kernel's zeroing of each, 16 % of a primary-ray cast (`perf`).
pub fn pooled<'py, T: Element>(
    py: Python<'py>,
    lead: &[usize],
    tail: &[usize],
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    assert!(
        std::mem::size_of::<T>() == 4 && std::mem::align_of::<T>() <= 4,
        "pooled: 4-byte elements only"
    );
    let mut shape = lead.to_vec();
    shape.extend_from_slice(tail);
    let n: usize = shape.iter().product();
    let reused = {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let found = pool.iter().position(|b| b.len() == n);
        found.map(|k| pool.swap_remove(k))
    };
    let words = reused.unwrap_or_else(|| vec![0u32; n].into_boxed_slice());
    let raw = Box::into_raw(words);
    let owner = Bound::new(
        py,
        PooledBuffer {
            words: RawWords(raw),
        },
    )?;
    // SAFETY: `raw` points to `n` initialized, 4-aligned words, valid as `n` values of `T` (a
    // 4-byte `Element`: f32, u32 or i32, for which every bit pattern is a value); the view's
    // shape has `n` elements in C order. The memory stays valid and in place until `owner` is
    // dropped, which numpy does only after the array it is the base of.
    let array = unsafe {
        let view = ArrayView::from_shape_ptr(IxDyn(&shape), raw.cast::<T>().cast_const());
        PyArrayDyn::borrow_from_array(&view, owner.into_any())
    };
    Ok(array)
}

/// Sets `dict[key] = to_numpy(data, lead, tail)`.
pub fn put<T: Element>(
    dict: &Bound<'_, PyDict>,
    key: &str,
    data: Vec<T>,
    lead: &[usize],
    tail: &[usize],
) -> PyResult<()> {
    dict.set_item(key, to_numpy(dict.py(), data, lead, tail)?)
}
