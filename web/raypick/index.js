// raypick for JavaScript: the Rust engine compiled to WebAssembly (crates/raypick-wasm), wrapped
// in SceneBuilder, Scene and Camera. The module speaks a small C ABI of numbers and handles (see
// the crate docs of raypick-wasm); this file is all the glue there is. ESM, no bundler needed,
// runs in browsers, workers and Node 18+.
//
//   import { init, SceneBuilder, Scene, Camera } from 'raypick';
//   await init();                                  // fetches ./raypick.wasm next to this file
//   const scene = Scene.fromBytes(await (await fetch('model.rpk')).arrayBuffer());
//   const hit = scene.intersect([0, 1, 5], [0, 0, -1]);
//
// Conventions: right-handed, y up; vectors are [x, y, z] arrays (or {x, y, z} objects in);
// matrices are 16 numbers, column-major (three.js's Matrix4.elements); window coordinates are
// continuous pixels from the top-left corner (pixel (i, j) spans [i, i+1) x [j, j+1), its centre
// is (i + 0.5, j + 0.5)). A hit's u weights its triangle's second vertex and v its third.

const ABI_VERSION = 2;
const HIT_F32 = 9;
const HIT_U32 = 12;
const RAY_F32 = 8;
const NONE = 0xffffffff;
const ERROR_KINDS = ['none', 'argument', 'handle', 'build', 'scene-file', 'camera', 'out-of-memory'];

/** @type {any} */
let wasm = null;
/** The load in progress, if any. */
let loading = null;

/**
 * The error every raypick call throws for bad input: `kind` is `'argument'`, `'handle'` (a
 * disposed object), `'build'`, `'scene-file'`, `'camera'` or `'out-of-memory'`; `field` names
 * the argument at fault (`'positions'`, `'indices'`, `'rays'`, …) when one is.
 */
export class RaypickError extends Error {
  constructor(message, { kind = 'argument', field = '' } = {}) {
    super(message);
    this.name = 'RaypickError';
    this.kind = kind;
    this.field = field;
  }
}

// ---------------------------------------------------------------------------------------------
// Loading

async function bytesOf(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  if (typeof Response !== 'undefined' && source instanceof Response) return source.arrayBuffer();
  const url = source instanceof URL ? source : new URL(String(source), import.meta.url);
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new RaypickError(`${url}: HTTP ${response.status}`, { field: 'source' });
  return response.arrayBuffer();
}

function adopt(instance) {
  const exports = instance.exports;
  const version = exports.rp_abi_version?.();
  if (version !== ABI_VERSION) {
    throw new RaypickError(
      `raypick.wasm speaks ABI version ${version}, this index.js version ${ABI_VERSION}: rebuild with scripts/build-wasm.sh`,
      { field: 'source' },
    );
  }
  wasm = exports;
}

/**
 * Loads the WebAssembly module. `source` is the module's bytes (ArrayBuffer, typed array), a
 * URL or path (fetched; `file:` URLs are read in Node), a fetch `Response`, or a compiled
 * `WebAssembly.Module`; by default `raypick.wasm` beside this file. Call once before anything
 * else; later calls return at once.
 * @param {ArrayBuffer | ArrayBufferView | URL | string | Response | WebAssembly.Module} [source]
 */
export function init(source) {
  if (wasm) return Promise.resolve();
  // Concurrent calls share one instance: objects made through one module mean nothing to another.
  loading ??= (async () => {
    const src = await (source ?? new URL('./raypick.wasm', import.meta.url));
    if (src instanceof WebAssembly.Module) {
      adopt(await WebAssembly.instantiate(src, {}));
    } else {
      const { instance } = await WebAssembly.instantiate(await bytesOf(src), {});
      adopt(instance);
    }
  })().finally(() => {
    loading = null;
  });
  return loading;
}

/**
 * `init` from bytes or a compiled module, synchronously (workers, Node).
 * @param {ArrayBuffer | ArrayBufferView | WebAssembly.Module} source
 */
export function initSync(source) {
  if (wasm) return;
  const module = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
  adopt(new WebAssembly.Instance(module, {}));
}

function api() {
  if (!wasm) throw new RaypickError('raypick is not initialized: await init() first', { kind: 'handle', field: 'init' });
  return wasm;
}

// ---------------------------------------------------------------------------------------------
// Memory, buffers and errors. A call may grow the memory, which detaches the views made before
// it: buffer views are made afresh after every call, and the views of the whole memory that
// single queries read through are re-made when the memory's buffer changed.

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

function text(ptr, len) {
  return utf8.decode(new Uint8Array(wasm.memory.buffer, ptr >>> 0, len >>> 0));
}

