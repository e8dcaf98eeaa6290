//! The Open3D-style batch queries: `cast_rays`, `test_occlusions`, `count_intersections` and
//! `list_intersections`, on all cores or on `nthreads` threads.

use std::sync::atomic::AtomicU32;

use glam::Vec3;
use numpy::{PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use raypick::{Hit, InstancePath, Ray, MAX_INSTANCE_DEPTH};

use super::options::{Given, QueryArgs};
use super::state::Built;
use super::{PyScene, INVALID_ID};
use crate::arrays::{pooled, put, read_floats_from, read_rows_from, to_numpy, value, Floats};
use crate::threads::{self, NThreads};

/// Rays from an `(..., 6)` array: origin, direction, ray `i` over `args.span(i)`.
pub(super) fn rays_from(f: &Floats, args: &QueryArgs) -> Vec<Ray> {
    f.data
        .chunks_exact(6)
        .enumerate()
        .map(|(i, c)| {
            let (t_min, t_max) = args.span(i);
            ray_at(c, t_min, t_max)
        })
        .collect()
}

/// The ray of the six floats of `c` (origin, direction; see [`crate::arrays::FloatRows`]) over
/// `[t_min, t_max]`.
pub(super) fn ray_of(c: &[AtomicU32], t_min: f32, t_max: f32) -> Ray {
    ray_at(&[0, 1, 2, 3, 4, 5].map(|i| value(c, i)), t_min, t_max)
}

/// The ray of six floats (origin, direction) over `[t_min, t_max]`.
#[inline]
pub(super) fn ray_at(c: &[f32], t_min: f32, t_max: f32) -> Ray {
    Ray::new(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])).with_range(t_min, t_max)
}

/// Rays per rayon task in the batch queries made here, as in the engine's batches.
pub(super) const RAY_CHUNK: usize = 256;

/// The columns of [`PyScene::cast_rays`], filled in Rust.
pub(super) struct CastColumns {
    t_hit: Vec<f32>,
    geometry_ids: Vec<u32>,
    primitive_ids: Vec<u32>,
    primitive_uvs: Vec<f32>,
    primitive_normals: Vec<f32>,
    instance_ids: Vec<u32>,
    /// [`MAX_INSTANCE_DEPTH`] ids per row, outermost first, padded with `INVALID_ID`; filled
    /// only when asked for.
    instance_paths: Option<Vec<u32>>,
}

impl CastColumns {
    fn with_capacity(n: usize, paths: bool) -> Self {
        Self {
            instance_paths: paths.then(|| Vec::with_capacity(MAX_INSTANCE_DEPTH * n)),
            t_hit: Vec::with_capacity(n),
            geometry_ids: Vec::with_capacity(n),
            primitive_ids: Vec::with_capacity(n),
            primitive_uvs: Vec::with_capacity(2 * n),
            primitive_normals: Vec::with_capacity(3 * n),
            instance_ids: Vec::with_capacity(n),
        }
    }

    /// Appends one hit and its instance path (the all-hits query's rows).
    fn push(&mut self, built: &Built, h: &Hit, path: &InstancePath) {
        self.t_hit.push(h.t);
        self.geometry_ids
            .push(built.geometry_id_of(h.geom, path.as_slice()));
        self.primitive_ids.push(h.prim);
        self.primitive_uvs.extend([h.u, h.v]);
        self.primitive_normals.extend(h.normal.to_array());
        self.instance_ids.push(h.instance.unwrap_or(INVALID_ID));
        if let Some(paths) = &mut self.instance_paths {
            paths.extend(path_row(path));
        }
    }

    /// Appends one ray's answer: its hit and instance path, or a miss.
    fn push_answer(&mut self, built: &Built, answer: Option<&(Hit, InstancePath)>) {
        match answer {
            Some((h, path)) => self.push(built, h, path),
            None => {
                self.t_hit.push(f32::INFINITY);
                self.geometry_ids.push(INVALID_ID);
                self.primitive_ids.push(INVALID_ID);
                self.primitive_uvs.extend([0.0; 2]);
                self.primitive_normals.extend([0.0; 3]);
                self.instance_ids.push(INVALID_ID);
                if let Some(paths) = &mut self.instance_paths {
                    paths.extend(path_row(&InstancePath::EMPTY));
                }
            }
        }
    }

