//! The two shared ray sets of `shared/tools/make_rays.py`, made here or read from its `.rays` files.
//!
//! - *incoherent*: `n` rays with origins on a sphere of twice the bounding-box radius around the box
//!   centre, each aimed at a uniform random point inside the box;
//! - *primary*: `res × res` pinhole rays (45° vertical field of view) from `centre + (0, 0.6, 2.2)·radius`
//!   towards the centre, row-major from the top-left pixel.
//!
//! Both follow the script's arithmetic (in `f64`, rounded to `f32` at the end). The primary set has no
//! randomness: on the bunny its directions are bit for bit those of the script's file and its origin is
//! within one `f32` ulp (checked 2026-11-30, all 1,048,576 rays); the incoherent
//! set cannot reproduce numpy's generator (it uses PCG64 and Box–Muller here), so it has the same
//! distribution but different rays. For figures comparable with other runs, read the script's files
//! with [`read_rays`].
//!
//! A `.rays` file is little-endian `f32`, one row `ox oy oz dx dy dz` per ray; rays read from it span
//! `t ∈ [0, ∞)`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use glam::{DVec3, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::Ray;

use crate::mesh::Mesh;

/// Bytes per ray in a `.rays` file: six little-endian `f32`.
const ROW_BYTES: usize = 24;

/// Centre and radius of the mesh's bounding box, as the script computes them (`f32` box, `f64` radius).
fn centre_and_radius(mesh: &Mesh) -> (DVec3, f64) {
    let (lo, hi) = mesh.bounds();
    let c = (lo + hi) / 2.0; // numpy does this in float32 too
    let r = (hi - lo).length() as f64 / 2.0;
    (c.as_dvec3(), r)
}

/// The incoherent set: `n` rays from a sphere of radius `2·r` around the box centre to uniform points
/// in the box, unit directions. Deterministic for a given `seed` (PCG64, not numpy's generator).
pub fn incoherent(mesh: &Mesh, n: usize, seed: u64) -> Vec<Ray> {
    let (lo, hi) = mesh.bounds();
    let (lo, hi) = (lo.as_dvec3(), hi.as_dvec3());
    let (c, r) = centre_and_radius(mesh);
    let mut rng = Pcg64::seed_from_u64(seed);
    // Standard normal by Box–Muller; `1 - gen()` lies in (0, 1], so the logarithm is finite.
    let normal = |rng: &mut Pcg64| {
        let (a, b): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    };
    (0..n)
        .map(|_| {
            let d = loop {
                let d = DVec3::new(normal(&mut rng), normal(&mut rng), normal(&mut rng));
                // A zero vector has probability ~0 but no direction: draw again.
                if d.length_squared() > 0.0 {
                    break d.normalize();
                }
            };
            let origin = c + 2.0 * r * d;
            let target = lo + DVec3::new(rng.gen(), rng.gen(), rng.gen()) * (hi - lo);
            Ray::new(origin.as_vec3(), (target - origin).normalize().as_vec3())
        })
        .collect()
}

/// The primary set: `res × res` pinhole-camera rays looking at the box centre from
/// `centre + (0, 0.6, 2.2)·r`, 45° vertical field of view, row-major from the top-left pixel.
pub fn primary(mesh: &Mesh, res: usize) -> Vec<Ray> {
    let (c, r) = centre_and_radius(mesh);
    let eye = c + DVec3::new(0.0, 0.6, 2.2) * r;
    let fwd = (c - eye).normalize();
    let right = fwd.cross(DVec3::Y).normalize();
    let up = right.cross(fwd);
    let tan_half = (45.0f64.to_radians() / 2.0).tan();
    let res_f = res as f64;
    let mut rays = Vec::with_capacity(res * res);
    for y in 0..res {
        let py = (1.0 - (y as f64 + 0.5) / res_f * 2.0) * tan_half;
        for x in 0..res {
            let px = ((x as f64 + 0.5) / res_f * 2.0 - 1.0) * tan_half;
            let d = (fwd + px * right + py * up).normalize();
            rays.push(Ray::new(eye.as_vec3(), d.as_vec3()));
        }
    }
    rays
}

/// Reads a `.rays` file (see the module docs); fails when its size is not a multiple of 24 bytes.
pub fn read_rays(path: &Path) -> Result<Vec<Ray>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() % ROW_BYTES != 0 {
        bail!(
            "{}: {} bytes is not a whole number of {ROW_BYTES}-byte rays",
            path.display(),
            bytes.len()
        );
    }
    Ok(bytes
        .chunks_exact(ROW_BYTES)
        .map(|row| {
            let f = |k: usize| {
                f32::from_le_bytes([row[4 * k], row[4 * k + 1], row[4 * k + 2], row[4 * k + 3]])
            };
            Ray::new(Vec3::new(f(0), f(1), f(2)), Vec3::new(f(3), f(4), f(5)))
        })
        .collect())
}

