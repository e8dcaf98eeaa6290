// Build and closest-hit times of raypick-wasm per build quality against three-mesh-bvh, in Node
// (no browser: quicker to iterate than the page, same V8). Engines take turns in one process.
//
//   node bench/wasm/node.mjs [--meshes bunny,sponza] [--rays 50000] [--rounds 3]
//                            [--qualities fast,balanced,high] [--kinds primary,incoherent]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rp = await import(path.join(root, 'web/raypick/index.js'));
const { median, parseObj, raySlice } = await import('./common.mjs');
const THREE = await import(path.join(root, 'web/node_modules/three/build/three.module.js'));
const { MeshBVH } = await import(path.join(root, 'web/node_modules/three-mesh-bvh/src/index.js'));
const data = process.env.RAYPICK_DATA || path.join(root, '..', 'shared', 'data');
const { values: opt } = parseArgs({
  options: {
    meshes: { type: 'string', default: 'bunny,sponza' },
    rays: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    qualities: { type: 'string', default: 'fast,balanced,high' },
    kinds: { type: 'string', default: 'primary,incoherent' },
  },
});
const KNOWN = {
  bunny: ['stanford-bunny', 'obj/stanford-bunny.obj'],
  sponza: ['sponza-dabrovic', 'scenes/sponza-dabrovic.obj'],
  conference: ['conference', 'scenes/conference.obj'],
};
const time = (f) => { const t0 = performance.now(); const r = f(); return [performance.now() - t0, r]; };

function loadRays(name, kind, N) {
  const b = readFileSync(path.join(root, 'bench/out', `${name}.${kind}.rays`));
  return raySlice(new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4), kind, N);
}

function threeFirst(bvh, rays) {
  const n = rays.length / 6;
  const ray = new THREE.Ray();
  let hits = 0;
  for (let i = 0; i < n; i++) {
    ray.origin.set(rays[6 * i], rays[6 * i + 1], rays[6 * i + 2]);
    ray.direction.set(rays[6 * i + 3], rays[6 * i + 4], rays[6 * i + 5]).normalize();
    if (bvh.raycastFirst(ray, THREE.DoubleSide)) hits++;
  }
  return hits;
}

await rp.init();
const ROUNDS = +opt.rounds;
for (const m of opt.meshes.split(',')) {
  const [name, file] = KNOWN[m];
  const mesh = parseObj(readFileSync(path.join(data, file), 'utf8'));
  const qualities = opt.qualities.split(',');
  const builds = Object.fromEntries([...qualities, 'three-mesh-bvh'].map((q) => [q, []]));
  const scenes = {};
  let bvh = null;
  for (let r = 0; r < ROUNDS; r++) {
    for (const q of qualities) {
      scenes[q]?.dispose();
      const [ms, s] = time(() => { const b = new rp.SceneBuilder({ quality: q }); b.addMesh(mesh.positions, mesh.indices); return b.build(); });
      builds[q].push(ms);
      scenes[q] = s;
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(mesh.positions, 3));
    g.setIndex(new THREE.BufferAttribute(mesh.indices.slice(), 1));
    const [ms, b] = time(() => new MeshBVH(g));
    builds['three-mesh-bvh'].push(ms);
    bvh = b;
  }
  console.log(`${name} (${mesh.indices.length / 3} triangles) build ms: ${Object.entries(builds).map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ')}`);
  for (const kind of opt.kinds.split(',')) {
    const rays = loadRays(name, kind, +opt.rays);
    const n = rays.length / 6;
    const times = Object.fromEntries([...qualities, 'three-mesh-bvh'].map((q) => [q, []]));
    for (let r = -1; r < ROUNDS; r++) {
      for (const q of qualities) {
        const [ms] = time(() => scenes[q].castRays(rays));
        if (r >= 0) times[q].push(ms);
      }
      const [ms] = time(() => threeFirst(bvh, rays));
      if (r >= 0) times['three-mesh-bvh'].push(ms);
    }
    const three = n / median(times['three-mesh-bvh']) / 1000;
    console.log(`  ${kind} closest, Mrays/s: ${qualities.map((q) => { const x = n / median(times[q]) / 1000; return `${q} ${x.toFixed(2)} (${(x / three).toFixed(1)}×)`; }).join(', ')}, three-mesh-bvh ${three.toFixed(2)}`);
  }
  for (const s of Object.values(scenes)) s.dispose();
}
