// raypick as three.js's raycaster, with three-mesh-bvh's API so its users know it already:
//
//   import * as THREE from 'three';
//   import { init } from 'raypick';
//   import { computeBoundsTree, disposeBoundsTree, acceleratedRaycast } from 'raypick/three';
//   await init();
//   THREE.BufferGeometry.prototype.computeBoundsTree = computeBoundsTree;
//   THREE.BufferGeometry.prototype.disposeBoundsTree = disposeBoundsTree;
//   THREE.Mesh.prototype.raycast = acceleratedRaycast;
//   mesh.geometry.computeBoundsTree();
//   raycaster.setFromCamera(pointer, camera);
//   const hits = raycaster.intersectObjects(scene.children);   // as three.js answers, faster
//
// A geometry's bounds tree is a raypick Scene holding its triangles in the geometry's own space
// (indexed or not; the index buffer is not reordered). A raycast moves three's world ray into the
// object's space with the inverse of `matrixWorld`, without renormalizing, so the engine's t is
// the world distance and `raycaster.near / far` bound it directly; the hit point goes back to world
// space and `distance` is measured there, as three.js does. Groups, `drawRange`, `material.side`
// (one material or one per group), `raycaster.firstHitOnly`, and InstancedMesh (three's own loop
// over instances calls the patched Mesh raycast) are honoured. Morph targets and skinning are not
// (three-mesh-bvh ignores them too): rebuild or `refit()` after moving vertices.
//
// Edges: the engine's test is watertight with closed edges, as three.js's own: a ray through an
// edge or vertex hits every triangle that has it (the first hit names the one with the smallest
// index).

import { BackSide, DoubleSide, FrontSide, Matrix3, Matrix4, Mesh, Vector2, Vector3 } from 'three';

import { RaypickError, SceneBuilder } from './index.js';

const originalRaycast = Mesh.prototype.raycast;

const _inverse = new Matrix4();
const _normalMatrix = new Matrix3();
const _origin = new Vector3();
const _dir = new Vector3();

const ALL = 0xffffffff;

function sideName(side) {
  if (side === FrontSide) return 'front';
  if (side === BackSide) return 'back';
  if (side === DoubleSide) return 'both';
  throw new RaypickError(`material.side: ${side} is not FrontSide, BackSide or DoubleSide`, { field: 'material.side' });
}

/** The geometry's vertex positions as x, y, z floats (any attribute type, interleaved or not). */
function positionsOf(geometry) {
  const attr = geometry.attributes.position;
  if (attr === undefined) throw new RaypickError('geometry has no position attribute', { field: 'positions' });
  if (attr.isInterleavedBufferAttribute !== true && attr.array instanceof Float32Array && attr.itemSize === 3 && attr.normalized !== true) {
    return attr.array.subarray(0, 3 * attr.count);
  }
  const out = new Float32Array(3 * attr.count);
  for (let i = 0; i < attr.count; i++) {
    out[3 * i] = attr.getX(i);
    out[3 * i + 1] = attr.getY(i);
    out[3 * i + 2] = attr.getZ(i);
  }
  return out;
}

/** The number of index (or vertex, when not indexed) entries three.js walks triangles over. */
function entryCount(geometry) {
  return geometry.index !== null ? geometry.index.count : geometry.attributes.position.count;
}

/**
 * A geometry's bounds tree: its triangles in a raypick Scene. Made by `computeBoundsTree`;
 * `scene` is the raypick Scene (geometry id 0; primitive i is triangle i, three's faceIndex).
 */
