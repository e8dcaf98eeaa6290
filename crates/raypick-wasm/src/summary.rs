//! What a viewer needs to show the scene it picks in: a summary (bounds, counts, the geometries
//! with their names), and the render list — every mesh and sphere set reached through any
//! instances, with the composed `world_from_object` matrix and the data to draw it with.
//!
//! ## The render list (`rp_scene_draws`)
//! A JSON document `{"meshes": M, "sphereSets": S, "items": [...]}`. Each item is
//! `{"kind": "mesh" | "spheres", "data": k, "geom", "path", "pathNames", "name", "mask",
//! "matrix"}`: `data` indexes the scene's distinct meshes (`rp_scene_mesh_positions(scene, k)`,
//! `rp_scene_mesh_indices`) or sphere sets (`rp_scene_sphere_data`); `geom` is the geometry id
//! in the scene that holds it and `path` the instance ids that lead there, outermost first (a
//! hit on it has the same `geom` and instance path); `matrix` is `world_from_object`, 16 values
//! column-major (three.js's `Matrix4.fromArray`). Meshes that share their arrays (one scene
//! placed by several instances) are listed once in the data and referred to by each item, so a
//! viewer can draw them as instances. Items come in walk order: geometry ids ascending, an
//! instance's contents where it stands.

use std::collections::HashMap;

use glam::{DMat4, Mat4};
use raypick::{Aabb, Geometry, InstancePath, Scene, Spheres, TriMesh};

use crate::buffers::keep;
use crate::error::{handle, AbiError};
use crate::json::Json;
use crate::registry::with_state;

/// One mesh or sphere set as placed in the world.
struct Item<'a> {
    geom: u32,
    path: InstancePath,
    path_names: Vec<Option<&'a str>>,
    world_from_object: DMat4,
    kind: ItemKind,
    data: usize,
    geometry: &'a Geometry,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Mesh,
    Spheres,
}

/// The render list of a scene.
#[derive(Default)]
struct Draws<'a> {
    meshes: Vec<&'a TriMesh>,
    spheres: Vec<&'a Spheres>,
    items: Vec<Item<'a>>,
    /// Distinct meshes by the addresses and lengths of their arrays.
    mesh_ids: HashMap<(usize, usize, usize, usize), usize>,
    sphere_ids: HashMap<(usize, usize, usize), usize>,
}

impl<'a> Draws<'a> {
    fn of(scene: &'a Scene) -> Self {
        let mut d = Self::default();
        d.walk(scene, InstancePath::EMPTY, &[], DMat4::IDENTITY);
        d
    }

