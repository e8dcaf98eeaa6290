// Types of raypick's JavaScript API (index.js). Vectors are [x, y, z]; matrices are 16 numbers
// in column-major order (three.js's Matrix4.elements); window coordinates are continuous pixels
// from the top-left corner (pixel (i, j)'s centre is (i + 0.5, j + 0.5)).

/** A point or direction: an array (or typed array) of three numbers, or an {x, y, z} object. */
export type Vec3Like = ArrayLike<number> | { x: number; y: number; z: number };
export type Vec3 = [number, number, number];
/** 16 numbers, column-major, or an object with them in `elements` (three.js's Matrix4). */
export type Mat4Like = ArrayLike<number> | { elements: ArrayLike<number> };

/** The source of the module: bytes, a URL or path, a fetch Response, or a compiled module. */
export type WasmSource = ArrayBuffer | ArrayBufferView | URL | string | Response | WebAssembly.Module;

/** Loads the WebAssembly module (default: raypick.wasm beside index.js). Call once first. */
export function init(source?: WasmSource | Promise<WasmSource>): Promise<void>;
/** `init` from bytes or a compiled module, synchronously. */
export function initSync(source: ArrayBuffer | ArrayBufferView | WebAssembly.Module): void;
/** Objects (buffers, builders, scenes, cameras) the module holds: for leak checks. */
export function liveObjects(): number;

export type RaypickErrorKind = 'argument' | 'handle' | 'build' | 'scene-file' | 'camera' | 'out-of-memory' | 'unknown';

/** What every raypick call throws for bad input. */
export class RaypickError extends Error {
  constructor(message: string, options?: { kind?: RaypickErrorKind; field?: string });
  readonly name: 'RaypickError';
  /** What went wrong. */
  readonly kind: RaypickErrorKind;
  /** The argument at fault ('positions', 'indices', 'rays', 'worldFromObject', …), or ''. */
  readonly field: string;
}

export type Cull = 'none' | 'back' | 'front';
export type Side = 'both' | 'front' | 'back';

/** A range of primitive ids `[start, end)` and the faces that count there. */
export interface PrimRange {
  start: number;
  end: number;
  side?: Side;
}

export interface QueryOptions {
  /** The smallest accepted t (default 0). */
  tNear?: number;
  /** The largest accepted t (default Infinity). */
  tFar?: number;
  /** A geometry is considered when `geometry.mask & mask` is not 0 (default 0xffffffff). */
  mask?: number;
  /** 'back' skips faces whose winding normal (v1-v0)x(v2-v0) points along the ray, 'front' the others. */
  cull?: Cull;
  /** Only these primitives (of every geometry: for scenes of one mesh), or `first, end, side` u32 triples. */
  ranges?: PrimRange[] | Uint32Array;
}

export interface AllHitsOptions extends QueryOptions {
  /** 'half-open' (default): an edge shared by triangles is crossed once; 'closed': every triangle that has the point. */
  edges?: 'half-open' | 'closed';
}

export interface MeshOptions {
  /** Default 0xffffffff. */
  mask?: number;
  name?: string;
}

/** A ray hit. */
export interface Hit {
  /** Ray parameter, in units of the direction. */
  t: number;
  /** Barycentric weight of the triangle's second vertex (0 for spheres). */
  u: number;
  /** Barycentric weight of the triangle's third vertex (0 for spheres). */
  v: number;
  /** Unit geometric normal, world space. */
  normal: Vec3;
  /** The world point. */
  point: Vec3;
  /** Triangle or sphere index in its geometry. */
  prim: number;
  /** Geometry id in the scene that holds the primitive (the innermost placed scene). */
  geom: number;
  /** The top-level instance's geometry id, or null. */
  instance: number | null;
  /** Every instance on the way to the primitive, outermost first. */
  instancePath: number[];
}

export interface Ray {
  origin: Vec3;
  dir: Vec3;
  tMin: number;
  tMax: number;
}

/** A pick: the hit, the pixel ray that found it (unit direction: t in world units from the near plane) and the pixel. */
export interface Pick extends Hit {
  ray: Ray;
  pixel: [number, number];
}

export interface ClosestPoint extends Omit<Hit, 't'> {
  distance: number;
}

/** The closest hits of a batch, one entry per ray. */
/** `intersectAllRays`' columns: ray i's hits are `offsets[i]` to `offsets[i + 1]` (exclusive), sorted by t. */
export interface AllHitsResult {
  /** n + 1 entries; `offsets[n]` is `hits`. */
  offsets: Uint32Array;
  t: Float32Array;
  u: Float32Array;
  v: Float32Array;
  geom: Int32Array;
  prim: Int32Array;
  /** -1 for a primitive no instance places. */
  instance: Int32Array;
  /** The number of hits of all rays. */
  hits: number;
}

