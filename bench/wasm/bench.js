// raypick-wasm against three-mesh-bvh in the browser, one thread: the same triangles (an OBJ's
// `v` and `f` lines), the same rays (the shared sets of tools/make_rays.py), BVH builds and casts
// timed in turns, medians of the rounds. Run by bench/wasm/run.mjs (headless Chromium), which
// serves this page and prints what it leaves in `window.benchResult`.
//
// Query: `meshes` (name=path,… under /data/), `rays` (rays per set), `rounds`, `kinds`
// (primary,incoherent), `queries` (first,all), `quality` (raypick's build: fast, the three.js
// adapter's default, balanced or high).
import * as THREE from 'three';
import { MeshBVH } from 'three-mesh-bvh';
import * as rp from 'raypick';
import { median, parseObj, raySlice } from './common.mjs';

const q = new URLSearchParams(location.search);
const MESHES = (q.get('meshes') || 'stanford-bunny=obj/stanford-bunny.obj').split(',').map((s) => s.split('='));
const N = +(q.get('rays') || 100000);
const ROUNDS = +(q.get('rounds') || 5);
const KINDS = (q.get('kinds') || 'primary,incoherent').split(',');
const QUERIES = (q.get('queries') || 'first,all').split(',');
const QUALITY = q.get('quality') || 'fast';
const status = (s) => { document.getElementById('status').textContent = s; };

// N rays of a shared set, as `raySlice` takes them.
async function loadRays(name, kind) {
  return raySlice(new Float32Array(await (await fetch(`/rays/${name}.${kind}.rays`)).arrayBuffer()), kind, N);
}

function timeIt(f) {
  const t0 = performance.now();
  const r = f();
  return [performance.now() - t0, r];
}

function buildRaypick({ positions, indices }) {
  const b = new rp.SceneBuilder({ quality: QUALITY });
  b.addMesh(positions, indices);
  return b.build();
}

function buildThree({ positions, indices }) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  g.setIndex(new THREE.BufferAttribute(indices.slice(), 1));
  return new MeshBVH(g);
}

// Closest hits: raypick's batch call, raypick one call a ray, three-mesh-bvh `raycastFirst` a ray
// (both faces, as raypick by default). Each returns the triangle (as a vertex-index key, since
// three-mesh-bvh reorders the index buffer) and the distance along the ray.
const engines = {
  first: {
    'raypick batch': (scene, rays) => {
      const r = scene.castRays(rays);
      return { t: r.t, prim: r.prim };
    },
    'raypick per ray': (scene, rays) => {
      const n = rays.length / 6;
      const t = new Float32Array(n).fill(Infinity);
      const prim = new Int32Array(n).fill(-1);
      const o = [0, 0, 0], d = [0, 0, 0];
      for (let i = 0; i < n; i++) {
        o[0] = rays[6 * i]; o[1] = rays[6 * i + 1]; o[2] = rays[6 * i + 2];
        d[0] = rays[6 * i + 3]; d[1] = rays[6 * i + 4]; d[2] = rays[6 * i + 5];
        const h = scene.intersect(o, d);
        if (h) { t[i] = h.t; prim[i] = h.prim; }
      }
      return { t, prim };
    },
    'three-mesh-bvh': (bvh, rays) => {
      const n = rays.length / 6;
      const ray = new THREE.Ray();
      const t = new Float32Array(n).fill(Infinity);
      const faces = new Array(n).fill(null);
      for (let i = 0; i < n; i++) {
        ray.origin.set(rays[6 * i], rays[6 * i + 1], rays[6 * i + 2]);
        ray.direction.set(rays[6 * i + 3], rays[6 * i + 4], rays[6 * i + 5]);
        const len = ray.direction.length();
        ray.direction.divideScalar(len);
        const h = bvh.raycastFirst(ray, THREE.DoubleSide);
        if (h) { t[i] = h.distance / len; faces[i] = h.face; }
      }
      return { t, faces };
    },
  },
  all: {
    'raypick batch': (scene, rays) => ({ count: scene.intersectAllRays(rays).hits }),
    'raypick per ray': (scene, rays) => {
      const n = rays.length / 6;
      let count = 0;
      const o = [0, 0, 0], d = [0, 0, 0];
      for (let i = 0; i < n; i++) {
        o[0] = rays[6 * i]; o[1] = rays[6 * i + 1]; o[2] = rays[6 * i + 2];
        d[0] = rays[6 * i + 3]; d[1] = rays[6 * i + 4]; d[2] = rays[6 * i + 5];
        count += scene.intersectAll(o, d).length;
      }
      return { count };
    },
    'three-mesh-bvh': (bvh, rays) => {
      const n = rays.length / 6;
      const ray = new THREE.Ray();
      let count = 0;
      for (let i = 0; i < n; i++) {
        ray.origin.set(rays[6 * i], rays[6 * i + 1], rays[6 * i + 2]);
        ray.direction.set(rays[6 * i + 3], rays[6 * i + 4], rays[6 * i + 5]).normalize();
        count += bvh.raycast(ray, THREE.DoubleSide).length;
      }
      return { count };
    },
  },
};

