// The wasm engine answers as the native one does: the same scene file (`raypick build`), the same
// rays (`raypick cast`) and the same pixels (`raypick pick`) give the same primitive, geometry, t,
// u, v, point and normal, bit for bit; and a scene built in JS from the same triangles answers the
// same.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import { Scene, SceneBuilder, Camera } from '../raypick/index.js';
import { ready, buildRpk, cliPick, cli, writeRays, readNpz, scratch, random, bits, BUNNY, SPONZA } from './support.mjs';

before(ready);

/** Rays at and through `scene`: from outside towards its box, from inside it, straight down onto
 * vertices (exact vertex crossings), and a few invalid ones. */
function raysFor(scene, n, seed) {
  const rnd = random(seed);
  const { min, max } = scene.bounds;
  const c = min.map((m, i) => 0.5 * (m + max[i]));
  const ext = max.map((m, i) => m - min[i]);
  const diag = Math.hypot(...ext);
  const inBox = () => min.map((m, i) => m + rnd() * ext[i]);
  const out = [];
  const push = (o, d) => out.push(...o, ...d);
  const { meshes } = scene.renderData();
  for (let k = 0; k < n; k++) {
    const kind = k % 4;
    if (kind === 0 || kind === 1) {
      // From a sphere around the box towards a point inside it.
      const u = 2 * rnd() - 1;
      const phi = 2 * Math.PI * rnd();
      const s = Math.sqrt(1 - u * u);
      const o = [c[0] + 0.9 * diag * s * Math.cos(phi), c[1] + 0.9 * diag * u, c[2] + 0.9 * diag * s * Math.sin(phi)];
      const p = inBox();
      push(o, p.map((x, i) => x - o[i]));
    } else if (kind === 2) {
      // From inside, any direction.
      const d = [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5];
      push(inBox(), d);
    } else {
      // Down the z axis through a triangle's vertex: x and y are the vertex's exactly.
      const m = meshes[Math.floor(rnd() * meshes.length)];
      const v = m.indices[Math.floor(rnd() * m.indices.length)];
      const p = m.positions.subarray(3 * v, 3 * v + 3);
      push([p[0], p[1], max[2] + 0.25 * diag], [0, 0, -1]);
    }
  }
  push([NaN, 0, 0], [0, 0, -1]);
  push(c, [0, 0, 0]);
  push(c, [Infinity, 1, 0]);
  return new Float32Array(out);
}

function assertSameCast(name, ours, theirs, n) {
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const prim = Number(theirs.prim[i]);
    const at = `${name}: ray ${i}`;
    assert.equal(ours.prim[i], prim, `${at}: prim`);
    assert.equal(ours.geom[i], Number(theirs.geom[i]), `${at}: geom`);
    assert.equal(ours.instance[i], Number(theirs.instance[i]), `${at}: instance`);
    assert.equal(bits(ours.t[i]), bits(theirs.t[i]), `${at}: t ${ours.t[i]} vs ${theirs.t[i]}`);
    assert.equal(bits(ours.u[i]), bits(theirs.u[i]), `${at}: u`);
    assert.equal(bits(ours.v[i]), bits(theirs.v[i]), `${at}: v`);
    if (prim >= 0) hits++;
  }
  return hits;
}

