// The JS API on small scenes with known answers: bad input is a RaypickError naming the field,
// invalid rays and points are misses, instances, masks, culling, ranges, point queries, cameras,
// scene files and the render list answer as the engine's rules say, and nothing leaks.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import { Scene, SceneBuilder, Camera, RaypickError, liveObjects } from '../raypick/index.js';
import { ready, bits } from './support.mjs';

before(ready);

/** A cube of half-size 1 at the origin, 12 counter-clockwise-out triangles. */
function cube() {
  const p = [];
  for (let i = 0; i < 8; i++) p.push(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
  const quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
  const idx = quads.flatMap(([a, b, c, d]) => [a, b, c, a, c, d]);
  return { positions: new Float32Array(p), indices: new Uint32Array(idx) };
}

function cubeScene(options) {
  const b = new SceneBuilder();
  const { positions, indices } = cube();
  b.addMesh(positions, indices, options);
  return b.build();
}

/** Asserts `f` throws a RaypickError of `kind` about `field` whose message matches `message`. */
function throwsRaypick(f, kind, field, message) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof RaypickError, `not a RaypickError: ${e}`);
    assert.equal(e.kind, kind, e.message);
    assert.equal(e.field, field, e.message);
    assert.match(e.message, message);
    return true;
  });
}

test('bad geometry is refused with the field and the element named', () => {
  const b = new SceneBuilder();
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0]), 'argument', 'positions', /length 5 is not a multiple of 3/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, NaN, 0]), 'argument', 'positions', /point 2 has a non-finite y \(NaN\)/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, Infinity], [0, 1, 2]), 'argument', 'positions', /point 2 has a non-finite z/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0], [0, 1, 3]), 'argument', 'indices', /indices\[2\] = 3 \(triangle 0\) is out of range: the mesh has 3 vertices/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0], [0, 1]), 'argument', 'indices', /length 2 is not a multiple of 3/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0], [0, 1, 1.5]), 'argument', 'indices', /indices\[2\] = 1.5 is not an integer/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1]), 'argument', 'positions', /4 vertices without indices/);
  throwsRaypick(() => b.addMesh('not an array'), 'argument', 'positions', /expected a Float32Array/);
  throwsRaypick(() => b.addSpheres([0, 0, 0, 1, 1, 1], [1]), 'argument', 'radii', /1 radii for 2 centres/);
  throwsRaypick(() => b.addSpheres([0, 0, 0], [-1]), 'argument', 'radii', /radius 0 is -1 \(must be finite and >= 0\)/);
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0], null, { mask: -1 }), 'argument', 'mask', /-1 is not an integer/);
  const part = cubeScene();
  const m = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  throwsRaypick(() => b.addInstance(part, m.slice(0, 12)), 'argument', 'worldFromObject', /expected 16 numbers/);
  throwsRaypick(() => b.addInstance(part, m.map((x, i) => (i === 3 ? 0.5 : x))), 'argument', 'worldFromObject', /must be affine/);
  throwsRaypick(() => b.addInstance(part, m.map((x, i) => (i === 13 ? NaN : x))), 'argument', 'worldFromObject', /element 13 \(column 3, row 1\) is NaN/);
  // A singular transform passes the argument checks and is refused by the build.
  b.addInstance(part, m.map((x, i) => (i === 5 ? 0 : x)), { name: 'flat' });
  throwsRaypick(() => b.build(), 'build', 'worldFromObject', /geometry 0 \("flat"\): the instance transform is not invertible in f32/);
  // The builder is used up by build(), even a failed one.
  throwsRaypick(() => b.addMesh([0, 0, 0, 1, 0, 0, 0, 1, 0]), 'handle', 'builder', /used after dispose/);
  part.dispose();
});

