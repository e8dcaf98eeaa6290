//! Writing a scene file: the placed scenes first (each once), the saved scene last.

use std::collections::HashMap;
use std::io::Write;

use super::{
    checksum, kind, tree, SceneFileError, BYTE_ORDER_MARKER, HEADER_BYTES, MAGIC, VERSION,
};
use crate::bvh::quantized::QuantNode;
use crate::bvh::wide::WideNode;
use crate::bvh::{BuildConfig, Bvh};
use crate::scene::{Accel, Geometry, MeshBvh, Scene};

/// The payload under construction.
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    fn u32s(&mut self, values: &[u32]) {
        self.len(values.len());
        self.out.reserve(4 * values.len());
        for &v in values {
            self.u32(v);
        }
    }

    fn f32s(&mut self, values: &[f32]) {
        self.len(values.len());
        self.out.reserve(4 * values.len());
        for &v in values {
            self.f32(v);
        }
    }

    fn vec3s(&mut self, values: &[glam::Vec3]) {
        self.len(values.len());
        self.out.reserve(12 * values.len());
        for v in values {
            for c in v.to_array() {
                self.f32(c);
            }
        }
    }

    fn name(&mut self, name: Option<&str>) {
        match name {
            None => self.u8(0),
            Some(n) => {
                self.u8(1);
                self.len(n.len());
                self.out.extend_from_slice(n.as_bytes());
            }
        }
    }

    fn config(&mut self, c: &BuildConfig) {
        self.u64(c.bins as u64);
        self.u64(c.max_leaf_size as u64);
        self.f32(c.traversal_cost);
        self.f32(c.intersection_cost);
        self.u64(c.block_size as u64);
        self.u64(c.sweep_threshold as u64);
        self.u64(c.parallel_threshold as u64);
        self.u8(u8::from(c.compact));
        self.f32(c.reinsertion_batch);
        self.u64(c.reinsertion_passes as u64);
        self.u8(u8::from(c.longest_axis_only));
        self.u8(u8::from(c.spatial_splits));
    }

    fn binary_tree(&mut self, bvh: &Bvh) {
        self.len(bvh.nodes.len());
        self.out.reserve(super::NODE_BYTES * bvh.nodes.len());
        for n in &bvh.nodes {
            n.min.iter().for_each(|&v| self.f32(v));
            self.u32(n.index);
            n.max.iter().for_each(|&v| self.f32(v));
            self.u32(n.count);
        }
        self.u32s(&bvh.prim_ids);
    }

    fn wide_nodes(&mut self, nodes: &[WideNode<8>]) {
        self.len(nodes.len());
        self.out.reserve(super::WIDE_NODE_BYTES * nodes.len());
        for n in nodes {
            n.bounds.iter().flatten().for_each(|&v| self.f32(v));
            n.index.iter().for_each(|&v| self.u32(v));
            n.count.iter().for_each(|&v| self.u32(v));
        }
    }

    fn quant_nodes(&mut self, nodes: &[QuantNode]) {
        self.len(nodes.len());
        self.out.reserve(super::QUANT_NODE_BYTES * nodes.len());
        for n in nodes {
            n.boxes.anchor.iter().for_each(|&v| self.f32(v));
            n.boxes.scale.iter().for_each(|&v| self.f32(v));
            n.index.iter().for_each(|&v| self.u32(v));
            self.out.extend(n.boxes.q.iter().flatten());
            self.out.extend_from_slice(&n.count);
            self.u8(n.boxes.valid);
        }
    }

    /// One scene; `scene_index` maps each placed scene (by address) to its position in the file.
    fn scene(&mut self, scene: &Scene, scene_index: &HashMap<*const Scene, u32>) {
        self.config(&scene.config);
        self.u32(scene.geometries.len() as u32);
        for g in &scene.geometries {
            match g {
                Geometry::Mesh(m) => {
                    self.u8(kind::MESH);
                    self.u32(m.mask);
                    self.name(m.name());
                    self.vec3s(&m.vertices);
                    self.len(m.indices.len());
                    self.out.reserve(12 * m.indices.len());
                    m.indices.iter().flatten().for_each(|&i| self.u32(i));
                }
                Geometry::Spheres(s) => {
                    self.u8(kind::SPHERES);
                    self.u32(s.mask);
                    self.name(s.name());
                    self.vec3s(&s.centers);
                    self.f32s(&s.radii);
                }
                Geometry::Instance(inst) => {
                    self.u8(kind::INSTANCE);
                    self.u32(inst.mask);
                    self.name(inst.name());
                    self.u32(scene_index[&std::sync::Arc::as_ptr(&inst.scene)]);
                    let m = inst.world_from_object;
                    for col in [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis] {
                        col.to_array().iter().for_each(|&v| self.f32(v));
                    }
                    m.translation.to_array().iter().for_each(|&v| self.f32(v));
                }
            }
        }
        self.binary_tree(&scene.top);
        for a in &scene.accels {
            if let Accel::Spheres(s) = a {
                self.binary_tree(&s.bvh);
            }
        }
        match &scene.meshes {
            None => self.u8(tree::NONE),
            Some(acc) => {
                match &acc.bvh {
                    MeshBvh::Wide(b) => {
                        self.u8(tree::WIDE);
                        self.u8(u8::from(b.repeats));
                        self.u64(b.num_prims as u64);
                        self.wide_nodes(&b.nodes);
                    }
                    MeshBvh::Quantized(b) => {
                        self.u8(tree::QUANTIZED);
                        self.u8(u8::from(b.repeats));
                        self.u64(b.num_prims as u64);
                        self.quant_nodes(&b.nodes);
                    }
                }
                self.u32s(&acc.prim_ids());
            }
        }
    }
}