/// Writes rays in the `.rays` format (their `t` range is not stored).
pub fn write_rays(path: &Path, rays: &[Ray]) -> Result<()> {
    let mut bytes = Vec::with_capacity(rays.len() * ROW_BYTES);
    for ray in rays {
        for x in ray.origin.to_array().into_iter().chain(ray.dir.to_array()) {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// `n` rays spread evenly over `rays` (every `len/n`-th one), or all of them when `n >= len`.
///
/// Evenly spread rather than the first `n`, so a subsample of the row-major primary set still covers
/// the whole image.
pub fn subsample(rays: &[Ray], n: usize) -> Vec<Ray> {
    if n >= rays.len() {
        return rays.to_vec();
    }
    (0..n).map(|i| rays[i * rays.len() / n]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box() -> Mesh {
        Mesh {
            vertices: vec![Vec3::new(-1.0, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0)],
            indices: vec![],
        }
    }

    #[test]
    fn incoherent_rays_start_on_the_sphere_and_aim_into_the_box() {
        let mesh = unit_box();
        let (c, r) = centre_and_radius(&mesh);
        let rays = incoherent(&mesh, 2000, 7);
        assert_eq!(rays, incoherent(&mesh, 2000, 7), "not deterministic");
        for ray in &rays {
            let o = ray.origin.as_dvec3();
            assert!(((o - c).length() - 2.0 * r).abs() < 1e-5 * r);
            assert!((ray.dir.length() - 1.0).abs() < 1e-6);
            // The target lies in the box: the ray passes through it.
            let aabb = raypick::Aabb {
                min: Vec3::new(-1.0, -2.0, -3.0),
                max: Vec3::new(1.0, 2.0, 3.0),
            };
            assert!(aabb.intersect_ray(ray).is_some(), "{ray:?} misses the box");
        }
        // Origins cover the sphere: every octant is used.
        let mut octants = [0usize; 8];
        for ray in &rays {
            let o = ray.origin.as_dvec3() - c;
            octants[(o.x > 0.0) as usize
                | ((o.y > 0.0) as usize) << 1
                | ((o.z > 0.0) as usize) << 2] += 1;
        }
        assert!(octants.iter().all(|&k| k > 150), "{octants:?}");
    }

    #[test]
    fn primary_rays_form_the_documented_camera() {
        let mesh = unit_box();
        let (c, r) = centre_and_radius(&mesh);
        let res = 64;
        let rays = primary(&mesh, res);
        assert_eq!(rays.len(), res * res);
        let eye = c + DVec3::new(0.0, 0.6, 2.2) * r;
        let fwd = (c - eye).normalize();
        for ray in &rays {
            assert!((ray.origin.as_dvec3() - eye).length() < 1e-5 * r);
            assert!((ray.dir.length() - 1.0).abs() < 1e-6);
        }
        // The four central pixels are symmetric about the view axis.
        let mid = res / 2;
        let centre_dir = [
            (mid - 1, mid - 1),
            (mid - 1, mid),
            (mid, mid - 1),
            (mid, mid),
        ]
        .iter()
        .map(|&(y, x)| rays[y * res + x].dir.as_dvec3())
        .sum::<DVec3>()
        .normalize();
        assert!((centre_dir - fwd).length() < 1e-6);
        // Top-left looks up and left: y above the axis, x to the left (right = fwd × Y).
        let right = fwd.cross(DVec3::Y).normalize();
        let corner = rays[0].dir.as_dvec3();
        assert!(corner.dot(right) < 0.0 && corner.y > fwd.y);
        // Corner angle from the axis: atan(tan(22.5°)·(1 - 1/res)·√2).
        let expect = ((22.5f64).to_radians().tan() * (1.0 - 1.0 / res as f64) * 2f64.sqrt()).atan();
        assert!((corner.dot(fwd).acos() - expect).abs() < 1e-6);
    }

    #[test]
    fn rays_files_round_trip_and_reject_truncation() {
        let dir = std::env::temp_dir().join(format!("raypick-bench-rays-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.rays");
        let rays = incoherent(&unit_box(), 10, 1);
        write_rays(&path, &rays).unwrap();
        assert_eq!(read_rays(&path).unwrap(), rays);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.pop();
        std::fs::write(&path, bytes).unwrap();
        assert!(read_rays(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn subsample_spreads_evenly() {
        let rays = primary(&unit_box(), 10);
        let sub = subsample(&rays, 10);
        assert_eq!(sub.len(), 10);
        assert_eq!(sub[0], rays[0]);
        assert_eq!(sub[9], rays[90]);
        assert_eq!(subsample(&rays, 1000).len(), 100);
    }
}