test('bad scene files, bad options, bad cameras, disposed objects', () => {
  throwsRaypick(() => Scene.fromBytes(new Uint8Array(64)), 'scene-file', 'bytes', /not a raypick scene file/);
  const scene = cubeScene();
  const bytes = scene.toBytes();
  throwsRaypick(() => Scene.fromBytes(bytes.subarray(0, bytes.length - 9)), 'scene-file', 'bytes', /scene file: /);
  const flipped = bytes.slice();
  flipped[bytes.length >> 1] ^= 0x40;
  throwsRaypick(() => Scene.fromBytes(flipped), 'scene-file', 'bytes', /scene file: /);
  throwsRaypick(() => Scene.fromBytes('abc'), 'argument', 'bytes', /expected an ArrayBuffer/);
  throwsRaypick(() => scene.castRays(new Float32Array(7)), 'argument', 'rays', /length 7 is not a multiple of 6/);
  throwsRaypick(() => scene.intersect([0, 0, 5], [0, 0, -1], { cull: 'sideways' }), 'argument', 'cull', /"sideways" is not one of "none", "back", "front"/);
  throwsRaypick(() => scene.intersect([0, 0], [0, 0, -1]), 'argument', 'origin', /expected \[x, y, z\]/);
  throwsRaypick(() => scene.intersect([0, 0, 5], [0, 0, -1], { ranges: [{ start: 0, end: 1, side: 'up' }] }), 'argument', 'ranges', /"up" is not one of/);
  throwsRaypick(() => scene.intersectAll([0, 0, 5], [0, 0, -1], { edges: 'open' }), 'argument', 'edges', /"open"/);
  throwsRaypick(() => scene.contains([0, 0, 0], { method: 'guess' }), 'argument', 'method', /"guess"/);
  throwsRaypick(() => scene.closestPoint([0, 0, 0], { maxDistance: -1 }), 'argument', 'maxDistance', /-1 must be >= 0/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 1], width: 10, height: 10 }), 'camera', 'camera', /degenerate look-at: eye == target/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 0], up: [0, 0, 1], width: 10, height: 10 }), 'camera', 'camera', /up is zero or parallel/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 0], width: 0, height: 10 }), 'argument', 'width', /a 0x10 viewport/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 0], width: 10, height: 10, convention: 'directx12' }), 'argument', 'convention', /"directx12"/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 0], width: 10, height: 10, near: 0 }), 'camera', 'camera', /near must be finite and > 0/);
  throwsRaypick(() => Camera.lookAt({ eye: [0, 0, 1], target: [0, 0, 0], width: 10, height: 10, projection: 'orthographic', reverseZ: true }), 'argument', 'reverseZ', /perspective/);
  throwsRaypick(() => Camera.fromMatrices(new Array(16).fill(0), new Array(16).fill(0), { width: 4, height: 4 }), 'camera', 'camera', /singular/);
  throwsRaypick(() => Camera.forScene(scene, { eye: [0, 0, 5], target: [0, 0, 0], fovDeg: 180 }), 'argument', 'fovDeg', /180 must be in \(0, 180\)/);
  scene.dispose();
  scene.dispose(); // twice is harmless
  throwsRaypick(() => scene.intersect([0, 0, 5], [0, 0, -1]), 'handle', 'scene', /used after dispose/);
  throwsRaypick(() => scene.toBytes(), 'handle', 'scene', /used after dispose/);
});

test('invalid rays and points are misses, not errors', () => {
  const scene = cubeScene();
  const dirs = [[NaN, 0, -1], [0, 0, Infinity], [0, 0, 0]];
  for (const d of dirs) {
    assert.equal(scene.intersect([0, 0, 5], d), null, `dir ${d}`);
    assert.equal(scene.occluded([0, 0, 5], d), false);
    assert.deepEqual(scene.intersectAll([0, 0, 5], d), []);
    assert.equal(scene.countHits([0, 0, 5], d), 0);
  }
  assert.equal(scene.intersect([NaN, 0, 5], [0, 0, -1]), null);
  assert.equal(scene.intersect([0, 0, 5], [0, 0, -1], { tNear: 3, tFar: 2 }), null);
  assert.equal(scene.intersect([0, 0, 5], [0, 0, -1], { tFar: NaN }), null);
  const rays = new Float32Array([0, 0, 5, 0, 0, -1, NaN, 0, 5, 0, 0, -1, 0, 0, 5, 0, 0, 0, 0, 0, 5, 0, 0, -Infinity]);
  const cast = scene.castRays(rays);
  assert.deepEqual(Array.from(cast.t), [4, Infinity, Infinity, Infinity]);
  assert.deepEqual(Array.from(cast.prim).slice(1), [-1, -1, -1]);
  assert.deepEqual(Array.from(cast.geom), [0, -1, -1, -1]);
  assert.equal(cast.hits, 1);
  assert.deepEqual(Array.from(scene.occludedRays(rays)), [1, 0, 0, 0]);
  assert.equal(scene.closestPoint([NaN, 0, 0]), null);
  assert.ok(Number.isNaN(scene.distance([0, Infinity, 0])));
  assert.equal(scene.contains([NaN, 0, 0]), false);
  scene.dispose();
});