function fail() {
  const kind = ERROR_KINDS[wasm.rp_last_error_kind()] ?? 'unknown';
  const field = text(wasm.rp_last_error_field_ptr(), wasm.rp_last_error_field_len());
  const message = text(wasm.rp_last_error_ptr(), wasm.rp_last_error_len());
  throw new RaypickError(message, { kind, field });
}

/** An i32 answer: -1 means the call failed. */
function check(r) {
  if (r < 0) fail();
  return r;
}

/** A handle answer: 0 means the call failed. */
function made(h) {
  if (h === 0) fail();
  return h >>> 0;
}

function argError(field, why) {
  return new RaypickError(`${field}: ${why}`, { kind: 'argument', field });
}

const kinds = {
  f32: { Array: Float32Array, alloc: 'rp_f32_alloc', ptr: 'rp_f32_ptr', len: 'rp_f32_len', free: 'rp_f32_free' },
  u32: { Array: Uint32Array, alloc: 'rp_u32_alloc', ptr: 'rp_u32_ptr', len: 'rp_u32_len', free: 'rp_u32_free' },
  u8: { Array: Uint8Array, alloc: 'rp_u8_alloc', ptr: 'rp_u8_ptr', len: 'rp_u8_len', free: 'rp_u8_free' },
};

/** A view of buffer `h` of kind `k`. */
function view(k, h) {
  const ptr = wasm[k.ptr](h) >>> 0;
  if (ptr === 0) fail();
  return new k.Array(wasm.memory.buffer, ptr, check(wasm[k.len](h)));
}

/** A new buffer holding `data`; its handle. */
function put(k, data) {
  const h = made(wasm[k.alloc](data.length));
  view(k, h).set(data);
  return h;
}

/** A copy of buffer `h`, which is freed. */
function take(k, h) {
  try {
    return view(k, h).slice();
  } finally {
    wasm[k.free](h);
  }
}

/** Runs `f(handles)` with buffers holding `inputs`, then frees them. */
function withBuffers(inputs, f) {
  const handles = [];
  try {
    for (const [k, data] of inputs) handles.push(data == null ? 0 : put(k, data));
    return f(...handles);
  } finally {
    for (let i = 0; i < handles.length; i++) if (handles[i]) wasm[inputs[i][0].free](handles[i]);
  }
}

// Views of the whole memory, re-made only when it grew (which detaches the old ones): single
// queries read their records through these instead of making views per call.
let heapBuffer = null;
let heapF32 = null;
let heapU32 = null;

function heap() {
  const b = wasm.memory.buffer;
  if (b !== heapBuffer) {
    heapBuffer = b;
    heapF32 = new Float32Array(b);
    heapU32 = new Uint32Array(b);
  }
}

/** The index in heapF32 of the out area's f32 value `i` (call heap() first). */
function outF(i = 0) {
  return (wasm.rp_out_f32_ptr() >>> 2) + i;
}

/** The index in heapU32 of the out area's u32 value `i`. */
function outU(i = 0) {
  return (wasm.rp_out_u32_ptr() >>> 2) + i;
}

function outF32(n) {
  return new Float32Array(wasm.memory.buffer, wasm.rp_out_f32_ptr() >>> 0, n);
}

/** The number of objects (buffers, builders, scenes, cameras) the module holds. */
export function liveObjects() {
  return api().rp_live_objects() >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Arguments

function vec3(v, field) {
  if (v != null) {
    if (typeof v.length === 'number' && v.length === 3) return [+v[0], +v[1], +v[2]];
    if (typeof v.x === 'number' && typeof v.y === 'number' && typeof v.z === 'number') return [v.x, v.y, v.z];
  }
  throw argError(field, 'expected [x, y, z] or {x, y, z}');
}

/** Scratch for the two vectors of a single-ray query: no array per call. */
const RAY = new Float64Array(6);

/** Reads `v` ([x, y, z] or {x, y, z}) into RAY at `at`. */
function vec3Into(v, field, at) {
  if (v != null) {
    if (v.length === 3) {
      RAY[at] = +v[0];
      RAY[at + 1] = +v[1];
      RAY[at + 2] = +v[2];
      return;
    }
    if (typeof v.x === 'number' && typeof v.y === 'number' && typeof v.z === 'number') {
      RAY[at] = v.x;
      RAY[at + 1] = v.y;
      RAY[at + 2] = v.z;
      return;
    }
  }
  throw argError(field, 'expected [x, y, z] or {x, y, z}');
}

function floats(data, field, multiple) {
  if (data instanceof Float32Array) {
    // as is
  } else if (ArrayBuffer.isView(data) || Array.isArray(data)) {
    data = Float32Array.from(data);
  } else {
    throw argError(field, 'expected a Float32Array or an array of numbers');
  }
  if (multiple && data.length % multiple !== 0) {
    throw argError(field, `length ${data.length} is not a multiple of ${multiple}`);
  }
  return data;
}

function uints(data, field) {
  if (data instanceof Uint32Array || data instanceof Uint16Array || data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data) || Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      const x = data[i];
      if (!(Number.isInteger(x) && x >= 0 && x <= NONE)) throw argError(field, `${field}[${i}] = ${x} is not an integer in 0..2^32-1`);
    }
    return Uint32Array.from(data);
  }
  throw argError(field, 'expected a Uint32Array or an array of integers');
}

