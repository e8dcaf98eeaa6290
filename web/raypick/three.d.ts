// Types of raypick's three.js adapter (three.js), in three-mesh-bvh's shape.

import type { BufferGeometry, Intersection, Material, Object3D, Raycaster } from 'three';
import type { BuildQuality, Scene } from './index.js';

/** Options of `computeBoundsTree`; three-mesh-bvh's own (`strategy`, `maxLeafTris`, …) are
 * accepted and ignored. */
export interface BoundsTreeOptions {
  /** The BVH build: SceneBuilder's `quality` ('fast' when absent, three-mesh-bvh's kind of
   * default: its quickest build). */
  quality?: BuildQuality;
  [threeMeshBvhOption: string]: unknown;
}

/** A geometry's triangles in a raypick Scene (primitive i is triangle i, three's faceIndex). */
export class MeshBoundsTree {
  constructor(geometry: BufferGeometry, options?: BoundsTreeOptions);
  readonly geometry: BufferGeometry;
  /** The raypick Scene (geometry id 0, in the geometry's own space). */
  readonly scene: Scene;
  /** Follows the geometry's moved vertices (same count). */
  refit(): void;
  dispose(): void;
  /** three.js's Mesh.raycast for `object` through this tree. */
  raycastObject3D(object: Object3D & { material: Material | Material[] }, raycaster: Raycaster, intersects?: Intersection[]): Intersection[];
}

/** For `THREE.BufferGeometry.prototype.computeBoundsTree`. `init()` must have completed. */
export function computeBoundsTree(this: BufferGeometry, options?: BoundsTreeOptions): MeshBoundsTree;
/** For `THREE.BufferGeometry.prototype.disposeBoundsTree`. */
export function disposeBoundsTree(this: BufferGeometry): void;
/** For `THREE.Mesh.prototype.raycast`: the bounds tree when there is one, else three.js's raycast. */
export function acceleratedRaycast(this: Object3D, raycaster: Raycaster, intersects: Intersection[]): void;

declare module 'three' {
  interface BufferGeometry {
    boundsTree?: MeshBoundsTree | null;
    computeBoundsTree(options?: BoundsTreeOptions): MeshBoundsTree;
    disposeBoundsTree(): void;
  }
  interface Raycaster {
    /** Only the closest intersection of each object. */
    firstHitOnly?: boolean;
  }
}