/// The scenes a save writes, in file order: each scene an instance of `root` places (its own
/// placed scenes before it, each once), then `root`.
fn scenes_in_order(root: &Scene) -> Vec<&Scene> {
    fn visit<'s>(
        scene: &'s Scene,
        seen: &mut HashMap<*const Scene, u32>,
        order: &mut Vec<&'s Scene>,
    ) {
        for g in &scene.geometries {
            if let Geometry::Instance(inst) = g {
                let ptr = std::sync::Arc::as_ptr(&inst.scene);
                if !seen.contains_key(&ptr) {
                    visit(&inst.scene, seen, order);
                    seen.insert(ptr, order.len() as u32);
                    order.push(&inst.scene);
                }
            }
        }
    }
    let mut seen = HashMap::new();
    let mut order = Vec::new();
    visit(root, &mut seen, &mut order);
    order.push(root);
    order
}

impl Scene {
    /// The scene as the bytes of a scene file (see the [module docs](super)): geometries, names,
    /// masks, settings and every BVH as built. [`Scene::from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let scenes = scenes_in_order(self);
        let index: HashMap<*const Scene, u32> = scenes
            .iter()
            .enumerate()
            .map(|(i, &s)| (s as *const Scene, i as u32))
            .collect();
        let mut w = Writer {
            out: Vec::with_capacity(HEADER_BYTES),
        };
        w.out.resize(HEADER_BYTES, 0);
        w.u32(scenes.len() as u32);
        for s in &scenes {
            w.scene(s, &index);
        }
        let mut out = w.out;
        let payload_len = (out.len() - HEADER_BYTES) as u64;
        let crc = checksum(&out[HEADER_BYTES..]);
        let header = &mut out[..HEADER_BYTES];
        header[0..8].copy_from_slice(&MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&BYTE_ORDER_MARKER.to_le_bytes());
        header[16..24].copy_from_slice(&payload_len.to_le_bytes());
        header[24..28].copy_from_slice(&crc.to_le_bytes());
        header[28..32].copy_from_slice(&0u32.to_le_bytes());
        out
    }

    /// Writes [`Scene::to_bytes`] to `writer`.
    ///
    /// # Errors
    /// [`SceneFileError::Io`] when the writer fails.
    pub fn save_to_writer(&self, mut writer: impl Write) -> Result<(), SceneFileError> {
        writer.write_all(&self.to_bytes())?;
        writer.flush()?;
        Ok(())
    }

    /// Saves the scene to a scene file at `path` (created or replaced); [`Scene::load`] reads it.
    ///
    /// # Errors
    /// [`SceneFileError::Io`] when the file cannot be written.
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> Result<(), SceneFileError> {
        std::fs::write(path, self.to_bytes())?;
        Ok(())
    }
}