function mat4(m, field) {
  const e = m?.elements ?? m;
  if (e == null || e.length !== 16) throw argError(field, 'expected 16 numbers, column-major (or a three.js Matrix4)');
  return Float32Array.from(e);
}

function u32Arg(x, field) {
  if (!(Number.isInteger(x) && x >= 0 && x <= NONE)) throw argError(field, `${x} is not an integer in 0..2^32-1`);
  return x;
}

function choice(value, field, table) {
  const code = table[value];
  if (code === undefined) throw argError(field, `${JSON.stringify(value)} is not one of ${Object.keys(table).map((k) => JSON.stringify(k)).join(', ')}`);
  return code;
}

const CULL = { none: 0, back: 1, front: 2 };
const SIDE = { both: 0, front: 1, back: 2 };
const CONVENTION = { opengl: 0, gl: 0, webgl: 0, direct3d: 1, d3d: 1, wgpu: 1, webgpu: 1, metal: 1, vulkan: 2 };
const PIXEL_ORIGIN = { 'top-left': 0, 'bottom-left': 1 };
const PROJECTION = { perspective: 0, orthographic: 1 };
const EDGES = { 'half-open': 0, closed: 1 };
const INSIDE = { parity: 0, winding: 1, 'winding-number': 1 };
const QUALITY = { fast: 0, balanced: 1, high: 2, spatial: 3 };
/** The build quality of `new SceneBuilder()` without one (see SceneBuilder). */
const DEFAULT_QUALITY = 'balanced';

/** The query options as the ABI's `t_min, t_max, mask, cull` (the ranges go in a buffer). */
function queryArgs(o = {}) {
  const { tNear = 0, tFar = Infinity, mask = NONE, cull = 'none' } = o;
  return [+tNear, +tFar, u32Arg(mask, 'mask'), choice(cull, 'cull', CULL)];
}

