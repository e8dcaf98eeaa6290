//! Assembling a decoded scene: every geometry checked as the builder checks its input, every
//! tree validated against the geometry (the meshes' tree as its triangle blocks are filled), and
//! what the file does not store computed as the build computes it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use glam::Vec3;

use super::read::{RawGeometry, RawScene};
use super::{Place, SceneFileError};
use crate::bvh::wide::{BlockLeaves, NodeLayout, WideTree};
use crate::scene::builder::{check_geometry, check_total, instance_depth, repeats, top_level};
use crate::scene::{
    fill_each, frame_origin, join, sphere_boxes, Accel, Geometry, Instance, InvalidBvh, MeshAccel,
    MeshBvh, MeshParts, Scene, SpheresAccel, TriMesh,
};
use crate::simd::{Tri4, LANES};
use crate::Aabb;

/// The saved scene from the decoded scenes of a file (`raw`, at least one, the saved scene last),
/// each assembled after the scenes its instances place.
pub(super) fn scene(raw: Vec<RawScene>) -> Result<Scene, SceneFileError> {
    let last = raw.len().saturating_sub(1);
    let mut placed: Vec<Arc<Scene>> = Vec::with_capacity(last);
    for (index, scene) in raw.into_iter().enumerate() {
        let scene = assemble(scene, index as u32, &placed)?;
        if index == last {
            return Ok(scene);
        }
        placed.push(Arc::new(scene));
    }
    Err(SceneFileError::BadValue {
        at: Place {
            scene: None,
            geometry: None,
            field: "scene count",
        },
        problem: "0: a file holds at least the saved scene".into(),
    })
}

/// Scene number `index` from its decoded form, the scenes before it assembled (`placed`): every
/// geometry checked, every tree validated, the rest computed as the build computes it.
fn assemble(raw: RawScene, index: u32, placed: &[Arc<Scene>]) -> Result<Scene, SceneFileError> {
    let geometry_error = |error| SceneFileError::Geometry {
        scene: index,
        error,
    };
    let invalid = |geom, error| SceneFileError::InvalidBvh {
        scene: index,
        error: InvalidBvh { geom, error },
    };
    let geometries: Vec<Geometry> = raw
        .geometries
        .into_iter()
        .map(|g| match g {
            RawGeometry::Mesh(m) => Geometry::Mesh(m),
            RawGeometry::Spheres(s) => Geometry::Spheres(s),
            RawGeometry::Instance {
                scene,
                world_from_object,
                name,
                mask,
            } => Geometry::Instance(Instance {
                // `decode` checked `scene < index`, and `placed` holds scenes `0..index`.
                scene: placed[scene as usize].clone(),
                world_from_object,
                name,
                mask,
            }),
        })
        .collect();
    let mut sphere_trees = raw.spheres.into_iter();
    let mut accels = Vec::with_capacity(geometries.len());
    let mut parts = Vec::new();
    for (id, g) in geometries.iter().enumerate() {
        let id = id as u32;
        let instance = check_geometry(id, g).map_err(geometry_error)?;
        accels.push(match g {
            Geometry::Mesh(m) => {
                parts.push((id, m, m.mask));
                Accel::Mesh
            }
            Geometry::Spheres(s) => {
                // `decode` read one tree per sphere set.
                let bvh = sphere_trees.next().unwrap_or_default();
                bvh.validate(&sphere_boxes(s))
                    .map_err(|e| invalid(Some(id), e))?;
                Accel::Spheres(SpheresAccel { bvh })
            }
            Geometry::Instance(_) => match instance {
                Some(accel) => Accel::Instance(accel),
                None => unreachable!("check_geometry returns an instance's accel"),
            },
        });
    }
    check_total(&geometries, &parts).map_err(geometry_error)?;
    let meshes: Vec<&TriMesh> = parts.iter().map(|&(_, m, _)| m).collect();
    let total = meshes.iter().map(|m| m.indices.len()).sum::<usize>();
    // Three passes that need nothing of each other, on all cores: the meshes' box (a pass over
    // their triangles), and the mesh tree's checks that read no triangle: its counts and its
    // order (which must name each triangle once before the blocks are filled from it), and the
    // pass over its nodes. The first two take about as long as the third, so they share a core.
    let tree = raw.meshes.as_ref();
    let ((meshes_bounds, tree_counts), tree_leaves) = join(
        || {
            join(
                || meshes.iter().fold(Aabb::EMPTY, |b, m| b.union(m.bounds())),
                || tree.map(|tree| tree.bvh.check_counts(&tree.ids, total)),
            )
        },
        || tree.and_then(|tree| tree.bvh.block_leaves(&tree.ids)),
    );
    let mesh_accel = match (parts.first(), raw.meshes, tree_counts) {
        (None, None, _) => None,
        (Some(&(first, _, _)), Some(tree), Some(counts)) => {
            let tree_kind_ok = matches!(
                (&tree.bvh, raw.config.compact),
                (MeshBvh::Wide(_), false) | (MeshBvh::Quantized(_), true)
            );
            if !tree_kind_ok {
                return Err(SceneFileError::BadValue {
                    at: Place {
                        scene: Some(index),
                        geometry: None,
                        field: "mesh tree kind",
                    },
                    problem: format!(
                        "the tree's kind does not match the setting compact = {}",
                        raw.config.compact
                    ),
                });
            }
            counts.map_err(|e| invalid(Some(first), e))?;
            let mut accel = MeshAccel {
                offset: frame_origin(&meshes_bounds),
                blocks: Vec::new(),
                bvh: tree.bvh,
                parts: MeshParts::new(&parts),
                dipoles: OnceLock::new(),
                repeated: OnceLock::new(),
            };
            // The rest of the tree is checked as the blocks are filled, and when that finds a
            // fault the reference walk names it, against each triangle's box read back from its
            // block.
            if !store_checked(&mut accel, &meshes, &tree.ids, tree_leaves.as_ref()) {
                accel
                    .bvh
                    .validate_by(&tree.ids, total, |prim, slot| {
                        accel.slot_box(&meshes, slot, prim)
                    })
                    .map_err(|e| invalid(Some(first), e))?;
            }
            Some(accel)
        }
        (first, _, _) => {
            return Err(SceneFileError::BadValue {
                at: Place {
                    scene: Some(index),
                    geometry: None,
                    field: "mesh tree kind",
                },
                problem: if first.is_some() {
                    "the scene has meshes but no mesh tree".into()
                } else {
                    "the scene has no mesh but a mesh tree".into()
                },
            })
        }
    };
    drop(parts);
    let (top_items, top_boxes, bounds) = top_level(&geometries, meshes_bounds);
    raw.top.validate(&top_boxes).map_err(|e| invalid(None, e))?;
    let instance_depth = instance_depth(&geometries);
    let repeats = repeats(mesh_accel.as_ref(), &geometries);
    Ok(Scene {
        geometries,
        accels,
        meshes: mesh_accel,
        top: raw.top,
        top_items,
        top_boxes,
        bounds,
        config: raw.config,
        instance_depth,
        repeats,
    })
}