export class MeshBoundsTree {
  /**
   * @param {import('three').BufferGeometry} geometry
   * @param {object} [options] `quality`: the build quality, 'fast' (the default here),
   * 'balanced', 'high' or 'spatial' (SceneBuilder's). 'fast' because three-mesh-bvh's users build trees
   * as geometries load, often at run time, and its own default is its quickest build; raypick's
   * fast trees still cast at least 4× three-mesh-bvh's rays per second (BENCHMARKS.md).
   * three-mesh-bvh's options (`strategy`, `maxLeafTris`, …) are accepted and ignored.
   */
  constructor(geometry, options = {}) {
    this.geometry = geometry;
    const positions = positionsOf(geometry);
    const b = new SceneBuilder({ quality: options.quality ?? 'fast' });
    try {
      if (geometry.index !== null) {
        const index = geometry.index;
        const whole = index.count - (index.count % 3);
        const data = index.isInterleavedBufferAttribute ? Uint32Array.from({ length: whole }, (_, i) => index.getX(i)) : index.array.subarray(0, whole);
        b.addMesh(positions, data);
      } else {
        b.addMesh(positions.subarray(0, positions.length - (positions.length % 9)));
      }
    } catch (e) {
      b.dispose();
      throw e;
    }
    /** The raypick Scene. */
    this.scene = b.build();
    this.vertexCount = positions.length / 3;
  }

  /**
   * Moves the tree to the geometry's current vertex positions (same count): the engine refits
   * its BVH rather than rebuilding it.
   */
  refit() {
    const positions = positionsOf(this.geometry);
    this.scene.updateMesh(0, positions.subarray(0, 3 * this.vertexCount));
  }

  /** Frees the engine's copy of the geometry. */
  dispose() {
    this.scene.dispose();
  }

  /** The primitive ranges and their sides that `material` and the geometry's groups and draw
   * range select, as query options. */
  #selection(material) {
    const g = this.geometry;
    const count = entryCount(g);
    const drawStart = g.drawRange.start;
    const drawEnd = Math.min(count, g.drawRange.start + g.drawRange.count);
    const ranges = [];
    const groupOf = [];
    if (Array.isArray(material)) {
      for (const group of g.groups) {
        const m = material[group.materialIndex];
        if (m === undefined) continue;
        const start = Math.max(group.start, drawStart);
        const end = Math.min(drawEnd, group.start + group.count);
        if (end <= start) continue;
        ranges.push({ start: Math.floor(start / 3), end: Math.ceil(end / 3), side: sideName(m.side) });
        groupOf.push(group.materialIndex);
      }
      return { options: { ranges }, ranges, groupOf };
    }
    const side = sideName(material.side);
    const start = Math.max(0, drawStart);
    const all = start === 0 && drawEnd >= count;
    if (all) {
      // The whole mesh with one material: the engine's own culling, no filter.
      const cull = side === 'front' ? 'back' : side === 'back' ? 'front' : 'none';
      return { options: { cull }, ranges: null, groupOf: null };
    }
    ranges.push({ start: Math.floor(start / 3), end: Math.ceil(drawEnd / 3), side });
    return { options: { ranges }, ranges, groupOf: null };
  }

  /**
   * three.js's `Mesh.raycast` for `object` (a Mesh with this geometry): its intersections are
   * pushed onto `intersects` (closest only with `raycaster.firstHitOnly`).
   */
  raycastObject3D(object, raycaster, intersects = []) {
    const material = object.material;
    if (material === undefined) return intersects;
    _inverse.copy(object.matrixWorld).invert();
    _origin.copy(raycaster.ray.origin).applyMatrix4(_inverse);
    _normalMatrix.setFromMatrix4(_inverse);
    _dir.copy(raycaster.ray.direction).applyMatrix3(_normalMatrix);
    const sel = this.#selection(material);
    if (sel.ranges !== null && sel.ranges.length === 0) return intersects;
    const options = { ...sel.options, tNear: raycaster.near, tFar: raycaster.far, mask: ALL };
    const hits = raycaster.firstHitOnly === true
      ? [this.scene.intersect(_origin, _dir, options)].filter((h) => h !== null)
      : this.scene.intersectAll(_origin, _dir, { ...options, edges: 'closed' });
    for (const h of hits) {
      const hit = this.#intersection(h, object, raycaster, sel);
      if (hit !== null) intersects.push(hit);
    }
    return intersects;
  }

  /** A raypick hit as three.js's Intersection. */
  #intersection(h, object, raycaster, sel) {
    const point = new Vector3(h.point[0], h.point[1], h.point[2]).applyMatrix4(object.matrixWorld);
    const distance = raycaster.ray.origin.distanceTo(point);
    if (distance < raycaster.near || distance > raycaster.far) return null;
    const g = this.geometry;
    const first = 3 * h.prim;
    const index = g.index;
    const a = index !== null ? index.getX(first) : first;
    const b = index !== null ? index.getX(first + 1) : first + 1;
    const c = index !== null ? index.getX(first + 2) : first + 2;
    const barycoord = new Vector3(1 - h.u - h.v, h.u, h.v);
    let materialIndex = 0;
    if (sel.groupOf !== null) {
      // The first group that holds the triangle and whose side accepts the hit.
      const facing = h.normal[0] * _dir.x + h.normal[1] * _dir.y + h.normal[2] * _dir.z;
      const k = sel.ranges.findIndex((r) => r.start <= h.prim && h.prim < r.end &&
        (r.side === 'both' || (r.side === 'front' ? facing < 0 : facing > 0)));
      materialIndex = sel.groupOf[Math.max(k, 0)];
    }
    const intersection = {
      distance,
      point,
      object,
      face: { a, b, c, normal: new Vector3(h.normal[0], h.normal[1], h.normal[2]), materialIndex },
      faceIndex: h.prim,
      barycoord,
    };
    const { uv, uv1, normal } = g.attributes;
    if (uv) intersection.uv = interpolate(uv, a, b, c, barycoord, new Vector2());
    if (uv1) intersection.uv1 = interpolate(uv1, a, b, c, barycoord, new Vector2());
    if (normal) {
      intersection.normal = interpolate(normal, a, b, c, barycoord, new Vector3());
      if (intersection.normal.dot(_dir) > 0) intersection.normal.multiplyScalar(-1);
    }
    return intersection;
  }
}

