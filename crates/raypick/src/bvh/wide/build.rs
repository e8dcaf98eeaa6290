//! A wide tree from the binary one: [`WideBvh::from_binary`] collapses the binary SAH tree with
//! the collapse that minimizes the wide tree's SAH cost ([`crate::bvh::collapse`]: dynamic
//! programming over the binary nodes, Ylitie, Karras, Laine, "Efficient Incoherent Ray Traversal
//! on GPUs Through Compressed Wide BVHs", HPG 2017), which decides which binary nodes become wide
//! nodes, which subtrees share a node's lanes, and which neighbouring small leaves merge. The
//! builder still sees only boxes and centroids ([`Bvh::build`]).

use glam::Vec3;

use super::node::WideNode;
use super::occlusion;
use super::WideBvh;
use crate::bvh::collapse::{subtree_prims, CollapseCosts, Lane, Plan};
use crate::bvh::{BuildConfig, Bvh, LEAF_ALIGN};
use crate::Aabb;

impl<const W: usize> WideBvh<W> {
    /// Builds the binary BVH ([`Bvh::build`]) and collapses it with the costs of `config`.
    pub fn build(boxes: &[Aabb], centroids: &[Vec3], config: BuildConfig) -> Self {
        let bvh = Bvh::build(boxes, centroids, config);
        Self::collapse(&bvh, config, Some(&|p| boxes[p as usize]))
    }

    /// [`WideBvh::build`] from each primitive's box and centroid ([`Bvh::build_by`]).
    pub fn build_by(
        n: usize,
        prim: impl Fn(usize) -> (Aabb, Vec3) + Sync + Send,
        config: BuildConfig,
    ) -> Self {
        let bvh = Bvh::build_by(n, &prim, config);
        Self::collapse(&bvh, config, Some(&|p| prim(p as usize).0))
    }

    /// Collapses a binary BVH built with spatial splits ([`Bvh::build_spatial`]) over
    /// `num_prims` primitives, whose order may name a primitive more than once.
    /// `prim_box` gives each primitive's whole box (by id), which each leaf clips to its own.
    pub fn from_spatial(
        bvh: &Bvh,
        num_prims: usize,
        config: BuildConfig,
        prim_box: &dyn Fn(u32) -> Aabb,
    ) -> Self {
        Self {
            num_prims,
            repeats: true,
            ..Self::collapse(bvh, config, Some(prim_box))
        }
    }

    /// Collapses a binary BVH (see [`crate::bvh::wide`]) with the costs of
    /// [`BuildConfig::BALANCED`].
    pub fn from_binary(bvh: &Bvh) -> Self {
        Self::from_binary_with(bvh, BuildConfig::BALANCED)
    }

    /// Collapses a binary BVH with the node and leaf costs of `config` (see
    /// [`crate::bvh::wide`]). A node's lanes are ordered for walks that stop at the first hit
    /// (the module `occlusion`, from the leaves' boxes: the primitives' are not at hand), and every leaf
    /// starts at a multiple of [`LEAF_ALIGN`] in the primitive order, padded with
    /// [`WideBvh::PADDING`].
    pub fn from_binary_with(bvh: &Bvh, config: BuildConfig) -> Self {
        Self::collapse(bvh, config, None)
    }

    /// [`Self::from_binary_with`], with the primitives' boxes (by id) where the caller has them,
    /// for the lane order of walks that stop at the first hit ([`super::occlusion`]).
    fn collapse(bvh: &Bvh, config: BuildConfig, prim_box: Option<&dyn Fn(u32) -> Aabb>) -> Self {
        let mut wide = Self {
            nodes: Vec::new(),
            prim_ids: Vec::with_capacity(bvh.num_prims() + bvh.num_prims() / 2),
            num_prims: bvh.num_prims(),
            repeats: false,
        };
        if bvh.nodes.is_empty() {
            return wide;
        }
        let costs = CollapseCosts::of(&config);
        let plan = Plan::<W>::new(bvh, costs);
        let keys = occlusion::stop_per_work(bvh, costs, prim_box);
        wide.nodes.push(WideNode::EMPTY);
        wide.fill(bvh, &plan, &keys, 0, 0);
        wide.nodes.shrink_to_fit();
        wide.prim_ids.shrink_to_fit();
        wide
    }

    /// Fills wide node `at` with the lanes `plan` gives binary node `binary`, and their nodes
    /// after it (depth first).
    fn fill(&mut self, bvh: &Bvh, plan: &Plan<W>, keys: &[f32], at: usize, binary: usize) {
        let area = |lane: &Lane| bvh.nodes[lane.node].bounds().surface_area();
        // The lanes by decreasing `keys` (a subtree's chance to stop a ray per unit of work,
        // [`super::occlusion`]), ties by decreasing box area: a walk in node order (any hit, all
        // hits, counts) takes the first hit lane.
        let mut children = plan.children(bvh, binary);
        children.sort_by(|a, b| {
            keys[b.node]
                .total_cmp(&keys[a.node])
                .then(area(b).total_cmp(&area(a)))
        });
        // The memory, though, by decreasing box area: the depth-first layout puts the child most
        // rays enter (of every query) next to this node, and its leaves next to each other.
        let mut by_area: Vec<usize> = (0..children.len()).collect();
        by_area.sort_by(|&a, &b| area(&children[b]).total_cmp(&area(&children[a])));
        for lane in by_area {
            let child = children[lane];
            self.nodes[at].set_child_bounds(lane, bvh.nodes[child.node].bounds());
            if child.leaf {
                let padded = self.prim_ids.len().next_multiple_of(LEAF_ALIGN);
                self.prim_ids.resize(padded, Self::PADDING);
                subtree_prims(bvh, child.node, &mut self.prim_ids);
                self.nodes[at].index[lane] = padded as u32;
                self.nodes[at].count[lane] = (self.prim_ids.len() - padded) as u32;
            } else {
                let index = self.nodes.len();
                self.nodes.push(WideNode::EMPTY);
                self.nodes[at].index[lane] = index as u32;
                self.fill(bvh, plan, keys, index, child.node);
            }
        }
    }
}
