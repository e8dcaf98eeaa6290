//! The query options Python passes to the batch queries: the `t` range (one for all rays or one
//! per ray), the ray mask and back-face culling, read once and handed to the engine's
//! [`QueryOptions`].

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use raypick::geom::Culling;
use raypick::QueryOptions;

use crate::arrays::{as_ndarray, read_floats};

/// One end of the `t` range: the same for every ray, or one value per ray (C order of the rays'
/// leading shape).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum End {
    All(f32),
    Each(Vec<f32>),
}

impl End {
    #[inline]
    fn at(&self, i: usize) -> f32 {
        match self {
            End::All(t) => *t,
            End::Each(ts) => ts[i],
        }
    }

    /// Reads a number, or an array of one value per ray (shaped like the rays' leading shape, or
    /// flat), for `rows` rays.
    fn read(
        obj: Option<&Bound<'_, PyAny>>,
        default: f32,
        name: &str,
        rows: usize,
    ) -> PyResult<Self> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(End::All(default));
        };
        if let Ok(x) = obj.extract::<f64>() {
            return Ok(End::All(x as f32));
        }
        let col = as_ndarray(obj, name)?.call_method1("reshape", ((-1, 1),))?;
        let f = read_floats(&col, name, 1, Some(2))?;
        if f.rows() != rows {
            return Err(PyValueError::new_err(format!(
                "{name} must be one number or one value per ray ({rows}), got {} values",
                f.rows()
            )));
        }
        Ok(End::Each(f.data))
    }

    fn check(&self, name: &str) -> PyResult<()> {
        let bad = match self {
            End::All(t) => t.is_nan().then_some((0, *t)),
            End::Each(ts) => ts.iter().position(|t| t.is_nan()).map(|k| (k, ts[k])),
        };
        match bad {
            Some((k, t)) => Err(PyValueError::new_err(format!(
                "{name}[{k}] = {t} is not a number"
            ))),
            None => Ok(()),
        }
    }
}

/// What a batch query takes besides the rays.
#[derive(Clone, Debug)]
pub(super) struct QueryArgs {
    pub(super) tnear: End,
    pub(super) tfar: End,
    /// The ray mask: a geometry is considered when `geometry_mask & mask != 0`.
    pub(super) mask: u32,
    pub(super) culling: Culling,
}

/// The options as Python passed them; [`Given::read`] checks them once the number of rays is known.
pub(super) struct Given<'a, 'py> {
    /// `None`: 0.
    pub(super) tnear: Option<&'a Bound<'py, PyAny>>,
    /// `None`: infinity.
    pub(super) tfar: Option<&'a Bound<'py, PyAny>>,
    pub(super) mask: u32,
    pub(super) cull_back_faces: bool,
}

impl Given<'_, '_> {
    /// Reads `tnear`, `tfar` (numbers or per-ray arrays for `rows` rays), `mask` and
    /// `cull_back_faces`.
    pub(super) fn read(&self, rows: usize) -> PyResult<QueryArgs> {
        let tnear = End::read(self.tnear, 0.0, "tnear", rows)?;
        let tfar = End::read(self.tfar, f32::INFINITY, "tfar", rows)?;
        tnear.check("tnear")?;
        tfar.check("tfar")?;
        Ok(QueryArgs {
            tnear,
            tfar,
            mask: self.mask,
            culling: if self.cull_back_faces {
                Culling::Back
            } else {
                Culling::None
            },
        })
    }
}

impl QueryArgs {
    /// The `t` range of ray `i`.
    #[inline]
    pub(super) fn span(&self, i: usize) -> (f32, f32) {
        (self.tnear.at(i), self.tfar.at(i))
    }

    pub(super) fn options(&self) -> QueryOptions<'static> {
        QueryOptions {
            culling: self.culling,
            mask: self.mask,
            filter: None,
        }
    }
}