test('hits: t, barycentrics, normal, culling, masks, ranges, all hits and counts', () => {
  const b = new SceneBuilder();
  const { positions, indices } = cube();
  assert.equal(b.addMesh(positions, indices, { name: 'cube', mask: 1 }), 0);
  assert.equal(b.addSpheres([0, 0, -5], [1], { name: 'ball', mask: 2 }), 1);
  const scene = b.build();
  const h = scene.intersect([0.5, -0.25, 5], [0, 0, -2]);
  assert.equal(h.t, 2); // in units of dir: the +z face at z = 1
  assert.deepEqual(h.normal, [0, 0, 1]);
  assert.deepEqual(h.point, [0.5, -0.25, 1]);
  assert.equal(h.geom, 0);
  assert.equal(h.instance, null);
  assert.deepEqual(h.instancePath, []);
  assert.ok(h.prim === 2 || h.prim === 3, `the +z face's triangles are 2 and 3, got ${h.prim}`);
  // The point rebuilt from the barycentrics of the triangle's vertices.
  const v = (i) => Array.from(positions.subarray(3 * indices[3 * h.prim + i], 3 * indices[3 * h.prim + i] + 3));
  const p = [0, 1, 2].map((k) => (1 - h.u - h.v) * v(0)[k] + h.u * v(1)[k] + h.v * v(2)[k]);
  p.forEach((x, k) => assert.ok(Math.abs(x - h.point[k]) < 1e-6));
  // Back faces from inside, front faces from outside.
  assert.equal(scene.intersect([0, 0, 0], [0, 0, 1], { cull: 'back' }), null);
  assert.equal(scene.intersect([0, 0, 0], [0, 0, 1], { cull: 'front', mask: 1 }).t, 1);
  assert.equal(scene.intersect([0, 0, 5], [0, 0, -1], { cull: 'front', mask: 1 }).t, 6);
  // Masks: only the ball.
  assert.equal(scene.intersect([0, 0, 5], [0, 0, -1], { mask: 2 }).geom, 1);
  assert.equal(scene.intersect([0, 0, 5], [0, 0, -1], { mask: 4 }), null);
  // All hits: the cube's two faces then the ball's two crossings.
  const all = scene.intersectAll([0.5, 0.25, 5], [0, 0, -1]);
  assert.deepEqual(all.map((x) => x.geom), [0, 0, 1, 1]);
  assert.deepEqual(all.slice(0, 2).map((x) => x.t), [4, 6]);
  const half = Math.sqrt(1 - 0.5 ** 2 - 0.25 ** 2); // the ball's half chord at that offset
  assert.ok(Math.abs(all[2].t - (10 - half)) < 1e-5 && Math.abs(all[3].t - (10 + half)) < 1e-5);
  assert.equal(scene.countHits([0.5, 0.25, 5], [0, 0, -1]), 4);
  assert.equal(scene.countHits([0.5, 0.25, 5], [0, 0, -1], { tFar: 7 }), 2);
  // Through a diagonal every face's two triangles share: closed edges report both, half-open one.
  assert.equal(scene.intersectAll([0, 0, 5], [0, 0, -1], { mask: 1 }).length, 2);
  assert.equal(scene.intersectAll([0, 0, 5], [0, 0, -1], { mask: 1, edges: 'closed' }).length, 4);
  // Ranges keep primitives: only the -z face (triangles 0 and 1), seen from outside it.
  const r = { ranges: [{ start: 0, end: 2, side: 'both' }], mask: 1 };
  assert.equal(scene.intersect([0.5, 0.25, 5], [0, 0, -1], r).t, 6);
  assert.equal(scene.intersect([0.5, 0.25, 5], [0, 0, -1], { ...r, ranges: [{ start: 0, end: 2, side: 'front' }] }), null);
  assert.equal(scene.occluded([0.5, 0.25, 5], [0, 0, -1], { ...r, tFar: 5.5 }), false);
  assert.equal(scene.occluded([0.5, 0.25, 5], [0, 0, -1], { ...r, tFar: 6 }), true);
  // The batch answers as single rays, with options.
  const rays = new Float32Array([0.5, 0.25, 5, 0, 0, -1, 0, 0, 0, 0, 0, 1, 3, 3, 3, -1, -1, -1]);
  for (const o of [{}, { cull: 'back' }, { cull: 'front' }, r, { mask: 2 }]) {
    const c = scene.castRays(rays, o);
    for (let i = 0; i < 3; i++) {
      const s = scene.intersect(rays.subarray(6 * i, 6 * i + 3), rays.subarray(6 * i + 3, 6 * i + 6), o);
      assert.equal(c.prim[i], s ? s.prim : -1, `${JSON.stringify(o)} ray ${i}`);
      assert.equal(bits(c.t[i]), bits(s ? s.t : Infinity));
    }
  }
  // The all-hits batch answers as intersectAll ray by ray, with options and both edge rules.
  for (const o of [{}, { cull: 'back' }, { cull: 'front' }, r, { mask: 1, edges: 'closed' }, { tFar: 7 }]) {
    const a = scene.intersectAllRays(rays, o);
    assert.equal(a.offsets.length, 4);
    assert.equal(a.offsets[3], a.hits);
    for (let i = 0; i < 3; i++) {
      const s = scene.intersectAll(rays.subarray(6 * i, 6 * i + 3), rays.subarray(6 * i + 3, 6 * i + 6), o);
      assert.equal(a.offsets[i + 1] - a.offsets[i], s.length, `${JSON.stringify(o)} ray ${i}`);
      s.forEach((h, k) => {
        const j = a.offsets[i] + k;
        assert.deepEqual([a.prim[j], a.geom[j], a.instance[j]], [h.prim, h.geom, h.instance ?? -1]);
        assert.deepEqual([bits(a.t[j]), bits(a.u[j]), bits(a.v[j])], [bits(h.t), bits(h.u), bits(h.v)]);
      });
    }
  }
  assert.equal(scene.intersectAllRays(new Float32Array(0)).offsets.length, 1);
  throwsRaypick(() => scene.intersectAllRays(rays, { edges: 'open' }), 'argument', 'edges', /"open"/);
  scene.dispose();
});