export interface CastResult {
  /** Infinity on a miss. */
  t: Float32Array;
  u: Float32Array;
  v: Float32Array;
  /** -1 on a miss. */
  geom: Int32Array;
  /** -1 on a miss. */
  prim: Int32Array;
  /** -1 on a miss or for a primitive no instance places. */
  instance: Int32Array;
  /** The number of rays that hit. */
  hits: number;
}

export interface Bounds {
  min: Vec3;
  max: Vec3;
}

export interface GeometrySummary {
  id: number;
  kind: 'mesh' | 'spheres' | 'instance';
  name: string | null;
  mask: number;
  bounds: Bounds | null;
  triangles?: number;
  vertices?: number;
  spheres?: number;
  scene?: { geometries: number; totalTriangles: number };
}

export interface SceneSummary {
  bounds: Bounds | null;
  geometries: GeometrySummary[];
  /** Triangles of the scene's own meshes. */
  triangles: number;
  /** Triangles of every placed copy too. */
  totalTriangles: number;
  instanceDepth: number;
}

/** One mesh or sphere set as placed in the world. */
export interface RenderItem {
  kind: 'mesh' | 'spheres';
  /** Index into `meshes` or `sphereSets`. */
  data: number;
  /** What a hit on it reports as `geom`. */
  geom: number;
  /** What a hit on it reports as `instancePath`. */
  path: number[];
  pathNames: (string | null)[];
  name: string | null;
  mask: number;
  /** world_from_object, column-major. */
  matrix: Float32Array;
}

export interface RenderData {
  /** Distinct meshes; triangle i of `indices` is primitive i of hits. */
  meshes: { positions: Float32Array; indices: Uint32Array }[];
  /** Distinct sphere sets: x, y, z, radius per sphere. */
  sphereSets: { spheres: Float32Array }[];
  items: RenderItem[];
}

export type InsideMethod = 'parity' | 'winding' | 'winding-number';

/**
 * How the BVH is built: 'fast', 'balanced', 'high' or 'spatial' (the engine's BuildConfig::FAST,
 * BALANCED, HIGH_QUALITY, SPATIAL). Answers are the same; a better tree builds slower and casts
 * faster. 'spatial' (spatial splits) builds four to ten times longer than 'balanced': for scenes
 * built once and saved.
 */
export type BuildQuality = 'fast' | 'balanced' | 'high' | 'spatial';

export interface SceneBuilderOptions {
  /** The BVH build (default 'balanced'). */
  quality?: BuildQuality;
}

/** Collects meshes, spheres and instances (ids 0, 1, 2, … in order) and builds a Scene. */
export class SceneBuilder {
  constructor(options?: SceneBuilderOptions);
  /** A triangle mesh: x, y, z per vertex; three indices per triangle (none: consecutive triples). Its id. */
  addMesh(positions: Float32Array | ArrayLike<number>, indices?: Uint32Array | Uint16Array | ArrayLike<number> | null, options?: MeshOptions): number;
  /** Spheres: x, y, z per centre, one radius each. Its id. */
  addSpheres(centers: Float32Array | ArrayLike<number>, radii: Float32Array | ArrayLike<number>, options?: MeshOptions): number;
  /** A built scene placed by an affine `worldFromObject`. Its id. */
  addInstance(scene: Scene, worldFromObject: Mat4Like, options?: MeshOptions): number;
  /** Builds the scene; the builder is used up. */
  build(): Scene;
  dispose(): void;
}

