//! Point queries: closest point, distance, inside / outside and signed distance, for one point
//! or a batch. A point with a NaN or infinite coordinate is an answer, not an error: no closest
//! point, a NaN distance, outside (the engine's rules, `raypick::scene::point`).

use glam::Vec3;
use raypick::{InsideMethod, Scene};

use crate::buffers::check_out_len;
use crate::error::{count, status, AbiError};
use crate::out;
use crate::registry::{with_state, State};

/// The inside test of `method`: 0 crossing parity, 1 the generalized winding number.
fn method_of(method: u32) -> Result<InsideMethod, AbiError> {
    match method {
        0 => Ok(InsideMethod::Parity),
        1 => Ok(InsideMethod::WindingNumber),
        m => Err(AbiError::argument(
            "method",
            format!("{m} is not 0 (parity) or 1 (winding number)"),
        )),
    }
}

fn with_scene(scene: u32, f: impl FnOnce(&Scene) -> Result<i32, AbiError>) -> i32 {
    status(|| {
        with_state(|s| {
            let scene = s.scenes.get(scene, "scene")?;
            out::clear();
            f(scene)
        })
    })
}

/// `rp_scene_closest_point`: 1 and a closest-point record for the nearest primitive within
/// `max_distance` (∞: any), or 0 when there is none.
pub fn closest_point(scene: u32, p: Vec3, max_distance: f32) -> i32 {
    if max_distance.is_nan() || max_distance < 0.0 {
        return status(|| {
            Err(AbiError::argument(
                "maxDistance",
                format!("{max_distance} must be >= 0 (Infinity: no limit)"),
            ))
        });
    }
    with_scene(scene, |scene| {
        Ok(match scene.closest_point_path_within(p, max_distance) {
            Some((c, path)) => {
                out::push_closest(&c, &path);
                1
            }
            None => 0,
        })
    })
}

/// `rp_scene_distance`: 0, the distance to the surface in the out area's first f32.
pub fn distance(scene: u32, p: Vec3) -> i32 {
    with_scene(scene, |scene| {
        out::push_f32(&[scene.distance(p)]);
        Ok(0)
    })
}

/// `rp_scene_contains`: 1 inside, 0 outside.
pub fn contains(scene: u32, p: Vec3, method: u32) -> i32 {
    with_scene(scene, |scene| {
        Ok(scene.contains(p, method_of(method)?) as i32)
    })
}

/// `rp_scene_signed_distance`: 0, the distance (negative inside) in the out area's first f32.
pub fn signed_distance(scene: u32, p: Vec3, method: u32) -> i32 {
    with_scene(scene, |scene| {
        out::push_f32(&[scene.signed_distance(p, method_of(method)?)]);
        Ok(0)
    })
}

/// `rp_scene_signed_distances`: the signed distance of every point of `points` (f32, three per
/// point) into f32 buffer `out`; answers the number of points.
pub fn signed_distances(scene: u32, points: u32, method: u32, out_f32: u32) -> i32 {
    status(|| {
        let method = method_of(method)?;
        with_state(|s| {
            let State {
                f32: floats,
                scenes,
                ..
            } = s;
            let scene = scenes.get(scene, "scene")?;
            floats.lend(out_f32, "out", |dist, floats| {
                let data = floats.get(points, "points")?;
                if !data.len().is_multiple_of(3) {
                    return Err(AbiError::argument(
                        "points",
                        format!("length {} is not a multiple of 3", data.len()),
                    ));
                }
                let n = data.len() / 3;
                check_out_len(dist, n, "out")?;
                let points: Vec<Vec3> = data.chunks_exact(3).map(Vec3::from_slice).collect();
                dist.copy_from_slice(&scene.signed_distances(&points, method));
                count(n, "points")
            })?
        })
    })
}
