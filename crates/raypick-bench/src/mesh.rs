//! The benchmark's mesh: one vertex list and one index list, loaded with raypick-io.
//!
//! Every engine gets the same single triangle soup. A file with several meshes (OBJ groups) is
//! concatenated in file order; a file with placed instances (glTF nodes) is flattened, each placement
//! a transformed copy. Triangle `i` of a triangle-only OBJ is therefore its `i`-th `f` line, as in
//! `shared/tools/make_rays.py` (polygons are fan-triangulated the same way).

use std::path::Path;

use anyhow::{bail, Context, Result};
use glam::Vec3;
use raypick_io::{obj::ObjOptions, LoadOptions, Model};

/// An indexed triangle mesh: triangle `i` is `indices[i]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions.
    pub vertices: Vec<Vec3>,
    /// Vertex indices of each triangle (`v0, v1, v2`, counter-clockwise seen from the front).
    pub indices: Vec<[u32; 3]>,
}

impl Mesh {
    /// The three corners of triangle `i`.
    #[inline]
    pub fn triangle(&self, i: usize) -> [Vec3; 3] {
        let [a, b, c] = self.indices[i];
        [
            self.vertices[a as usize],
            self.vertices[b as usize],
            self.vertices[c as usize],
        ]
    }

    /// Number of triangles.
    pub fn num_triangles(&self) -> usize {
        self.indices.len()
    }

    /// The bounding box of the vertices as `(min, max)` (both `Vec3::ZERO` for an empty mesh).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        if self.vertices.is_empty() {
            return (Vec3::ZERO, Vec3::ZERO);
        }
        self.vertices
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            })
    }

    /// One soup from a parsed model: its meshes in order when it has no instances, else one
    /// transformed copy per instance, in instance order.
    ///
    /// Fails when the soup would need more than `u32::MAX` vertices.
    pub fn from_model(model: &Model) -> Result<Self> {
        let mut soup = Mesh::default();
        let mut append = |vertices: &mut dyn Iterator<Item = Vec3>, triangles: &[[u32; 3]]| {
            let base = u32::try_from(soup.vertices.len()).ok();
            soup.vertices.extend(vertices);
            let (Some(base), true) = (base, u32::try_from(soup.vertices.len()).is_ok()) else {
                bail!("more than {} vertices", u32::MAX);
            };
            soup.indices
                .extend(triangles.iter().map(|t| t.map(|i| i + base)));
            Ok(())
        };
        if model.instances.is_empty() {
            for mesh in &model.meshes {
                append(&mut mesh.vertices.iter().copied(), &mesh.triangles)?;
            }
        } else {
            for instance in &model.instances {
                let mesh = model.meshes.get(instance.mesh).with_context(|| {
                    format!("instance `{}`: no mesh {}", instance.name, instance.mesh)
                })?;
                let m = instance.world_from_object;
                append(
                    &mut mesh.vertices.iter().map(|&p| m.transform_point3(p)),
                    &mesh.triangles,
                )?;
            }
        }
        Ok(soup)
    }
}

/// Loads any file raypick-io reads (OBJ, glTF/GLB, PLY, STL) as one soup (see [`Mesh::from_model`]).
pub fn load_mesh(path: &Path) -> Result<Mesh> {
    let options = LoadOptions {
        obj: ObjOptions {
            split_groups: false,
            ..ObjOptions::default()
        },
        ..LoadOptions::default()
    };
    let (_, model) = raypick_io::parse_file(path, &options)?;
    Mesh::from_model(&model).with_context(|| format!("flattening {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Affine3A;
    use raypick_io::{InstanceData, MeshData};

    fn data(dx: f32) -> MeshData {
        MeshData {
            name: format!("m{dx}"),
            vertices: vec![
                Vec3::new(dx, 0.0, 0.0),
                Vec3::new(dx + 1.0, 0.0, 0.0),
                Vec3::new(dx, 1.0, 0.0),
            ],
            triangles: vec![[0, 1, 2], [2, 1, 0]],
        }
    }

    #[test]
    fn concatenates_meshes_in_order() {
        let model = Model {
            meshes: vec![data(0.0), data(5.0)],
            ..Model::default()
        };
        let soup = Mesh::from_model(&model).unwrap();
        assert_eq!(soup.vertices.len(), 6);
        assert_eq!(
            soup.indices,
            vec![[0, 1, 2], [2, 1, 0], [3, 4, 5], [5, 4, 3]]
        );
        assert_eq!(soup.triangle(2)[0], Vec3::new(5.0, 0.0, 0.0));
        assert_eq!(soup.bounds(), (Vec3::ZERO, Vec3::new(6.0, 1.0, 0.0)));
    }

    #[test]
    fn flattens_instances_with_their_transforms() {
        let model = Model {
            meshes: vec![data(0.0), data(5.0)],
            instances: vec![
                InstanceData {
                    name: "a".into(),
                    mesh: 1,
                    world_from_object: Affine3A::from_translation(Vec3::Z),
                },
                InstanceData {
                    name: "b".into(),
                    mesh: 1,
                    world_from_object: Affine3A::from_scale(Vec3::splat(2.0)),
                },
            ],
            ..Model::default()
        };
        let soup = Mesh::from_model(&model).unwrap();
        assert_eq!(soup.num_triangles(), 4);
        assert_eq!(soup.triangle(0)[0], Vec3::new(5.0, 0.0, 1.0));
        assert_eq!(soup.triangle(2)[1], Vec3::new(12.0, 0.0, 0.0));
        let broken = Model {
            instances: vec![InstanceData {
                name: "c".into(),
                mesh: 7,
                world_from_object: Affine3A::IDENTITY,
            }],
            ..model
        };
        assert!(format!("{:#}", Mesh::from_model(&broken).unwrap_err()).contains("no mesh 7"));
    }

    #[test]
    fn loads_the_bunny_with_the_documented_counts() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/obj/stanford-bunny.obj"
        );
        let mesh = load_mesh(Path::new(path)).unwrap();
        assert_eq!(mesh.vertices.len(), 35_947);
        assert_eq!(mesh.num_triangles(), 69_451);
        // Triangle 0 is the first `f` line.
        let text = std::fs::read_to_string(path).unwrap();
        let first_f: Vec<u32> = text
            .lines()
            .find(|l| l.starts_with("f "))
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(|t| t.parse::<u32>().unwrap() - 1)
            .collect();
        assert_eq!(mesh.indices[0].to_vec(), first_f);
    }

    #[test]
    fn merges_obj_groups_into_one_soup() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/scenes/sponza-dabrovic.obj"
        );
        assert_eq!(load_mesh(Path::new(path)).unwrap().num_triangles(), 66_454);
    }
}