/// Fills `accel`'s blocks from `meshes` in the order `ids` (checked to name each triangle once,
/// or at least once in a tree with spatial splits)
/// and checks its tree on the way: `true` when the tree passes every check of its validation
/// (`leaves`, the pass over its nodes, then [`WideTree::check_block`] on each block with the
/// triangles just read), `false` when one fails (`leaves` is `None` when the pass
/// over the nodes failed). The blocks are filled either way.
fn store_checked(
    accel: &mut MeshAccel,
    meshes: &[&TriMesh],
    ids: &[u32],
    leaves: Option<&BlockLeaves>,
) -> bool {
    let (parts, offset) = (&accel.parts, accel.offset);
    let (blocks, valid) = match &accel.bvh {
        MeshBvh::Wide(tree) => fill_checked(tree, leaves, parts, offset, meshes, ids),
        MeshBvh::Quantized(tree) => fill_checked(tree, leaves, parts, offset, meshes, ids),
    };
    accel.blocks = blocks;
    valid
}

fn fill_checked<N: NodeLayout + Sync>(
    tree: &WideTree<N>,
    leaves: Option<&BlockLeaves>,
    parts: &MeshParts,
    offset: Vec3,
    meshes: &[&TriMesh],
    ids: &[u32],
) -> (Vec<Tri4>, bool) {
    let failed = AtomicBool::new(leaves.is_none());
    let blocks = fill_each(ids.len().div_ceil(LANES), |b, block: &mut Tri4| {
        let slots = &ids[b * LANES..(b * LANES + LANES).min(ids.len())];
        let leaf = leaves.and_then(|leaves| tree.check_block(leaves, b, slots));
        if leaves.is_some() && leaf.is_none() {
            failed.store(true, Ordering::Relaxed);
        }
        let leaf = leaf.unwrap_or(Aabb::EMPTY);
        MeshAccel::block(parts, offset, meshes, ids, b, block, |&[v0, v1, v2]| {
            // The triangle's box lies inside the leaf's (a box of finite vertices, as the
            // geometry checks made them, is never empty); comparisons alone, so the sign a
            // zero corner takes does not matter. `Vec3`, not `Vec3A`: see `MeshAccel::block`.
            // A tree with spatial splits holds pieces of triangles: the box meets the leaf's.
            let (lo, hi) = (v0.min(v1).min(v2), v0.max(v1).max(v2));
            let inside = if tree.repeats {
                hi.cmpge(leaf.min) & lo.cmple(leaf.max)
            } else {
                lo.cmpge(leaf.min) & hi.cmple(leaf.max)
            };
            if !inside.all() {
                failed.store(true, Ordering::Relaxed);
            }
        })
    });
    (blocks, !failed.into_inner())
}