/** A built scene. */
export class Scene {
  private constructor();
  /** A scene read from a scene file (`raypick build MODEL -o x.rpk`). */
  static fromBytes(bytes: ArrayBuffer | ArrayBufferView): Scene;
  /** The scene as a scene file. */
  toBytes(): Uint8Array;
  /** The closest hit (closed edges), or null. */
  intersect(origin: Vec3Like, dir: Vec3Like, options?: QueryOptions): Hit | null;
  /** Whether anything is hit. */
  occluded(origin: Vec3Like, dir: Vec3Like, options?: QueryOptions): boolean;
  /** Every hit, sorted by t. */
  intersectAll(origin: Vec3Like, dir: Vec3Like, options?: AllHitsOptions): Hit[];
  /** The number of crossings (half-open edges). */
  countHits(origin: Vec3Like, dir: Vec3Like, options?: QueryOptions): number;
  /** The closest hits of `rays` (ox, oy, oz, dx, dy, dz per ray). */
  castRays(rays: Float32Array | ArrayLike<number>, options?: QueryOptions): CastResult;
  /** Every hit of each of `rays` (ox, oy, oz, dx, dy, dz per ray), as `intersectAll` ray by ray, in columns. */
  intersectAllRays(rays: Float32Array | ArrayLike<number>, options?: AllHitsOptions): AllHitsResult;
  /** Any hit of each ray: 1 or 0. */
  occludedRays(rays: Float32Array | ArrayLike<number>, options?: QueryOptions): Uint8Array;
  /** The closest point of the surfaces within `maxDistance` (default Infinity), or null. */
  closestPoint(point: Vec3Like, options?: { maxDistance?: number }): ClosestPoint | null;
  /** The distance to the surfaces. */
  distance(point: Vec3Like): number;
  /** Inside the closed surfaces? */
  contains(point: Vec3Like, options?: { method?: InsideMethod }): boolean;
  /** The distance, negative inside. */
  signedDistance(point: Vec3Like, options?: { method?: InsideMethod }): number;
  /** signedDistance of x, y, z triples. */
  signedDistances(points: Float32Array | ArrayLike<number>, options?: { method?: InsideMethod }): Float32Array;
  /** What is under window position (x, y) of `camera`, or null: the native `raypick pick`'s answer. */
  pick(camera: Camera, x: number, y: number, options?: { mask?: number; cull?: Cull }): Pick | null;
  summary(): SceneSummary;
  /** The world box of everything, or null when empty. */
  readonly bounds: Bounds | null;
  /** The meshes, sphere sets and placements to draw the scene as it is picked. */
  renderData(): RenderData;
  /** New vertices (same count) for mesh `geom`; the BVHs are refitted. */
  updateMesh(geom: number, positions: Float32Array | ArrayLike<number>): void;
  dispose(): void;
}

export type Convention = 'opengl' | 'gl' | 'webgl' | 'direct3d' | 'd3d' | 'wgpu' | 'webgpu' | 'metal' | 'vulkan';
export type PixelOrigin = 'top-left' | 'bottom-left';

export interface ViewportOptions {
  width: number;
  height: number;
  /** Clip-space convention of the projection (default 'opengl'). */
  convention?: Convention;
  /** Default 'top-left'. */
  pixelOrigin?: PixelOrigin;
}

export interface LookAtOptions extends ViewportOptions {
  eye: Vec3Like;
  target: Vec3Like;
  /** Default [0, 1, 0]. */
  up?: Vec3Like;
  /** Vertical field of view, degrees (default 60). */
  fovYDeg?: number;
  /** Default 0.01. */
  near?: number;
  /** Default 1000; Infinity for an infinite perspective. */
  far?: number;
  /** Default 'perspective'. */
  projection?: 'perspective' | 'orthographic';
  /** The orthographic view's height in world units (default: the perspective view's height at the target). */
  orthoHeight?: number;
  reverseZ?: boolean;
}

export interface CliCameraOptions extends Partial<ViewportOptions> {
  /** With target, up and fovDeg: `raypick pick --camera EYE,TARGET,UP,FOV`. */
  eye?: Vec3Like;
  target?: Vec3Like;
  up?: Vec3Like;
  /** Vertical field of view, degrees (default 45). */
  fovDeg?: number;
}

export interface FrameOptions extends Partial<ViewportOptions> {
  /** Default [0, -0.6, -2.2], the command line's. */
  viewDir?: Vec3Like;
  up?: Vec3Like;
  /** Default 45. */
  fovYDeg?: number;
}

/** A camera: view, projection and a viewport of width x height pixels. */
export class Camera {
  private constructor();
  /** A right-handed look-at camera, perspective or orthographic. */
  static lookAt(options: LookAtOptions): Camera;
  /** A renderer's own view (view_from_world) and projection (clip_from_view) matrices. */
  static fromMatrices(viewFromWorld: Mat4Like, clipFromView: Mat4Like, options: ViewportOptions & { reverseZ?: boolean }): Camera;
  /** The camera `raypick pick` makes for `scene` (default 800 x 600, OpenGL), with or without `--camera`. */
  static forScene(scene: Scene, options?: CliCameraOptions): Camera;
  /** A perspective camera framing the scene's bounds along `viewDir`. */
  static frameBounds(scene: Scene, options?: FrameOptions): Camera;
  readonly width: number;
  readonly height: number;
  /** The ray through window position (x, y). */
  ray(x: number, y: number): Ray;
  /** [x, y, depth] of a world point, or null. */
  project(point: Vec3Like): Vec3 | null;
  /** The matrices to render with, column-major. */
  matrices(): { viewFromWorld: Float32Array; clipFromView: Float32Array };
  dispose(): void;
}