// Closest-hit answers compared: hit or miss, triangle (by its vertex indices), distance.
function compare(mesh, mine, theirs) {
  const key = (a, b, c) => `${a},${b},${c}`;
  const n = mine.t.length;
  let hitMiss = 0, triangle = 0, hits = 0;
  for (let i = 0; i < n; i++) {
    const a = Number.isFinite(mine.t[i]), b = Number.isFinite(theirs.t[i]);
    if (a !== b) { hitMiss++; continue; }
    if (!a) continue;
    hits++;
    const p = mine.prim[i];
    const f = theirs.faces[i];
    const same = key(mesh.indices[3 * p], mesh.indices[3 * p + 1], mesh.indices[3 * p + 2]) === key(f.a, f.b, f.c);
    // A different triangle at the same distance is a tie (a shared edge or vertex).
    if (!same && Math.abs(mine.t[i] - theirs.t[i]) > 1e-5 * Math.max(1, mine.t[i])) triangle++;
  }
  return { hits, hitMiss, triangle };
}

async function run() {
  await rp.init('/web/raypick/raypick.wasm');
  const result = { userAgent: navigator.userAgent, rays: N, rounds: ROUNDS, quality: QUALITY, wasmBytes: 0, meshes: [] };
  result.wasmBytes = (await (await fetch('/web/raypick/raypick.wasm')).arrayBuffer()).byteLength;
  for (const [name, file] of MESHES) {
    status(`${name}: loading`);
    const mesh = parseObj(await (await fetch(`/data/${file}`)).text());
    const entry = { name, triangles: mesh.indices.length / 3, build: {}, cells: [] };
    // Builds, in turns; the last of each kept for the casts.
    const builds = { raypick: [], 'three-mesh-bvh': [] };
    let scene = null, bvh = null;
    for (let r = 0; r < ROUNDS; r++) {
      if (scene) scene.dispose();
      let ms;
      [ms, scene] = timeIt(() => buildRaypick(mesh));
      builds.raypick.push(ms);
      [ms, bvh] = timeIt(() => buildThree(mesh));
      builds['three-mesh-bvh'].push(ms);
    }
    for (const [k, v] of Object.entries(builds)) entry.build[k] = median(v);
    for (const kind of KINDS) {
      const rays = await loadRays(name, kind);
      const n = rays.length / 6;
      for (const query of QUERIES) {
        status(`${name}: ${kind} ${query}`);
        const fns = engines[query];
        const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
        const answers = {};
        // One warm-up round, then ROUNDS rounds of every engine in turn.
        for (let r = -1; r < ROUNDS; r++) {
          for (const [engine, f] of Object.entries(fns)) {
            const target = engine.startsWith('raypick') ? scene : bvh;
            const [ms, out] = timeIt(() => f(target, rays));
            if (r >= 0) times[engine].push(ms);
            answers[engine] = out;
          }
        }
        const mrays = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, n / median(v) / 1000]));
        const cell = { kind, query, rays: n, mrays };
        if (query === 'first') cell.agreement = compare(mesh, answers['raypick batch'], answers['three-mesh-bvh']);
        else cell.hits = { raypick: answers['raypick batch'].count, 'raypick per ray': answers['raypick per ray'].count, 'three-mesh-bvh': answers['three-mesh-bvh'].count };
        entry.cells.push(cell);
      }
    }
    scene.dispose();
    result.meshes.push(entry);
  }
  show(result);
  window.benchResult = result;
  status('done');
}

function show(result) {
  const rows = [['mesh', 'rays', 'query', 'raypick batch', 'raypick per ray', 'three-mesh-bvh', 'ratio']];
  for (const m of result.meshes) {
    for (const c of m.cells) {
      const best = c.mrays['raypick batch'] ?? c.mrays['raypick per ray'];
      rows.push([m.name, c.kind, c.query, c.mrays['raypick batch']?.toFixed(2) ?? '–',
        c.mrays['raypick per ray'].toFixed(2), c.mrays['three-mesh-bvh'].toFixed(2),
        (best / c.mrays['three-mesh-bvh']).toFixed(2)]);
    }
  }
  const table = document.getElementById('results');
  table.innerHTML = rows.map((r, i) => `<tr>${r.map((c) => (i ? `<td>${c}</td>` : `<th>${c}</th>`)).join('')}</tr>`).join('');
}

run().catch((e) => { status(`failed: ${e.stack || e}`); window.benchResult = { error: String(e.stack || e) }; });