for (const [name, model, n] of [['bunny', BUNNY, 6000], ['sponza', SPONZA, 6000]]) {
  test(`${name}: castRays equals raypick cast on the same .rpk, bit for bit`, () => {
    const { path, bytes } = buildRpk(model);
    const scene = Scene.fromBytes(bytes);
    const rays = raysFor(scene, n, 7);
    const nr = rays.length / 6;
    const raysPath = writeRays(`${name}.rays`, rays);
    const npz = scratch(`${name}.npz`);
    cli('cast', path, '--rays', raysPath, '--out', npz);
    const theirs = readNpz(npz);
    assert.equal(theirs.t.length, nr);
    const ours = scene.castRays(rays);
    const hits = assertSameCast(name, ours, theirs, nr);
    // Real answers: most rays aimed at the box hit something, and the invalid rays miss.
    assert.ok(hits > nr / 4, `${name}: only ${hits} of ${nr} rays hit`);
    assert.equal(ours.hits, hits);
    for (let i = nr - 3; i < nr; i++) assert.equal(ours.prim[i], -1, `invalid ray ${i} must miss`);
    // The vertex rays (every fourth from 3) all hit: a closed edge rule never misses a vertex.
    for (let i = 3; i < nr - 3; i += 4) assert.notEqual(ours.prim[i], -1, `vertex ray ${i} missed`);

    // One ray at a time answers as the batch.
    for (let i = 0; i < nr; i += 7) {
      const r = rays.subarray(6 * i, 6 * i + 6);
      const h = scene.intersect(r.subarray(0, 3), r.subarray(3, 6));
      assert.equal(h ? h.prim : -1, ours.prim[i], `ray ${i}: single vs batch prim`);
      if (h) assert.equal(bits(h.t), bits(ours.t[i]), `ray ${i}: single vs batch t`);
    }

    // The same triangles built in JS (same geometry order, default build) answer the same.
    const data = scene.renderData();
    const b = new SceneBuilder();
    for (const it of data.items) {
      const m = data.meshes[it.data];
      assert.equal(b.addMesh(m.positions, m.indices, { name: it.name, mask: it.mask }), it.geom);
    }
    const rebuilt = b.build();
    assert.deepEqual(rebuilt.summary(), scene.summary());
    assertSameCast(`${name} rebuilt`, rebuilt.castRays(rays), theirs, nr);
    rebuilt.dispose();
    scene.dispose();
  });

  test(`${name}: all hits, any hit and counts agree with raypick cast --all-hits / --any-hit`, () => {
    const { path, bytes } = buildRpk(model);
    const scene = Scene.fromBytes(bytes);
    const rays = raysFor(scene, 600, 11);
    const nr = rays.length / 6;
    const raysPath = writeRays(`${name}-few.rays`, rays);
    const all = scratch(`${name}-all.npz`);
    cli('cast', path, '--rays', raysPath, '--out', all, '--all-hits');
    const theirs = readNpz(all);
    const any = scratch(`${name}-any.npz`);
    cli('cast', path, '--rays', raysPath, '--out', any, '--any-hit');
    const occluded = readNpz(any).occluded;
    assert.deepEqual(Array.from(scene.occludedRays(rays)), Array.from(occluded));
    let row = 0;
    for (let i = 0; i < nr; i++) {
      const r = rays.subarray(6 * i, 6 * i + 6);
      const hits = scene.intersectAll(r.subarray(0, 3), r.subarray(3, 6));
      assert.equal(scene.countHits(r.subarray(0, 3), r.subarray(3, 6)), hits.length);
      assert.equal(scene.occluded(r.subarray(0, 3), r.subarray(3, 6)), occluded[i] === 1);
      for (const h of hits) {
        assert.equal(Number(theirs.ray[row]), i, `ray ${i}: hit count differs`);
        assert.equal(h.prim, Number(theirs.prim[row]), `ray ${i}: all-hits prim`);
        assert.equal(bits(h.t), bits(theirs.t[row]), `ray ${i}: all-hits t`);
        row++;
      }
    }
    assert.equal(row, theirs.t.length, 'the CLI found hits the wasm did not');
    const batch = scene.intersectAllRays(rays);
    assert.equal(batch.hits, row, 'intersectAllRays: hit count');
    for (let k = 0; k < row; k++) {
      assert.equal(batch.prim[k], Number(theirs.prim[k]), `intersectAllRays: prim of hit ${k}`);
      assert.equal(bits(batch.t[k]), bits(theirs.t[k]), `intersectAllRays: t of hit ${k}`);
    }
    for (let i = 0; i < nr; i++) {
      for (let k = batch.offsets[i]; k < batch.offsets[i + 1]; k++) assert.equal(Number(theirs.ray[k]), i);
    }
    assert.ok(row > nr, `only ${row} hits for ${nr} rays`);
    scene.dispose();
  });
}