/** `attr` at barycentric `w` of vertices a, b, c (three's Triangle.getInterpolatedAttribute). */
function interpolate(attr, a, b, c, w, target) {
  target.setScalar(0);
  const add = (i, weight) => {
    target.x += attr.getX(i) * weight;
    target.y += attr.getY(i) * weight;
    if (target.isVector3) target.z += attr.getZ(i) * weight;
  };
  add(a, w.x);
  add(b, w.y);
  add(c, w.z);
  return target;
}

/**
 * For `THREE.BufferGeometry.prototype.computeBoundsTree`: builds `this.boundsTree` (a
 * MeshBoundsTree) and returns it. `init()` must have completed.
 */
export function computeBoundsTree(options = {}) {
  this.boundsTree = new MeshBoundsTree(this, options);
  return this.boundsTree;
}

/** For `THREE.BufferGeometry.prototype.disposeBoundsTree`: frees and removes `this.boundsTree`. */
export function disposeBoundsTree() {
  this.boundsTree?.dispose?.();
  this.boundsTree = null;
}

/**
 * For `THREE.Mesh.prototype.raycast`: through the geometry's bounds tree when it has one, else
 * three.js's own raycast. The intersections are three.js's: distance, point (world), object,
 * face {a, b, c, normal, materialIndex}, faceIndex, barycoord, and uv, uv1, normal when the
 * geometry has them; InstancedMesh adds instanceId.
 */
export function acceleratedRaycast(raycaster, intersects) {
  const tree = this.geometry?.boundsTree;
  if (tree && typeof tree.raycastObject3D === 'function') {
    tree.raycastObject3D(this, raycaster, intersects);
  } else {
    originalRaycast.call(this, raycaster, intersects);
  }
}