test('instances: ids, paths, transforms, summary and render list', () => {
  const part = cubeScene({ name: 'box' });
  const b = new SceneBuilder();
  const t = (x, y, z, s = 1) => [s, 0, 0, 0, 0, s, 0, 0, 0, 0, s, 0, x, y, z, 1];
  assert.equal(b.addInstance(part, t(0, 0, 0), { name: 'a' }), 0);
  assert.equal(b.addInstance(part, t(0, 0, -10, 2), { name: 'b' }), 1);
  const mid = b.build();
  const b2 = new SceneBuilder();
  b2.addSpheres([5, 0, 0], [0.5]);
  b2.addInstance(mid, t(0, 0, -1), { name: 'mid' });
  const world = b2.build();
  part.dispose(); // the instances keep it
  mid.dispose();
  const h = world.intersect([0.5, 0.5, 10], [0, 0, -1]);
  assert.equal(h.t, 10); // the +z face of 'a', moved to z = 0
  assert.equal(h.instance, 1);
  assert.deepEqual(h.instancePath, [1, 0]);
  assert.equal(h.geom, 0);
  const far = world.intersectAll([0.5, 0.5, 10], [0, 0, -1]);
  assert.deepEqual(far.map((x) => [x.t, x.instancePath]), [[10, [1, 0]], [12, [1, 0]], [19, [1, 1]], [23, [1, 1]]]);
  const s = world.summary();
  assert.deepEqual(s.bounds, { min: [-2, -2, -13], max: [5.5, 2, 0.5] });
  assert.equal(s.totalTriangles, 24);
  assert.equal(s.instanceDepth, 2);
  assert.deepEqual(s.geometries.map((g) => [g.kind, g.name]), [['spheres', null], ['instance', 'mid']]);
  const rd = world.renderData();
  assert.equal(rd.meshes.length, 1); // one cube, placed twice
  assert.equal(rd.sphereSets.length, 1);
  assert.deepEqual(Array.from(rd.sphereSets[0].spheres), [5, 0, 0, 0.5]);
  const placed = rd.items.filter((i) => i.kind === 'mesh');
  assert.deepEqual(placed.map((i) => [i.path, i.pathNames, i.name]), [[[1, 0], ['mid', 'a'], 'box'], [[1, 1], ['mid', 'b'], 'box']]);
  assert.deepEqual(Array.from(placed[1].matrix), t(0, 0, -11, 2));
  // The render list draws what is picked: the hit point is a placed triangle's point.
  const m = rd.meshes[placed[1].data];
  const hit = far[2];
  const M = placed.find((i) => i.path.join() === hit.instancePath.join()).matrix;
  const tri = [0, 1, 2].map((k) => {
    const q = m.positions.subarray(3 * m.indices[3 * hit.prim + k], 3 * m.indices[3 * hit.prim + k] + 3);
    return [0, 1, 2].map((r) => M[r] * q[0] + M[4 + r] * q[1] + M[8 + r] * q[2] + M[12 + r]);
  });
  const p = [0, 1, 2].map((k) => (1 - hit.u - hit.v) * tri[0][k] + hit.u * tri[1][k] + hit.v * tri[2][k]);
  p.forEach((x, k) => assert.ok(Math.abs(x - hit.point[k]) < 1e-5, `${p} vs ${hit.point}`));
  // Scene files keep all of it.
  const again = Scene.fromBytes(world.toBytes());
  assert.deepEqual(again.intersectAll([0.5, 0.5, 10], [0, 0, -1]), far);
  assert.deepEqual(again.summary(), s);
  again.dispose();
  world.dispose();
});

