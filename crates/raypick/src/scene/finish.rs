//! Finishing a hit: the raw hit a walk kept (its triangle's slot, barycentrics, `t` and what the
//! walk kept of its instances) turned into a [`Hit`], with the world-space point and normal.

use glam::{Vec3, Vec3A};

use super::hit::{InstancePath, PathRecord, RawHit, MAX_INSTANCE_DEPTH};
use super::{Accel, Geometry, Hit, Instance, InstanceAccel, Scene};
use crate::simd::LANES;
use crate::Ray;

impl Scene {
    /// [`Scene::finish`] into `out`, in place. Out of line (it runs once per hit, and inlined it
    /// would only make the walks that call it larger), and writing the answer itself:
    /// returned by value, the hit would be stored to the caller's stack field by field and copied
    /// to the batch's slot with 32-byte loads at once, which the CPU cannot forward from those
    /// narrower stores, so the loads would wait for the stores to complete. For the same reason
    /// a hit inside instances is written by a call of its own: a store that both kinds of hit
    /// shared would gather each hit on the stack first.
    #[inline(never)]
    pub(crate) fn finish_into<P: PathRecord>(
        &self,
        ray: &Ray,
        raw: &RawHit<P>,
        out: &mut Option<Hit>,
    ) {
        if raw.path.top().is_some() {
            self.finish_placed_into(ray, raw, out);
        } else {
            *out = Some(self.finish_own(ray, raw));
        }
    }

    /// [`Scene::finish_into`] for a hit inside instances.
    #[inline(never)]
    fn finish_placed_into<P: PathRecord>(&self, ray: &Ray, raw: &RawHit<P>, out: &mut Option<Hit>) {
        *out = Some(self.finish_placed(ray, raw));
    }

    /// [`Scene::finish_into`] with the hit's instance path (the path queries).
    #[inline(never)]
    pub(super) fn finish_path_into<P: PathRecord>(
        &self,
        ray: &Ray,
        raw: &RawHit<P>,
        out: &mut Option<(Hit, InstancePath)>,
    ) {
        *out = Some((self.finish(ray, raw), raw.path.path()));
    }

    /// Completes a raw hit (point and normal in world space) for the world ray `ray`.
    #[inline(always)]
    pub(crate) fn finish<P: PathRecord>(&self, ray: &Ray, raw: &RawHit<P>) -> Hit {
        if raw.path.top().is_some() {
            self.finish_placed(ray, raw)
        } else {
            self.finish_own(ray, raw)
        }
    }

    /// [`Scene::finish`] for a hit on this scene's own geometry, the common case (this runs for
    /// every closest hit a batch answers): no transform, and no copy of the ray.
    #[inline(always)]
    fn finish_own<P: PathRecord>(&self, ray: &Ray, raw: &RawHit<P>) -> Hit {
        let (point, normal, _) = self.surface(raw, ray);
        raw.hit(point, normal)
    }

    /// [`Scene::finish`] for a hit inside instances (see [`Scene::surface_placed`]). Out of line:
    /// the common case's code stays small.
    #[inline(never)]
    fn finish_placed<P: PathRecord>(&self, ray: &Ray, raw: &RawHit<P>) -> Hit {
        let (point, normal) = self.surface_placed(ray, raw);
        raw.hit(point, normal)
    }

    /// World-space point and unit normal of a hit inside instances: the ray moved into each
    /// instance on the path as the walk moved it (bit for bit), the surface found in the
    /// innermost scene, and the point and normal moved back out, innermost transform first. The
    /// normal is normalized once, at the end; an odd number of mirroring transforms flips a
    /// triangle's winding.
    fn surface_placed<P: PathRecord>(&self, ray: &Ray, raw: &RawHit<P>) -> (Vec3, Vec3) {
        let mut chain: [Option<(&Instance, &InstanceAccel)>; MAX_INSTANCE_DEPTH] =
            [None; MAX_INSTANCE_DEPTH];
        let mut scene = self;
        let mut ray_object = *ray;
        for (k, &id) in raw.path.ids().iter().enumerate() {
            let (Geometry::Instance(g), Accel::Instance(a)) =
                (&scene.geometries[id as usize], &scene.accels[id as usize])
            else {
                // Paths come from walks of this scene: every id on them is an instance.
                return (ray.at(raw.t), Vec3::ZERO);
            };
            ray_object = Ray {
                origin: a.object_from_world.transform_point3(ray_object.origin),
                dir: a.object_from_world.transform_vector3(ray_object.dir),
                ..ray_object
            };
            chain[k] = Some((g, a));
            scene = &g.scene;
        }
        let (mut point, mut normal, triangle) = scene.surface(raw, &ray_object);
        let mut mirrored = false;
        for (g, a) in chain.iter().rev().flatten() {
            point = g.world_from_object.transform_point3(point);
            normal = a.normal_from_object * normal;
            mirrored ^= a.mirrored;
        }
        let normal = normal.normalize_or_zero();
        (
            point,
            if triangle && mirrored {
                -normal
            } else {
                normal
            },
        )
    }

    /// Point, unit normal and "is a triangle" of a raw hit in this scene's space.
    #[inline(always)]
    fn surface<P>(&self, raw: &RawHit<P>, ray: &Ray) -> (Vec3, Vec3, bool) {
        match (&self.geometries[raw.geom as usize], &self.meshes) {
            (Geometry::Mesh(_), Some(a)) => {
                // The local triangle in BVH order: the same f32 data the kernel tested. Mesh hits
                // carry the slot they were tested at, in the BVH and the brute-force walks alike.
                let slot = raw.slot as usize;
                debug_assert_eq!(
                    a.parts.locate(a.blocks[slot / LANES].ids[slot % LANES]),
                    (raw.geom, raw.prim)
                );
                // In 4-wide registers (`Vec3A`): the same operations on each component, in the
                // same order, as with `Vec3`, so the same bits, in fewer instructions.
                let [l0, l1, l2] = a.tri(slot).map(Vec3A::from);
                let normal = (l1 - l0).cross(l2 - l0).normalize_or_zero();
                // The point as `offset + (l0 + u·(l1 − l0) + v·(l2 − l0))`, not as
                // `offset + ((1 − u − v)·l0 + u·l1 + v·l2)`: a coordinate that the three vertices
                // share has exactly zero edges, so it comes out as `offset + l0`, the vertex's own
                // coordinate. With the weighted sum it is rounded at the local coordinate's
                // magnitude: a floor at `y = 0` of a room whose centre is at `y = 750` lands up to
                // `6e-5` above or below its plane, far more than the few ulps of the point that
                // `offset_ray_origin` allows for, and rays spawned from it would start on the wrong
                // side. Interpolating the world-space vertices instead would round every product
                // at the world coordinates' magnitude (several ulps of a mesh far from the origin);
                // this form rounds once there, in the final sum.
                let local = l0 + raw.u * (l1 - l0) + raw.v * (l2 - l0);
                let point = Vec3A::from(a.offset) + local;
                (Vec3::from(point), Vec3::from(normal), true)
            }
            (Geometry::Spheres(s), _) => {
                let (c, r) = (s.centers[raw.prim as usize], s.radii[raw.prim as usize]);
                let normal = ((ray.origin - c) + raw.t * ray.dir).normalize_or_zero();
                (c + r * normal, normal, false)
            }
            _ => (ray.at(raw.t), Vec3::ZERO, false),
        }
    }
}