    fn walk(
        &mut self,
        scene: &'a Scene,
        path: InstancePath,
        names: &[Option<&'a str>],
        world_from_scene: DMat4,
    ) {
        for id in 0..scene.num_geometries() as u32 {
            let Some(g) = scene.geometry(id) else {
                continue;
            };
            let (kind, data) = match g {
                Geometry::Instance(inst) => {
                    let m = world_from_scene * Mat4::from(inst.world_from_object()).as_dmat4();
                    let mut names = names.to_vec();
                    names.push(inst.name());
                    self.walk(inst.scene(), path.pushed(id), &names, m);
                    continue;
                }
                Geometry::Mesh(m) => {
                    let key = (
                        m.vertices().as_ptr() as usize,
                        m.vertices().len(),
                        m.indices().as_ptr() as usize,
                        m.indices().len(),
                    );
                    let next = self.meshes.len();
                    let k = *self.mesh_ids.entry(key).or_insert(next);
                    if k == next {
                        self.meshes.push(m);
                    }
                    (ItemKind::Mesh, k)
                }
                Geometry::Spheres(s) => {
                    let key = (
                        s.centers().as_ptr() as usize,
                        s.radii().as_ptr() as usize,
                        s.len(),
                    );
                    let next = self.spheres.len();
                    let k = *self.sphere_ids.entry(key).or_insert(next);
                    if k == next {
                        self.spheres.push(s);
                    }
                    (ItemKind::Spheres, k)
                }
            };
            self.items.push(Item {
                geom: id,
                path,
                path_names: names.to_vec(),
                world_from_object: world_from_scene,
                kind,
                data,
                geometry: g,
            });
        }
    }
}

fn bounds_json(j: &mut Json, b: &Aabb) {
    if b.is_empty() {
        j.raw("null");
    } else {
        j.raw("{\"min\":")
            .nums(&b.min.to_array())
            .raw(",\"max\":")
            .nums(&b.max.to_array())
            .raw("}");
    }
}

/// The summary document of `scene` (`rp_scene_summary`):
/// `{"bounds", "geometries": [{"id", "kind", "name", "mask", "bounds", "triangles" | "spheres" |
/// "scene"}], "triangles", "totalTriangles", "instanceDepth"}`. `triangles` counts the scene's
/// own meshes, `totalTriangles` every placed copy too; an instance's entry summarizes the scene it
/// places (`"scene": {"geometries": n, "totalTriangles": t}`). Bounds are world boxes (`null`
/// when empty).
pub fn summary_json(scene: &Scene) -> String {
    let draws = Draws::of(scene);
    let total: usize = draws
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Mesh)
        .map(|i| draws.meshes[i.data].num_triangles())
        .sum();
    let mut j = Json::default();
    j.raw("{\"bounds\":");
    bounds_json(&mut j, &scene.bounds());
    j.raw(",\"geometries\":[");
    for id in 0..scene.num_geometries() as u32 {
        let Some(g) = scene.geometry(id) else {
            continue;
        };
        if id > 0 {
            j.raw(",");
        }
        let kind = match g {
            Geometry::Mesh(_) => "mesh",
            Geometry::Spheres(_) => "spheres",
            Geometry::Instance(_) => "instance",
        };
        j.raw("{\"id\":")
            .int(id.into())
            .raw(",\"kind\":")
            .string(Some(kind))
            .raw(",\"name\":")
            .string(g.name())
            .raw(",\"mask\":")
            .int(g.mask().into())
            .raw(",\"bounds\":");
        bounds_json(&mut j, &g.bounds());
        match g {
            Geometry::Mesh(m) => {
                j.raw(",\"triangles\":").int(m.num_triangles() as u64);
                j.raw(",\"vertices\":").int(m.vertices().len() as u64);
            }
            Geometry::Spheres(s) => {
                j.raw(",\"spheres\":").int(s.len() as u64);
            }
            Geometry::Instance(inst) => {
                let inner = Draws::of(inst.scene());
                let t: usize = inner
                    .items
                    .iter()
                    .filter(|i| i.kind == ItemKind::Mesh)
                    .map(|i| inner.meshes[i.data].num_triangles())
                    .sum();
                j.raw(",\"scene\":{\"geometries\":")
                    .int(inst.scene().num_geometries() as u64)
                    .raw(",\"totalTriangles\":")
                    .int(t as u64)
                    .raw("}");
            }
        }
        j.raw("}");
    }
    j.raw("],\"triangles\":")
        .int(scene.num_triangles() as u64)
        .raw(",\"totalTriangles\":")
        .int(total as u64)
        .raw(",\"instanceDepth\":")
        .int(scene.instance_depth() as u64)
        .raw("}");
    j.finish()
}

/// The render list document of `scene` (`rp_scene_draws`; see the module docs).
pub fn draws_json(scene: &Scene) -> String {
    let d = Draws::of(scene);
    let mut j = Json::default();
    j.raw("{\"meshes\":")
        .int(d.meshes.len() as u64)
        .raw(",\"sphereSets\":")
        .int(d.spheres.len() as u64)
        .raw(",\"items\":[");
    for (n, it) in d.items.iter().enumerate() {
        if n > 0 {
            j.raw(",");
        }
        let kind = match it.kind {
            ItemKind::Mesh => "mesh",
            ItemKind::Spheres => "spheres",
        };
        j.raw("{\"kind\":")
            .string(Some(kind))
            .raw(",\"data\":")
            .int(it.data as u64)
            .raw(",\"geom\":")
            .int(it.geom.into())
            .raw(",\"path\":[");
        for (k, id) in it.path.as_slice().iter().enumerate() {
            if k > 0 {
                j.raw(",");
            }
            j.int((*id).into());
        }
        j.raw("],\"pathNames\":[");
        for (k, name) in it.path_names.iter().enumerate() {
            if k > 0 {
                j.raw(",");
            }
            j.string(*name);
        }
        j.raw("],\"name\":")
            .string(it.geometry.name())
            .raw(",\"mask\":")
            .int(it.geometry.mask().into())
            .raw(",\"matrix\":")
            .nums(&it.world_from_object.as_mat4().to_cols_array())
            .raw("}");
    }
    j.raw("]}");
    j.finish()
}