    /// The columns as a dict of arrays, `lead` leading dimensions each.
    fn into_dict<'py>(self, py: Python<'py>, lead: &[usize]) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        put(&d, "t_hit", self.t_hit, lead, &[])?;
        put(&d, "geometry_ids", self.geometry_ids, lead, &[])?;
        put(&d, "primitive_ids", self.primitive_ids, lead, &[])?;
        put(&d, "primitive_uvs", self.primitive_uvs, lead, &[2])?;
        put(&d, "primitive_normals", self.primitive_normals, lead, &[3])?;
        put(&d, "instance_ids", self.instance_ids, lead, &[])?;
        if let Some(paths) = self.instance_paths {
            put(&d, "instance_paths", paths, lead, &[MAX_INSTANCE_DEPTH])?;
        }
        Ok(d)
    }
}

/// A hit's instance path as a row of [`MAX_INSTANCE_DEPTH`] ids, padded with `INVALID_ID`.
fn path_row(path: &InstancePath) -> [u32; MAX_INSTANCE_DEPTH] {
    let mut row = [INVALID_ID; MAX_INSTANCE_DEPTH];
    row[..path.len()].copy_from_slice(path.as_slice());
    row
}

/// The columns of [`PyScene::cast_rays`] as they are filled: the memory of the numpy arrays it
/// returns, written in place. The arrays come from [`crate::arrays::pooled`], which reuses the
/// memory of freed answer arrays: fresh memory (numpy's zeros, or `Vec`s handed over afterwards)
/// was faulted in and zeroed by the kernel on every call, 16 % of a primary-ray cast. Every
/// element is written, misses included.
pub(super) struct CastOut<'a> {
    t_hit: &'a mut [f32],
    geometry_ids: &'a mut [u32],
    primitive_ids: &'a mut [u32],
    primitive_uvs: &'a mut [f32],
    primitive_normals: &'a mut [f32],
    instance_ids: &'a mut [u32],
}

impl CastOut<'_> {
    /// The closest hit of every ray, on the current rayon pool, written straight into the columns
    /// (no intermediate `Vec<Option<Hit>>`: for a million rays that buffer cost a fifth of the
    /// cast). Rays are independent, so the result does not depend on the number of threads.
    /// `floats` holds 6 per ray (origin, direction); each worker makes a chunk's rays in a buffer it
    /// keeps and casts them with [`raypick::Scene::intersect_into`] (packets of coherent rays), or
    /// where instances nest with [`raypick::Scene::intersect_path_into`], whose paths the
    /// geometry ids need.
    fn cast(self, built: &Built, floats: &[AtomicU32], args: &QueryArgs) {
        let opts = args.options();
        let nests = built.nests();
        use rayon::prelude::*;
        const CHUNK: usize = RAY_CHUNK;
        self.t_hit
            .par_chunks_mut(CHUNK)
            .zip(self.geometry_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_uvs.par_chunks_mut(2 * CHUNK))
            .zip(self.primitive_normals.par_chunks_mut(3 * CHUNK))
            .zip(self.instance_ids.par_chunks_mut(CHUNK))
            .zip(floats.par_chunks(6 * CHUNK))
            .enumerate()
            .for_each_init(
                || (Vec::with_capacity(CHUNK), Vec::new(), Vec::new()),
                |(rays, hits, with_paths),
                 (chunk, ((((((t, geom), prim), uv), normal), inst), floats))| {
                    // One chunk at a time through the engine's batch walk (packets of coherent rays),
                    // into buffers each worker keeps.
                    rays.clear();
                    rays.extend(floats.chunks_exact(6).enumerate().map(|(k, c)| {
                        let (t_min, t_max) = args.span(chunk * CHUNK + k);
                        ray_of(c, t_min, t_max)
                    }));
                    let rows = CastOut {
                        t_hit: t,
                        geometry_ids: geom,
                        primitive_ids: prim,
                        primitive_uvs: uv,
                        primitive_normals: normal,
                        instance_ids: inst,
                    };
                    if nests {
                        with_paths.resize(rays.len(), None);
                        built.scene.intersect_path_into(rays, &opts, with_paths);
                        let answers = with_paths
                            .iter()
                            .map(|a| a.as_ref().map(|(h, path)| (h, path.as_slice())));
                        rows.write(built, answers);
                    } else {
                        hits.resize(rays.len(), None);
                        built.scene.intersect_into(rays, &opts, hits);
                        // The top-level instance is the whole path.
                        let answers = hits
                            .iter()
                            .map(|a| a.as_ref().map(|h| (h, h.instance.as_slice())));
                        rows.write(built, answers);
                    }
                },
            );
    }

    /// Writes one answer per row: a hit and its instance path, or a miss.
    #[inline(always)]
    fn write<'h>(self, built: &Built, answers: impl Iterator<Item = Option<(&'h Hit, &'h [u32])>>) {
        // The columns zipped row by row: no index, so no bounds check per element. Every
        // column's chunk holds this chunk's rays (the same `CHUNK` per row).
        let rows = answers
            .zip(self.t_hit.iter_mut())
            .zip(self.geometry_ids.iter_mut())
            .zip(self.primitive_ids.iter_mut())
            .zip(self.primitive_uvs.chunks_exact_mut(2))
            .zip(self.primitive_normals.chunks_exact_mut(3))
            .zip(self.instance_ids.iter_mut());
        for ((((((answer, t), geom), prim), uv), normal), inst) in rows {
            match answer {
                Some((h, path)) => {
                    *t = h.t;
                    *geom = built.geometry_id_of(h.geom, path);
                    *prim = h.prim;
                    uv.copy_from_slice(&[h.u, h.v]);
                    normal.copy_from_slice(&h.normal.to_array());
                    *inst = h.instance.unwrap_or(INVALID_ID);
                }
                None => {
                    // Every element: the arrays' memory may hold an earlier cast's answers
                    // (`arrays::pooled`).
                    *t = f32::INFINITY;
                    *geom = INVALID_ID;
                    *prim = INVALID_ID;
                    uv.fill(0.0);
                    normal.fill(0.0);
                    *inst = INVALID_ID;
                }
            }
        }
    }
}