/** `ranges` as the ABI's u32 triples, or null. */
function rangesArg(ranges) {
  if (ranges == null) return null;
  if (ranges instanceof Uint32Array) return ranges;
  if (!Array.isArray(ranges)) throw argError('ranges', 'expected an array of {start, end, side} or a Uint32Array of triples');
  const out = new Uint32Array(3 * ranges.length);
  ranges.forEach((r, i) => {
    out[3 * i] = u32Arg(r.start, 'ranges');
    out[3 * i + 1] = u32Arg(r.end, 'ranges');
    out[3 * i + 2] = choice(r.side ?? 'both', 'ranges', SIDE);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Records

/** Hit record `i` of the out area, its f32 values from `f0` on (heap() called since the query). */
function readHit(i, f0 = 0) {
  const f = heapF32;
  const u = heapU32;
  const a = outF(f0 + i * HIT_F32);
  const b = outU(i * HIT_U32);
  const pathLen = u[b + 3];
  const instance = u[b + 2];
  return {
    t: f[a],
    u: f[a + 1],
    v: f[a + 2],
    normal: [f[a + 3], f[a + 4], f[a + 5]],
    point: [f[a + 6], f[a + 7], f[a + 8]],
    prim: u[b],
    geom: u[b + 1],
    instance: instance === NONE ? null : instance,
    instancePath: pathLen === 0 ? [] : Array.from(u.subarray(b + 4, b + 4 + pathLen)),
  };
}

function readHits(count, f0 = 0) {
  heap();
  const hits = new Array(count);
  for (let i = 0; i < count; i++) hits[i] = readHit(i, f0);
  return hits;
}

function readRay() {
  heap();
  const f = heapF32;
  const a = outF();
  return { origin: [f[a], f[a + 1], f[a + 2]], dir: [f[a + 3], f[a + 4], f[a + 5]], tMin: f[a + 6], tMax: f[a + 7] };
}

// ---------------------------------------------------------------------------------------------
// Lifetimes: dispose() frees at once; objects dropped without it are freed when collected.

const finalizer = typeof FinalizationRegistry === 'undefined'
  ? null
  : new FinalizationRegistry(({ free, h }) => { if (wasm) wasm[free](h); });

const INTERNAL = Symbol('raypick internal');

class Handle {
  #h;
  #free;
  #what;
  constructor(h, free, what) {
    this.#h = h;
    this.#free = free;
    this.#what = what;
    finalizer?.register(this, { free, h }, this);
  }
  get handle() {
    if (this.#h === 0) throw new RaypickError(`${this.#what}: used after dispose()`, { kind: 'handle', field: this.#what });
    return this.#h;
  }
  /** Frees the object now (it cannot be used afterwards). */
  dispose() {
    if (this.#h === 0) return;
    finalizer?.unregister(this);
    wasm[this.#free](this.#h);
    this.#h = 0;
  }
  /** Forgets the handle without freeing (the module used it up). */
  release() {
    finalizer?.unregister(this);
    this.#h = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// SceneBuilder

/**
 * Collects triangle meshes, sphere sets and instances of built scenes (geometry ids 0, 1, 2, …
 * in the order added) and builds a Scene. Input is checked as it is added: an error names the
 * array and the element.
 */
export class SceneBuilder {
  #h;
  /**
   * `quality` chooses the BVH build: 'fast', 'balanced', 'high' or 'spatial' (the engine's
   * presets BuildConfig::FAST, BALANCED, HIGH_QUALITY, SPATIAL). Every quality gives the same
   * answers; a better tree takes longer to build and casts faster. 'spatial' cuts long
   * triangles where that pays (architecture) and builds four to ten times longer than
   * 'balanced': for scenes built once and saved with `toBytes()`.
   */
  constructor({ quality = DEFAULT_QUALITY } = {}) {
    const q = choice(quality, 'quality', QUALITY);
    this.#h = new Handle(made(api().rp_builder_new(q)), 'rp_builder_free', 'builder');
  }

  /**
   * Adds a triangle mesh: `positions` x, y, z per vertex; `indices` three per triangle
   * (counter-clockwise front faces), or none: consecutive vertex triples. Returns its id.
   */
  addMesh(positions, indices = null, { mask = NONE, name = null } = {}) {
    const p = floats(positions, 'positions', 3);
    const i = indices == null ? null : uints(indices, 'indices');
    const n = name == null ? null : utf8Encoder.encode(String(name));
    return withBuffers([[kinds.f32, p], [kinds.u32, i], [kinds.u8, n]], (hp, hi, hn) =>
      check(wasm.rp_builder_add_mesh(this.#h.handle, hp, hi, u32Arg(mask, 'mask'), hn)));
  }

  /** Adds spheres: `centers` x, y, z each, one radius each. Returns its id. */
  addSpheres(centers, radii, { mask = NONE, name = null } = {}) {
    const c = floats(centers, 'centers', 3);
    const r = floats(radii, 'radii');
    const n = name == null ? null : utf8Encoder.encode(String(name));
    return withBuffers([[kinds.f32, c], [kinds.f32, r], [kinds.u8, n]], (hc, hr, hn) =>
      check(wasm.rp_builder_add_spheres(this.#h.handle, hc, hr, u32Arg(mask, 'mask'), hn)));
  }

  /**
   * Places a built scene with `worldFromObject` (16 numbers column-major, or a three.js Matrix4;
   * affine: rotation, scale — non-uniform or mirroring — and translation). The scene stays
   * usable. Returns the instance's id: hits inside name it as `instance`.
   */
  addInstance(scene, worldFromObject, { mask = NONE, name = null } = {}) {
    if (!(scene instanceof Scene)) throw argError('scene', 'expected a Scene');
    const m = mat4(worldFromObject, 'worldFromObject');
    const n = name == null ? null : utf8Encoder.encode(String(name));
    return withBuffers([[kinds.f32, m], [kinds.u8, n]], (hm, hn) =>
      check(wasm.rp_builder_add_instance(this.#h.handle, scene[INTERNAL], hm, u32Arg(mask, 'mask'), hn)));
  }

  /** Builds the scene. The builder is used up. */
  build() {
    const b = this.#h.handle;
    this.#h.release();
    return new Scene(INTERNAL, made(wasm.rp_builder_build(b)));
  }

  /** Frees a builder that will not be built. */
  dispose() {
    this.#h.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// Scene

/**
 * A built scene: meshes, spheres and instances under a BVH. Queries take query options
 * `{ tNear = 0, tFar = Infinity, mask = 0xffffffff, cull = 'none' | 'back' | 'front', ranges }`:
 * hits with t in [tNear, tFar] on geometries whose mask shares a bit with `mask`; `cull: 'back'`
 * skips back faces (those whose winding normal (v1-v0)x(v2-v0) faces along the ray), `'front'`
 * the others; `ranges` ([{start, end, side: 'both'|'front'|'back'}] over primitive ids) keeps
 * only those primitives, each range with its sides — for scenes of one mesh (three.js groups).
 * A ray with a NaN or infinite component is a miss.
 */
export class Scene {
  #h;
  /** @internal */
  constructor(token, handle) {
    if (token !== INTERNAL) throw new TypeError('use SceneBuilder.build() or Scene.fromBytes()');
    this.#h = new Handle(handle, 'rp_scene_free', 'scene');
  }

  /** @internal */
  get [INTERNAL]() {
    return this.#h.handle;
  }

  /**
   * A scene read from a scene file (`.rpk`, written by `raypick build MODEL -o x.rpk` or
   * `toBytes`): checked throughout, no build.
   * @param {ArrayBuffer | ArrayBufferView} bytes
   */
  static fromBytes(bytes) {
    api();
    let data;
    if (bytes instanceof ArrayBuffer) data = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw argError('bytes', 'expected an ArrayBuffer or a typed array');
    return withBuffers([[kinds.u8, data]], (h) => new Scene(INTERNAL, made(wasm.rp_scene_from_bytes(h))));
  }

  /** The scene as a scene file (`.rpk`). */
  toBytes() {
    return take(kinds.u8, made(wasm.rp_scene_to_bytes(this.#h.handle)));
  }

  /** Calls single-ray query `f` (an export) with the ray and the options; its i32 answer. */
  #ray(f, origin, dir, options) {
    vec3Into(origin, 'origin', 0);
    vec3Into(dir, 'dir', 3);
    const h = this.#h.handle;
    const R = RAY;
    if (options == null) return check(f(h, R[0], R[1], R[2], R[3], R[4], R[5], 0, Infinity, NONE, 0, 0));
    const tNear = +(options.tNear ?? 0);
    const tFar = +(options.tFar ?? Infinity);
    const mask = options.mask === undefined ? NONE : u32Arg(options.mask, 'mask');
    const cull = options.cull === undefined ? 0 : choice(options.cull, 'cull', CULL);
    if (options.ranges == null) return check(f(h, R[0], R[1], R[2], R[3], R[4], R[5], tNear, tFar, mask, cull, 0));
    return withBuffers([[kinds.u32, rangesArg(options.ranges)]], (hr) =>
      check(f(h, R[0], R[1], R[2], R[3], R[4], R[5], tNear, tFar, mask, cull, hr)));
  }

  /**
   * The closest hit along the ray, or null: `{t, u, v, normal, point, prim, geom, instance,
   * instancePath}` (t in units of `dir`; closed edges: a ray through an edge hits).
   */
  intersect(origin, dir, options) {
    if (!this.#ray(wasm.rp_scene_intersect, origin, dir, options)) return null;
    heap();
    return readHit(0);
  }

  /** Whether anything is hit along the ray (a shadow ray: set tFar). */
  occluded(origin, dir, options) {
    return this.#ray(wasm.rp_scene_occluded, origin, dir, options) === 1;
  }

  /**
   * Every hit along the ray, sorted by t. `edges: 'half-open'` (the default) reports a crossing
   * of an edge or vertex shared by triangles once, so a ray crosses a closed surface an even
   * number of times from outside; `edges: 'closed'` reports it on every triangle that has the
   * point, as three.js's raycaster does (one closest-hit walk per hit).
   */
  intersectAll(origin, dir, options) {
    const edges = options?.edges === undefined ? 0 : choice(options.edges, 'edges', EDGES);
    const f = edges === 0 ? wasm.rp_scene_intersect_all : wasm.rp_scene_intersect_all_closed;
    return readHits(this.#ray(f, origin, dir, options));
  }

  /** The number of hits `intersectAll` would give (odd from inside a closed mesh). */
  countHits(origin, dir, options) {
    return this.#ray(wasm.rp_scene_count, origin, dir, options);
  }

  /**
   * The closest hits of a batch: `rays` holds ox, oy, oz, dx, dy, dz per ray. Returns columns
   * `{t (Infinity on a miss), u, v: Float32Array, geom, prim, instance: Int32Array (-1 when
   * none), hits: number}`, the same answers as `intersect` one ray at a time.
   */
  castRays(rays, options) {
    const r = floats(rays, 'rays', 6);
    const n = r.length / 6;
    const q = queryArgs(options);
    return withBuffers([[kinds.f32, r], [kinds.u32, rangesArg(options?.ranges)]], (hr, hg) => {
      const of = made(wasm.rp_f32_alloc(3 * n));
      const ou = made(wasm.rp_u32_alloc(3 * n));
      try {
        const hits = check(wasm.rp_scene_cast(this.#h.handle, hr, ...q, hg, of, ou));
        const f = view(kinds.f32, of).slice();
        const ids = new Int32Array(view(kinds.u32, ou).slice().buffer);
        return {
          t: f.subarray(0, n),
          u: f.subarray(n, 2 * n),
          v: f.subarray(2 * n, 3 * n),
          geom: ids.subarray(0, n),
          prim: ids.subarray(n, 2 * n),
          instance: ids.subarray(2 * n, 3 * n),
          hits,
        };
      } finally {
        wasm.rp_f32_free(of);
        wasm.rp_u32_free(ou);
      }
    });
  }

  /**
   * Every hit of every ray of a batch (`rays`: ox, oy, oz, dx, dy, dz per ray), as
   * `intersectAll` gives them one ray at a time (options `edges` too), in columns: ray i's hits
   * are `offsets[i]` to `offsets[i + 1]` (exclusive), sorted by t, in `{t, u, v: Float32Array,
   * geom, prim, instance: Int32Array (-1 when none)}`; `offsets` is a Uint32Array of n + 1,
   * `hits` the total.
   */
  intersectAllRays(rays, options) {
    const r = floats(rays, 'rays', 6);
    const n = r.length / 6;
    const q = queryArgs(options);
    const edges = options?.edges === undefined ? 0 : choice(options.edges, 'edges', EDGES);
    return withBuffers([[kinds.f32, r], [kinds.u32, rangesArg(options?.ranges)]], (hr, hg) => {
      const m = check(wasm.rp_scene_intersect_all_rays(this.#h.handle, hr, ...q, hg, edges));
      heap();
      const u = outU();
      const f = outF();
      const ids = new Int32Array(heapU32.slice(u + n + 1, u + n + 1 + 3 * m).buffer);
      const values = heapF32.slice(f, f + 3 * m);
      return {
        offsets: heapU32.slice(u, u + n + 1),
        t: values.subarray(0, m),
        u: values.subarray(m, 2 * m),
        v: values.subarray(2 * m, 3 * m),
        geom: ids.subarray(0, m),
        prim: ids.subarray(m, 2 * m),
        instance: ids.subarray(2 * m, 3 * m),
        hits: m,
      };
    });
  }

  /** Whether each ray of a batch hits anything: a Uint8Array of 1 and 0. */
  occludedRays(rays, options) {
    const r = floats(rays, 'rays', 6);
    const q = queryArgs(options);
    return withBuffers([[kinds.f32, r], [kinds.u32, rangesArg(options?.ranges)]], (hr, hg) => {
      const out = made(wasm.rp_u8_alloc(r.length / 6));
      check(wasm.rp_scene_occluded_rays(this.#h.handle, hr, ...q, hg, out));
      return take(kinds.u8, out);
    });
  }

  /**
   * The closest point of the scene's surfaces to `point` within `maxDistance`, or null:
   * `{distance, point, normal, u, v, prim, geom, instance, instancePath}`.
   */
  closestPoint(point, { maxDistance = Infinity } = {}) {
    const [x, y, z] = vec3(point, 'point');
    return check(wasm.rp_scene_closest_point(this.#h.handle, x, y, z, maxDistance))
      ? renameT(readHits(1)[0])
      : null;
  }

  /** The distance to the surface (Infinity for an empty scene, NaN for a non-finite point). */
  distance(point) {
    const [x, y, z] = vec3(point, 'point');
    check(wasm.rp_scene_distance(this.#h.handle, x, y, z));
    return outF32(1)[0];
  }

  /** Whether `point` is inside the closed surfaces: `method` 'parity' (default) or 'winding'. */
  contains(point, { method = 'parity' } = {}) {
    const [x, y, z] = vec3(point, 'point');
    return check(wasm.rp_scene_contains(this.#h.handle, x, y, z, choice(method, 'method', INSIDE))) === 1;
  }

  /** The distance to the surface, negative inside (`contains` with `method`). */
  signedDistance(point, { method = 'parity' } = {}) {
    const [x, y, z] = vec3(point, 'point');
    check(wasm.rp_scene_signed_distance(this.#h.handle, x, y, z, choice(method, 'method', INSIDE)));
    return outF32(1)[0];
  }

  /** `signedDistance` of every point of `points` (x, y, z each): a Float32Array. */
  signedDistances(points, { method = 'parity' } = {}) {
    const p = floats(points, 'points', 3);
    const m = choice(method, 'method', INSIDE);
    return withBuffers([[kinds.f32, p]], (hp) => {
      const out = made(wasm.rp_f32_alloc(p.length / 3));
      check(wasm.rp_scene_signed_distances(this.#h.handle, hp, m, out));
      return take(kinds.f32, out);
    });
  }

  /**
   * What is under window position (x, y) of `camera` (pixel (i, j)'s centre is (i + 0.5,
   * j + 0.5)): the closest hit along the camera's pixel ray between its near and far planes,
   * with that `ray` and the `pixel`, or null. Options `{mask, cull}`. The engine's pick, so the
   * answer is the native `raypick pick`'s bit for bit.
   */
  pick(camera, x, y, { mask = NONE, cull = 'none' } = {}) {
    if (!(camera instanceof Camera)) throw argError('camera', 'expected a Camera');
    const hit = check(wasm.rp_scene_pick(this.#h.handle, camera[INTERNAL], x, y, u32Arg(mask, 'mask'), choice(cull, 'cull', CULL)));
    if (!hit) return null;
    const ray = readRay();
    return { ...readHits(1, RAY_F32)[0], ray, pixel: [x, y] };
  }

  /**
   * The scene's summary: `{bounds: {min, max} | null, geometries: [{id, kind: 'mesh' |
   * 'spheres' | 'instance', name, mask, bounds, triangles | spheres | scene}], triangles,
   * totalTriangles, instanceDepth}`.
   */
  summary() {
    return JSON.parse(utf8.decode(take(kinds.u8, made(wasm.rp_scene_summary(this.#h.handle)))));
  }

  /** The world box `{min, max}` of everything, or null for an empty scene. */
  get bounds() {
    return this.summary().bounds;
  }

  /**
   * Everything needed to draw the scene as it is picked: `{meshes: [{positions: Float32Array,
   * indices: Uint32Array}], sphereSets: [{spheres: Float32Array (x, y, z, radius each)}],
   * items: [{kind: 'mesh' | 'spheres', data, geom, path, pathNames, name, mask, matrix}]}`.
   * Each item places `meshes[data]` (or `sphereSets[data]`) with `matrix` (world_from_object,
   * column-major: `new THREE.Matrix4().fromArray(matrix)`); `geom` and `path` are what a hit on
   * it reports as `geom` and `instancePath`. Meshes placed several times are listed once.
   * Triangle i of `indices` is primitive i of hits.
   */
  renderData() {
    const h = this.#h.handle;
    const doc = JSON.parse(utf8.decode(take(kinds.u8, made(wasm.rp_scene_draws(h)))));
    const meshes = [];
    for (let k = 0; k < doc.meshes; k++) {
      meshes.push({
        positions: take(kinds.f32, made(wasm.rp_scene_mesh_positions(h, k))),
        indices: take(kinds.u32, made(wasm.rp_scene_mesh_indices(h, k))),
      });
    }
    const sphereSets = [];
    for (let k = 0; k < doc.sphereSets; k++) {
      sphereSets.push({ spheres: take(kinds.f32, made(wasm.rp_scene_sphere_data(h, k))) });
    }
    const items = doc.items.map((it) => ({ ...it, matrix: Float32Array.from(it.matrix) }));
    return { meshes, sphereSets, items };
  }

  /** New vertices for mesh `geom` (same count); the BVHs are refitted. */
  updateMesh(geom, positions) {
    const p = floats(positions, 'positions', 3);
    withBuffers([[kinds.f32, p]], (hp) => check(wasm.rp_scene_update_mesh(this.#h.handle, u32Arg(geom, 'geom'), hp)));
  }

  /** Frees the scene now (instances that place it keep it alive). */
  dispose() {
    this.#h.dispose();
  }
}

function renameT(h) {
  const { t, ...rest } = h;
  return { distance: t, ...rest };
}

// ---------------------------------------------------------------------------------------------
// Camera

function cameraEnums(o) {
  return [
    choice(o.convention ?? 'opengl', 'convention', CONVENTION),
    choice(o.pixelOrigin ?? 'top-left', 'pixelOrigin', PIXEL_ORIGIN),
  ];
}

function size(o) {
  const { width, height } = o;
  return [u32Arg(width, 'width'), u32Arg(height, 'height')];
}

/**
 * A camera for pixel rays and `Scene.pick`: a view, a projection (OpenGL / WebGL, Direct3D /
 * wgpu / WebGPU / Metal or Vulkan clip space) and a viewport of `width x height` pixels. Pixel
 * rays start on the near plane, have unit directions (t in world units from the near plane)
 * and end on the far plane.
 */
export class Camera {
  #h;
  /** @internal */
  constructor(token, handle, width, height) {
    if (token !== INTERNAL) throw new TypeError('use Camera.lookAt, Camera.fromMatrices, Camera.forScene or Camera.frameBounds');
    this.#h = new Handle(handle, 'rp_camera_free', 'camera');
    /** Viewport width in pixels. */
    this.width = width;
    /** Viewport height in pixels. */
    this.height = height;
  }

  /** @internal */
  get [INTERNAL]() {
    return this.#h.handle;
  }

  /**
   * A right-handed look-at camera. `projection` 'perspective' (vertical `fovYDeg`; `far:
   * Infinity` for an infinite one) or 'orthographic' (`orthoHeight` world units tall, by default
   * the height the perspective view has at `target`); `reverseZ` for reversed depth.
   */
  static lookAt(o) {
    api();
    const [ex, ey, ez] = vec3(o.eye, 'eye');
    const [tx, ty, tz] = vec3(o.target, 'target');
    const [ux, uy, uz] = vec3(o.up ?? [0, 1, 0], 'up');
    const [w, h] = size(o);
    const { fovYDeg = 60, near = 0.01, far = 1000, orthoHeight = NaN, reverseZ = false } = o;
    const projection = choice(o.projection ?? 'perspective', 'projection', PROJECTION);
    const handle = made(wasm.rp_camera_look_at(ex, ey, ez, tx, ty, tz, ux, uy, uz, fovYDeg, near, far,
      projection, orthoHeight, reverseZ ? 1 : 0, w, h, ...cameraEnums(o)));
    return new Camera(INTERNAL, handle, w, h);
  }

  /**
   * A renderer's own camera: `viewFromWorld` (the view matrix; three.js:
   * `camera.matrixWorldInverse`) and `clipFromView` (the projection; `camera.projectionMatrix`),
   * 16 numbers column-major or Matrix4s. three.js renders WebGL with the 'opengl' convention
   * (the default) and WebGPU with 'webgpu'.
   */
  static fromMatrices(viewFromWorld, clipFromView, o) {
    api();
    const [w, h] = size(o);
    const v = mat4(viewFromWorld, 'viewFromWorld');
    const p = mat4(clipFromView, 'clipFromView');
    const [clip, origin] = cameraEnums(o);
    const handle = withBuffers([[kinds.f32, v], [kinds.f32, p]], (hv, hp) =>
      made(wasm.rp_camera_from_matrices(hv, hp, w, h, clip, o.reverseZ ? 1 : 0, origin)));
    return new Camera(INTERNAL, handle, w, h);
  }

  /**
   * The camera the `raypick` command line makes for `scene` (`raypick pick MODEL --size WxH
   * --convention C [--camera EYE,TARGET,UP,FOV]`): with `eye`, `target`, `up` and `fovDeg` the
   * `--camera` one (an infinite perspective, near plane 1e-4 of the working distance), without
   * them the one that frames the scene. Defaults: 800 x 600, 'opengl'. Picks through it equal the
   * command line's bit for bit.
   */
  static forScene(scene, o = {}) {
    api();
    if (!(scene instanceof Scene)) throw argError('scene', 'expected a Scene');
    const [w, h] = size({ width: o.width ?? 800, height: o.height ?? 600 });
    const [clip, origin] = cameraEnums(o);
    if (o.eye === undefined) {
      return Camera.frameBounds(scene, { ...o, width: w, height: h });
    }
    const [ex, ey, ez] = vec3(o.eye, 'eye');
    const [tx, ty, tz] = vec3(o.target, 'target');
    const [ux, uy, uz] = vec3(o.up ?? [0, 1, 0], 'up');
    const fov = o.fovDeg ?? 45;
    const handle = made(wasm.rp_camera_cli(scene[INTERNAL], ex, ey, ez, tx, ty, tz, ux, uy, uz, fov, w, h, clip, origin));
    return new Camera(INTERNAL, handle, w, h);
  }

  /**
   * A perspective camera looking along `viewDir` (default `[0, -0.6, -2.2]`, the command line's)
   * with `up` (default +y) and vertical field of view `fovYDeg` (default 45) that frames the
   * scene's bounds.
   */
  static frameBounds(scene, o = {}) {
    api();
    if (!(scene instanceof Scene)) throw argError('scene', 'expected a Scene');
    const [vx, vy, vz] = vec3(o.viewDir ?? [0, -0.6, -2.2], 'viewDir');
    const [ux, uy, uz] = vec3(o.up ?? [0, 1, 0], 'up');
    const [w, h] = size({ width: o.width ?? 800, height: o.height ?? 600 });
    const handle = made(wasm.rp_camera_frame(scene[INTERNAL], vx, vy, vz, ux, uy, uz, o.fovYDeg ?? 45, w, h, ...cameraEnums(o)));
    return new Camera(INTERNAL, handle, w, h);
  }

  /** The ray through window position (x, y): `{origin, dir, tMin, tMax}`. */
  ray(x, y) {
    check(wasm.rp_camera_ray(this.#h.handle, x, y));
    return readRay();
  }

  /** The window position `[x, y, depth]` of a world point, or null (behind the eye). */
  project(point) {
    const [x, y, z] = vec3(point, 'point');
    if (!check(wasm.rp_camera_project(this.#h.handle, x, y, z))) return null;
    return Array.from(outF32(3));
  }

  /**
   * `{viewFromWorld, clipFromView}`: Float32Array(16) each, column-major — the matrices to render
   * with so the picture is the one picks see (three.js: `camera.matrixWorldInverse.fromArray(…)`,
   * `camera.projectionMatrix.fromArray(…)`).
   */
  matrices() {
    check(wasm.rp_camera_matrices(this.#h.handle));
    const f = outF32(32);
    return { viewFromWorld: f.slice(0, 16), clipFromView: f.slice(16, 32) };
  }

  /** Frees the camera now. */
  dispose() {
    this.#h.dispose();
  }
}