/// A new byte buffer holding `text(scene)`.
fn text_buffer(scene: u32, text: fn(&Scene) -> String) -> u32 {
    handle(|| {
        with_state(|s| {
            let t = text(s.scenes.get(scene, "scene")?);
            keep(s, t.into_bytes())
        })
    })
}

/// `rp_scene_summary`: a byte buffer holding [`summary_json`].
pub fn summary(scene: u32) -> u32 {
    text_buffer(scene, summary_json)
}

/// `rp_scene_draws`: a byte buffer holding [`draws_json`].
pub fn draws(scene: u32) -> u32 {
    text_buffer(scene, draws_json)
}

fn data_buffer<T: crate::buffers::Elem>(
    scene: u32,
    k: u32,
    field: &'static str,
    f: impl FnOnce(&Draws<'_>, usize) -> Option<Vec<T>>,
) -> u32 {
    handle(|| {
        with_state(|s| {
            let scene = s.scenes.get(scene, "scene")?;
            let draws = Draws::of(scene);
            let v = f(&draws, k as usize).ok_or_else(|| {
                AbiError::argument(
                    field,
                    format!(
                        "{k} is out of range: the scene has {} distinct meshes and {} sphere sets",
                        draws.meshes.len(),
                        draws.spheres.len()
                    ),
                )
            })?;
            keep(s, v)
        })
    })
}

/// `rp_scene_mesh_positions`: a new f32 buffer with the vertices (x, y, z each, object space)
/// of distinct mesh `k` of the render list.
pub fn mesh_positions(scene: u32, k: u32) -> u32 {
    data_buffer(scene, k, "mesh", |d, k| {
        d.meshes
            .get(k)
            .map(|m| m.vertices().iter().flat_map(|v| v.to_array()).collect())
    })
}

/// `rp_scene_mesh_indices`: a new u32 buffer with the triangles (three vertex indices each) of
/// distinct mesh `k`; triangle `i` is primitive `i` of hits.
pub fn mesh_indices(scene: u32, k: u32) -> u32 {
    data_buffer(scene, k, "mesh", |d, k| {
        d.meshes
            .get(k)
            .map(|m| m.indices().iter().flatten().copied().collect())
    })
}

/// `rp_scene_sphere_data`: a new f32 buffer with the spheres (x, y, z, radius each) of distinct
/// sphere set `k`.
pub fn sphere_data(scene: u32, k: u32) -> u32 {
    data_buffer(scene, k, "sphereSet", |d, k| {
        d.spheres.get(k).map(|s| {
            s.centers()
                .iter()
                .zip(s.radii())
                .flat_map(|(c, r)| [c.x, c.y, c.z, *r])
                .collect()
        })
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::{Affine3A, Vec3};
    use raypick::SceneBuilder;

    use super::*;

    #[test]
    fn shared_meshes_are_listed_once_with_each_placement() {
        let mut part = SceneBuilder::new();
        part.add_mesh(
            TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).with_name("tri"),
        );
        let part = Arc::new(part.build().unwrap());
        let mut b = SceneBuilder::new();
        b.add_spheres(Spheres::new(vec![Vec3::Z], vec![0.5]));
        let a = b.add_instance(part.clone(), Affine3A::from_translation(Vec3::X * 2.0));
        b.set_name(a, "left \"one\"");
        b.add_instance(part, Affine3A::from_scale(Vec3::splat(3.0)));
        let scene = b.build().unwrap();
        let d = Draws::of(&scene);
        assert_eq!((d.meshes.len(), d.spheres.len(), d.items.len()), (1, 1, 3));
        let doc = draws_json(&scene);
        assert!(
            doc.contains("\"path\":[1],\"pathNames\":[\"left \\\"one\\\"\"],\"name\":\"tri\""),
            "{doc}"
        );
        assert!(
            doc.contains("\"matrix\":[3,0,0,0,0,3,0,0,0,0,3,0,0,0,0,1]"),
            "{doc}"
        );
        let s = summary_json(&scene);
        assert!(
            s.contains("\"triangles\":0,\"totalTriangles\":2,\"instanceDepth\":1"),
            "{s}"
        );
    }
}