test('point queries on the cube: closest point, distance, inside, signed distance', () => {
  const scene = cubeScene();
  const c = scene.closestPoint([3, 0.5, 0.25]);
  assert.deepEqual(c.point, [1, 0.5, 0.25]);
  assert.equal(c.distance, 2);
  assert.deepEqual(c.normal, [1, 0, 0]);
  assert.equal(scene.closestPoint([3, 0, 0], { maxDistance: 1.5 }), null);
  assert.equal(scene.distance([0, 0, 4]), 3);
  assert.equal(scene.contains([0.2, 0.3, -0.4]), true);
  assert.equal(scene.contains([0.2, 0.3, -0.4], { method: 'winding' }), true);
  assert.equal(scene.contains([2, 0, 0]), false);
  assert.equal(scene.signedDistance([0.5, 0, 0]), -0.5);
  assert.deepEqual(Array.from(scene.signedDistances(new Float32Array([0.5, 0, 0, 0, 0, 3, NaN, 0, 0]))), [-0.5, 2, NaN]);
  scene.dispose();
});

test('cameras: look-at, matrices, the renderer\'s matrices, projection, orthographic, pick', () => {
  const scene = cubeScene();
  const cam = Camera.lookAt({ eye: [0, 0, 5], target: [0, 0, 0], fovYDeg: 60, width: 200, height: 100, near: 0.1, far: 100 });
  const p = scene.pick(cam, 100, 50);
  assert.equal(p.geom, 0);
  assert.ok(Math.abs(p.t - 3.9) < 1e-5, `t ${p.t} from the near plane`);
  assert.deepEqual(p.ray.dir, [0, 0, -1]);
  assert.deepEqual(p.pixel, [100, 50]);
  assert.equal(scene.pick(cam, 2, 2), null);
  // The window centre projects back to the centre.
  const w = cam.project([0, 0, 0]);
  assert.ok(Math.abs(w[0] - 100) < 1e-4 && Math.abs(w[1] - 50) < 1e-4);
  // A camera made from the first one's matrices casts the same rays, bit for bit.
  const { viewFromWorld, clipFromView } = cam.matrices();
  const same = Camera.fromMatrices(viewFromWorld, clipFromView, { width: 200, height: 100 });
  for (const [x, y] of [[10.5, 20.25], [100, 50], [199.75, 99.5]]) {
    assert.deepEqual(same.ray(x, y), cam.ray(x, y));
  }
  // Bottom-left pixels: row y from the bottom is row height - y from the top.
  const up = Camera.lookAt({ eye: [0, 0, 5], target: [0, 0, 0], fovYDeg: 60, width: 200, height: 100, pixelOrigin: 'bottom-left' });
  const down = Camera.lookAt({ eye: [0, 0, 5], target: [0, 0, 0], fovYDeg: 60, width: 200, height: 100 });
  assert.deepEqual(up.ray(30.5, 20.5), down.ray(30.5, 79.5));
  // Orthographic rays are parallel; the pick culls as asked.
  const ortho = Camera.lookAt({ eye: [0, 0, 5], target: [0, 0, 0], width: 100, height: 100, projection: 'orthographic', orthoHeight: 4 });
  assert.deepEqual(ortho.ray(10, 10).dir, ortho.ray(90, 70).dir);
  // The far face (z = -1), t from the near plane (z = 5 - 0.01, as the f32 matrices round it).
  const back = scene.pick(ortho, 50, 50, { cull: 'front' });
  assert.deepEqual(back.point.map((x) => Math.abs(x)), [0, 0, 1]);
  assert.ok(Math.abs(back.t - (back.ray.origin[2] + 1)) < 1e-6 && Math.abs(back.t - 5.99) < 1e-4);
  assert.equal(scene.pick(ortho, 5, 5), null); // outside the 2-unit cube in a 4-unit view
  // Framing puts the scene's centre in the window's centre.
  const framed = Camera.frameBounds(scene, { width: 320, height: 240, convention: 'webgpu' });
  const c = framed.project([0, 0, 0]);
  assert.ok(Math.abs(c[0] - 160) < 1e-3 && Math.abs(c[1] - 120) < 1e-3);
  for (const x of [cam, same, up, down, ortho, framed]) x.dispose();
  scene.dispose();
});

