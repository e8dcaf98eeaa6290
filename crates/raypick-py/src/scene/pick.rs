//! Picking through a [`PyCamera`]: the hit under a window position, and marquee selection.

use pyo3::prelude::*;
use raypick::QueryOptions;

use super::PyScene;
use crate::camera::PyCamera;
use crate::hit::PyHit;

pub(super) fn pick(
    scene: &PyScene,
    py: Python<'_>,
    camera: &Bound<'_, PyCamera>,
    x: f32,
    y: f32,
    tolerance_px: f32,
) -> PyResult<Option<PyHit>> {
    let built = scene.built(py)?;
    let cam = &camera.get().in_frame(built.origin)?;
    let pixel = glam::Vec2::new(x, y);
    // With the hit's instance path, which `Hit.instance_path` reports (and nested instances'
    // geometry ids need).
    let picked = if tolerance_px > 0.0 {
        raypick::camera::pick_with_tolerance(
            &built.scene,
            cam,
            pixel,
            tolerance_px,
            &QueryOptions::default(),
        )
        // The winning ray again, through the path query: the same hit, and its path.
        .and_then(|p| built.scene.intersect_path(&p.ray))
    } else {
        raypick::camera::pick_path(&built.scene, cam, pixel).map(|(p, path)| (p.hit, path))
    };
    Ok(picked.map(|(hit, path)| {
        let (geometry_id, name) = built.id_and_name(&hit, &path);
        PyHit::new(&hit, &path, built.origin, geometry_id, name)
    }))
}

pub(super) fn pick_rect(
    scene: &PyScene,
    py: Python<'_>,
    camera: &Bound<'_, PyCamera>,
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
) -> PyResult<Vec<(u32, Option<u32>)>> {
    let built = scene.built(py)?;
    let cam = camera.get().in_frame(built.origin)?;
    let scene = built.scene.clone();
    let rect = raypick::camera::PixelRect::new(x0, y0, x1, y1);
    let found = py.detach(|| raypick::camera::pick_rect(&scene, &cam, rect));
    let mut out: Vec<(u32, Option<u32>)> = found
        .into_iter()
        .map(|(g, i)| match i {
            Some(inst) => (built.geometry_id_of(g, &[inst]), Some(inst)),
            None => (g, None),
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
