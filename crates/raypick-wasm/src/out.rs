//! The out area: where single queries leave their answers (hit records, rays, points) for
//! JavaScript to read through `rp_out_f32_ptr` / `rp_out_u32_ptr` right after the call.
//!
//! ## Records
//! | record | f32 values | u32 values |
//! |---|---|---|
//! | hit ([`HIT_F32`], [`HIT_U32`]) | `t, u, v, normal.xyz, point.xyz` | `prim, geom, instance, path_len, path[8]` |
//! | closest point | `distance, u, v, normal.xyz, point.xyz` | as a hit |
//! | ray ([`RAY_F32`]) | `origin.xyz, dir.xyz, t_min, t_max` | — |
//!
//! `instance` is [`NONE`] for a primitive that no instance places; `path` holds `path_len`
//! instance ids, outermost first, then zeros. `u` weights the triangle's second vertex and `v`
//! its third (0 for spheres). A query that answers several hits writes them one after the other.
//! The area is rewritten by the next query, and may move when it grows: read its address after
//! every call.

use std::cell::RefCell;

use raypick::{ClosestPoint, Hit, InstancePath, Ray, MAX_INSTANCE_DEPTH};

/// f32 values per hit record.
pub const HIT_F32: usize = 9;
/// u32 values per hit record.
pub const HIT_U32: usize = 4 + MAX_INSTANCE_DEPTH;
/// f32 values per ray.
pub const RAY_F32: usize = 8;
/// The `instance` of a primitive no instance places, and the ids of a miss in batch columns.
pub const NONE: u32 = u32::MAX;

struct Out {
    f: Vec<f32>,
    u: Vec<u32>,
}

thread_local! {
    static OUT: RefCell<Out> = const { RefCell::new(Out { f: Vec::new(), u: Vec::new() }) };
}

/// Empties the area for the next answer.
pub fn clear() {
    OUT.with(|o| {
        let mut o = o.borrow_mut();
        o.f.clear();
        o.u.clear();
    });
}

/// Appends f32 values.
pub fn push_f32(values: &[f32]) {
    OUT.with(|o| o.borrow_mut().f.extend_from_slice(values));
}

/// Appends u32 values.
pub fn push_u32(values: &[u32]) {
    OUT.with(|o| o.borrow_mut().u.extend_from_slice(values));
}

fn push_ids(prim: u32, geom: u32, instance: Option<u32>, path: &InstancePath) {
    let mut ids = [0u32; HIT_U32];
    ids[0] = prim;
    ids[1] = geom;
    ids[2] = instance.unwrap_or(NONE);
    ids[3] = path.len() as u32;
    for (slot, id) in ids[4..].iter_mut().zip(path.as_slice()) {
        *slot = *id;
    }
    OUT.with(|o| o.borrow_mut().u.extend_from_slice(&ids));
}

/// Appends a hit record: the hit and its instance path (from the engine's path queries).
pub fn push_hit(h: &Hit, path: &InstancePath) {
    push_f32(&[
        h.t, h.u, h.v, h.normal.x, h.normal.y, h.normal.z, h.point.x, h.point.y, h.point.z,
    ]);
    push_ids(h.prim, h.geom, h.instance, path);
}

/// Appends a closest-point record: the point and its primitive's instance path.
pub fn push_closest(c: &ClosestPoint, path: &InstancePath) {
    push_f32(&[
        c.distance, c.u, c.v, c.normal.x, c.normal.y, c.normal.z, c.point.x, c.point.y, c.point.z,
    ]);
    push_ids(c.prim, c.geom, c.instance, path);
}

/// Appends a ray.
pub fn push_ray(r: &Ray) {
    push_f32(&[
        r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max,
    ]);
}

/// `rp_out_f32_ptr`.
pub fn f32_ptr() -> *const f32 {
    OUT.with(|o| o.borrow().f.as_ptr())
}

/// `rp_out_u32_ptr`.
pub fn u32_ptr() -> *const u32 {
    OUT.with(|o| o.borrow().u.as_ptr())
}

/// The area's f32 values (tests).
#[cfg(test)]
pub fn f32_values() -> Vec<f32> {
    OUT.with(|o| o.borrow().f.clone())
}

/// The area's u32 values (tests).
#[cfg(test)]
pub fn u32_values() -> Vec<u32> {
    OUT.with(|o| o.borrow().u.clone())
}