/// [`cast_rays`] with the `instance_paths` column: through the engine's path batch into hits and
/// paths, then the columns (every answer has a path to copy, so the in-place writer's speed buys
/// little).
fn cast_rays_with_paths<'py>(
    built: &Built,
    py: Python<'py>,
    rays: &Bound<'py, PyAny>,
    given: &Given<'_, 'py>,
    nthreads: NThreads,
) -> PyResult<Bound<'py, PyDict>> {
    let f = read_floats_from(rays, "rays", 6, None, built.origin)?;
    let args = given.read(f.rows())?;
    let opts = args.options();
    let rays = rays_from(&f, &args);
    let cols = py.detach(|| {
        threads::run(nthreads, || {
            let mut answers = vec![None; rays.len()];
            built
                .scene
                .intersect_path_batch_into(&rays, &opts, &mut answers);
            let mut cols = CastColumns::with_capacity(answers.len(), true);
            for a in &answers {
                cols.push_answer(built, a.as_ref());
            }
            cols
        })
    })?;
    cols.into_dict(py, &f.lead)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn cast_rays<'py>(
    scene: &PyScene,
    py: Python<'py>,
    rays: &Bound<'py, PyAny>,
    given: &Given<'_, 'py>,
    nthreads: NThreads,
    instance_paths: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let built = scene.built(py)?;
    if instance_paths {
        return cast_rays_with_paths(&built, py, rays, given, nthreads);
    }
    let f = read_rows_from(rays, "rays", 6, built.origin)?;
    let args = given.read(f.values().len() / 6)?;
    let values = f.values();
    let lead = &f.lead;
    let t_hit = pooled::<f32>(py, lead, &[])?;
    let geometry_ids = pooled::<u32>(py, lead, &[])?;
    let primitive_ids = pooled::<u32>(py, lead, &[])?;
    let primitive_uvs = pooled::<f32>(py, lead, &[2])?;
    let primitive_normals = pooled::<f32>(py, lead, &[3])?;
    let instance_ids = pooled::<u32>(py, lead, &[])?;
    {
        let mut t = t_hit.readwrite();
        let mut g = geometry_ids.readwrite();
        let mut p = primitive_ids.readwrite();
        let mut uv = primitive_uvs.readwrite();
        let mut n = primitive_normals.readwrite();
        let mut i = instance_ids.readwrite();
        let out = CastOut {
            t_hit: t.as_slice_mut()?,
            geometry_ids: g.as_slice_mut()?,
            primitive_ids: p.as_slice_mut()?,
            primitive_uvs: uv.as_slice_mut()?,
            primitive_normals: n.as_slice_mut()?,
            instance_ids: i.as_slice_mut()?,
        };
        py.detach(|| threads::run(nthreads, || out.cast(&built, values, &args)))?;
    }
    let d = PyDict::new(py);
    d.set_item("t_hit", t_hit)?;
    d.set_item("geometry_ids", geometry_ids)?;
    d.set_item("primitive_ids", primitive_ids)?;
    d.set_item("primitive_uvs", primitive_uvs)?;
    d.set_item("primitive_normals", primitive_normals)?;
    d.set_item("instance_ids", instance_ids)?;
    Ok(d)
}