/** Pixels to pick: a grid over the middle of the view and random ones anywhere. */
function pixels(w, h, seed) {
  const rnd = random(seed);
  const out = [];
  for (let j = 0; j < 3; j++) for (let i = 0; i < 3; i++) out.push([w * (0.4 + 0.1 * i) + 0.25, h * (0.4 + 0.1 * j) + 0.75]);
  for (let k = 0; k < 3; k++) out.push([Math.fround(rnd() * w), Math.fround(rnd() * h)]);
  return out;
}

/** A window position as `--pixel` reads it exactly: with a decimal point (an integer would mean
 * the pixel's centre). */
const exact = (x) => (Number.isInteger(x) ? `${x}.0` : `${x}`);

const bunnyCamera = { eye: [0, 0.1, 0.3], target: [0, 0.1, 0], up: [0, 1, 0], fovDeg: 45 };
const pickCases = [
  ['bunny', BUNNY, { width: 800, height: 600, convention: 'gl' }],
  ['bunny', BUNNY, { width: 331, height: 247, convention: 'vulkan', pixelOrigin: 'bottom-left', ...bunnyCamera }],
  ['bunny', BUNNY, { width: 640, height: 480, convention: 'd3d', ...bunnyCamera, eye: [0.12, 0.2, 0.25], fovDeg: 30.5 }],
  ['sponza', SPONZA, { width: 800, height: 600, convention: 'd3d' }],
  ['sponza', SPONZA, { width: 500, height: 300, convention: 'gl', eye: [-8, 3, 0.5], target: [5, 4, -0.5], up: [0, 1, 0], fovDeg: 70 }],
];

for (const [name, model, cam] of pickCases) {
  const desc = `${name} ${cam.width}x${cam.height} ${cam.convention}${cam.eye ? ' --camera' : ''}`;
  test(`${desc}: Scene.pick equals raypick pick, bit for bit`, () => {
    const { path, bytes } = buildRpk(model);
    const scene = Scene.fromBytes(bytes);
    const camera = Camera.forScene(scene, cam);
    const args = ['--size', `${cam.width}x${cam.height}`, '--convention', cam.convention];
    if (cam.eye) args.push(`--camera=${[...cam.eye, ...cam.target, ...cam.up, cam.fovDeg].join(',')}`);
    if (cam.pixelOrigin) args.push('--origin', cam.pixelOrigin);
    let hits = 0;
    for (const [x, y] of pixels(cam.width, cam.height, cam.width)) {
      const theirs = cliPick(path, [...args, '--pixel', `${exact(x)},${exact(y)}`]);
      const ours = scene.pick(camera, x, y);
      const at = `${desc} pixel (${x}, ${y})`;
      assert.equal(ours === null, theirs.hit === null, `${at}: hit or miss`);
      if (!ours) continue;
      hits++;
      const f = (v) => v.map(Math.fround);
      assert.deepEqual(ours.ray.origin, f(theirs.ray.origin), `${at}: ray origin`);
      assert.deepEqual(ours.ray.dir, f(theirs.ray.dir), `${at}: ray dir`);
      assert.equal(ours.prim, theirs.hit.triangle, `${at}: triangle`);
      assert.equal(ours.geom, theirs.hit.geometry, `${at}: geometry`);
      assert.equal(ours.instance, theirs.hit.instance, `${at}: instance`);
      assert.equal(ours.t, Math.fround(theirs.hit.t), `${at}: t`);
      assert.equal(ours.u, Math.fround(theirs.hit.u), `${at}: u`);
      assert.equal(ours.v, Math.fround(theirs.hit.v), `${at}: v`);
      assert.deepEqual(ours.point, f(theirs.hit.point), `${at}: point`);
      assert.deepEqual(ours.normal, f(theirs.hit.normal), `${at}: normal`);
    }
    assert.ok(hits >= 6, `${desc}: only ${hits} pixels hit`);
    // An integer pixel means its centre to the CLI.
    const theirs = cliPick(path, [...args, '--pixel', `${cam.width >> 1},${cam.height >> 1}`]);
    const ours = scene.pick(camera, (cam.width >> 1) + 0.5, (cam.height >> 1) + 0.5);
    assert.equal(ours?.prim ?? null, theirs.hit?.triangle ?? null);
    camera.dispose();
    scene.dispose();
  });
}