test('dispose frees everything; garbage is collected too', () => {
  const before = liveObjects();
  const scene = cubeScene();
  const cam = Camera.lookAt({ eye: [0, 0, 5], target: [0, 0, 0], width: 10, height: 10 });
  scene.castRays(new Float32Array(60));
  scene.renderData();
  scene.toBytes();
  scene.intersectAll([0, 0, 5], [0, 0, -1], { ranges: [{ start: 0, end: 12 }] });
  assert.equal(liveObjects(), before + 2);
  cam.dispose();
  scene.dispose();
  assert.equal(liveObjects(), before);
});

test("'spatial' quality: long slivers cut by spatial splits answer as the balanced tree", () => {
  // Seeded (mulberry32) long, thin strips across a box: their boxes all overlap, which is where
  // spatial splits pay and a triangle ends up in several leaves.
  let seed = 33;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const positions = [];
  for (let i = 0; i < 300; i++) {
    const a = [0, 1, 2].map(() => 10 * rand());
    const b = [0, 1, 2].map(() => 10 * rand());
    const w = [0, 1, 2].map(() => 0.05 * (rand() - 0.5));
    positions.push(...a, ...b, ...a.map((x, k) => x + w[k]));
  }
  const build = (quality) => {
    const b = new SceneBuilder({ quality });
    b.addMesh(new Float32Array(positions));
    return b.build();
  };
  const [balanced, high, spatial] = ['balanced', 'high', 'spatial'].map(build);
  // The kept tree is the split one: its leaves hold more triangle references than there are
  // triangles, which makes its file longer (the plain tree, kept where splits do not pay, is
  // stored in as many bytes as 'high' stores it).
  assert.ok(spatial.toBytes().length > high.toBytes().length, 'the spatial tree repeats cut triangles');
  const reloaded = Scene.fromBytes(spatial.toBytes());
  const rays = new Float32Array(6 * 2000);
  for (let i = 0; i < 2000; i++) {
    // From outside the box toward a point inside a random strip (a + s (b - a) + (c - a) / 4).
    const o = [0, 1, 2].map(() => 14 * rand() - 2);
    const [k, s] = [Math.floor(300 * rand()), 0.7 * rand()];
    const [a, b, c] = [0, 1, 2].map((j) => positions.slice(9 * k + 3 * j, 9 * k + 3 * j + 3));
    const d = [0, 1, 2].map((j) => a[j] + s * (b[j] - a[j]) + 0.25 * (c[j] - a[j]) - o[j]);
    rays.set([...o, ...d], 6 * i);
  }
  const want = balanced.castRays(rays);
  const wantAll = balanced.intersectAllRays(rays);
  assert.ok(want.hits > 1900, `the rays hit (${want.hits})`);
  for (const scene of [spatial, reloaded]) {
    const got = scene.castRays(rays);
    assert.deepEqual(Array.from(got.prim), Array.from(want.prim));
    assert.deepEqual(Array.from(got.t, bits), Array.from(want.t, bits));
    // Every crossing once, though a cut triangle sits in several leaves.
    const all = scene.intersectAllRays(rays);
    assert.deepEqual(Array.from(all.offsets), Array.from(wantAll.offsets));
    assert.deepEqual(Array.from(all.prim), Array.from(wantAll.prim));
  }
  for (const s of [balanced, high, spatial, reloaded]) s.dispose();
});