pub(super) fn test_occlusions<'py>(
    scene: &PyScene,
    py: Python<'py>,
    rays: &Bound<'py, PyAny>,
    given: &Given<'_, 'py>,
    nthreads: NThreads,
) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
    let built = scene.built(py)?;
    let f = read_rows_from(rays, "rays", 6, built.origin)?;
    let args = given.read(f.values().len() / 6)?;
    let opts = args.options();
    let values = f.values();
    let out = py.detach(|| {
        threads::run(nthreads, || {
            use rayon::prelude::*;
            // Rays are made from the floats as they are cast: a materialized `Vec<Ray>` (32 MB
            // per million rays, written and page-faulted once) cost a sixth of the cast.
            let mut out = vec![false; values.len() / 6];
            out.par_chunks_mut(RAY_CHUNK)
                .zip(values.par_chunks(6 * RAY_CHUNK))
                .enumerate()
                .for_each_init(
                    || Vec::with_capacity(RAY_CHUNK),
                    |rays, (chunk, (out, floats))| {
                        // One chunk at a time through the engine's batch walk (packets of
                        // coherent rays).
                        rays.clear();
                        rays.extend(floats.chunks_exact(6).enumerate().map(|(k, c)| {
                            let (t_min, t_max) = args.span(chunk * RAY_CHUNK + k);
                            ray_of(c, t_min, t_max)
                        }));
                        built.scene.occluded_into(rays, &opts, out);
                    },
                );
            out
        })
    })?;
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn count_intersections<'py>(
    scene: &PyScene,
    py: Python<'py>,
    rays: &Bound<'py, PyAny>,
    given: &Given<'_, 'py>,
    nthreads: NThreads,
) -> PyResult<Bound<'py, PyArrayDyn<i32>>> {
    let built = scene.built(py)?;
    let f = read_floats_from(rays, "rays", 6, None, built.origin)?;
    let args = given.read(f.rows())?;
    let opts = args.options();
    let rays = rays_from(&f, &args);
    let out: Vec<i32> = py.detach(|| {
        threads::run(nthreads, || {
            rays.par_iter()
                .with_min_len(64)
                .map(|r| {
                    let n = built.scene.count_intersections_with(r, &opts);
                    i32::try_from(n).unwrap_or(i32::MAX)
                })
                .collect()
        })
    })?;
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn list_intersections<'py>(
    scene: &PyScene,
    py: Python<'py>,
    rays: &Bound<'py, PyAny>,
    given: &Given<'_, 'py>,
    nthreads: NThreads,
    instance_paths: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let built = scene.built(py)?;
    let f = read_floats_from(rays, "rays", 6, None, built.origin)?;
    let args = given.read(f.rows())?;
    let opts = args.options();
    let rays = rays_from(&f, &args);
    let (splits, ray_ids, cols) = py.detach(|| {
        threads::run(nthreads, || {
            // With paths: the `instance_paths` column and nested instances' geometry ids.
            let all: Vec<Vec<(Hit, InstancePath)>> = rays
                .par_iter()
                .with_min_len(64)
                .map(|r| built.scene.intersect_all_paths_with(r, &opts))
                .collect();
            let total = all.iter().map(Vec::len).sum();
            let mut splits = Vec::with_capacity(all.len() + 1);
            let mut ray_ids = Vec::with_capacity(total);
            let mut cols = CastColumns::with_capacity(total, instance_paths);
            splits.push(0i64);
            for (i, hits) in all.iter().enumerate() {
                for (h, path) in hits {
                    ray_ids.push(i as i64);
                    cols.push(&built, h, path);
                }
                splits.push(ray_ids.len() as i64);
            }
            (splits, ray_ids, cols)
        })
    })?;
    let k = ray_ids.len();
    let d = cols.into_dict(py, &[k])?;
    put(&d, "ray_splits", splits, &[rays.len() + 1], &[])?;
    put(&d, "ray_ids", ray_ids, &[k], &[])?;
    Ok(d)
}
