// The three.js adapter against three.js's own Raycaster (three's npm package runs in Node without
// WebGL): the same intersections (faceIndex, distance, point, face, barycoord, uv, normal,
// instanceId), in the same order, for transformed meshes, indexed and not, groups with per-group
// sides, drawRange, near / far, firstHitOnly and InstancedMesh; the fallback without a bounds
// tree; and rays through edges and vertices, held against the native engine.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';

import * as THREE from 'three';
import { Scene, liveObjects } from '../raypick/index.js';
import { computeBoundsTree, disposeBoundsTree, acceleratedRaycast, MeshBoundsTree } from '../raypick/three.js';
import { ready, buildRpk, cli, writeRays, readNpz, scratch, random, bits, BUNNY } from './support.mjs';

const threeRaycast = THREE.Mesh.prototype.raycast;

before(async () => {
  await ready();
  THREE.BufferGeometry.prototype.computeBoundsTree = computeBoundsTree;
  THREE.BufferGeometry.prototype.disposeBoundsTree = disposeBoundsTree;
});

/** The bunny as a three.js geometry (the triangles of its .rpk), with normals and two uv sets. */
function bunnyGeometry() {
  const scene = Scene.fromBytes(buildRpk(BUNNY).bytes);
  const { meshes } = scene.renderData();
  scene.dispose();
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(meshes[0].positions, 3));
  g.setIndex(new THREE.BufferAttribute(meshes[0].indices, 1));
  g.computeVertexNormals();
  const p = meshes[0].positions;
  const uv = new Float32Array((p.length / 3) * 2);
  for (let i = 0; i < p.length / 3; i++) {
    uv[2 * i] = 10 * p[3 * i];
    uv[2 * i + 1] = 10 * p[3 * i + 1] + 5 * p[3 * i + 2];
  }
  g.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
  g.setAttribute('uv1', new THREE.BufferAttribute(uv.map((x) => 1 - x), 2));
  return g;
}

/** Both raycasts of `objects` for the current ray: [three's, ours]. */
function both(raycaster, objects) {
  THREE.Mesh.prototype.raycast = threeRaycast;
  const theirs = raycaster.intersectObjects(objects);
  THREE.Mesh.prototype.raycast = acceleratedRaycast;
  const ours = raycaster.intersectObjects(objects);
  THREE.Mesh.prototype.raycast = threeRaycast;
  return [theirs, ours];
}

const close = (a, b, tol) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(a));
const closeVec = (a, b, tol) => a.distanceTo(b) <= tol * Math.max(1, a.length());

/** The hit triangle's world vertices. */
function worldTriangle(h) {
  const m = h.object.matrixWorld.clone();
  if (h.instanceId !== undefined) m.multiply(h.object.getMatrixAt(h.instanceId, new THREE.Matrix4()));
  const p = h.object.geometry.attributes.position;
  return [h.face.a, h.face.b, h.face.c].map((i) => new THREE.Vector3().fromBufferAttribute(p, i).applyMatrix4(m));
}

function smallestEdge(h) {
  const [a, b, c] = worldTriangle(h);
  return Math.min(a.distanceTo(b), b.distanceTo(c), c.distanceTo(a));
}

/** |cos| of the angle between the ray and the hit triangle's world plane: how well the hit
 * point is determined (an error of the direction or of the vertices moves it by 1/|cos|). */
function conditioning(h, ray) {
  const [a, b, c] = worldTriangle(h);
  const n = b.sub(a).cross(c.sub(a)).normalize();
  return Math.abs(n.dot(ray.direction));
}

/**
 * Whether f32 and f64 may disagree about `h`: the ray passes within rounding of one of the
 * triangle's edges (so the hit may belong to the neighbour, or to nothing the query keeps), or
 * grazes the triangle (so which side faces the ray is not determined).
 */
function ambiguous(h, ray) {
  const [a, b, c] = worldTriangle(h);
  const area2 = b.clone().sub(a).cross(c.clone().sub(a)).length();
  const w = [h.barycoord.x, h.barycoord.y, h.barycoord.z];
  const opposite = [b.distanceTo(c), c.distanceTo(a), a.distanceTo(b)];
  // Distance from the hit point to each edge, in the triangle's plane.
  const toEdge = Math.min(...w.map((wi, i) => Math.abs(wi) * (area2 / opposite[i])));
  const cos = conditioning(h, ray);
  // Some ulps of f32 at the size of the coordinates involved.
  const scale = Math.max(ray.origin.length(), h.point.length(), h.distance);
  return toEdge * cos < 5e-7 * scale || cos < 1e-4;
}

/** Asserts one intersection equals three's: the same triangle, object and instance; the same
 * distance, point and interpolated attributes within f32's precision of the ray's conditioning
 * (three.js computes in f64, the engine in f32). */
function assertSameHit(ours, theirs, ray, at) {
  assert.equal(ours.faceIndex, theirs.faceIndex, `${at}: faceIndex`);
  assert.equal(ours.object, theirs.object, `${at}: object`);
  assert.equal(ours.instanceId, theirs.instanceId, `${at}: instanceId`);
  assert.deepEqual([ours.face.a, ours.face.b, ours.face.c], [theirs.face.a, theirs.face.b, theirs.face.c], `${at}: face`);
  assert.equal(ours.face.materialIndex, theirs.face.materialIndex, `${at}: materialIndex`);
  assert.ok(closeVec(ours.face.normal, theirs.face.normal, 1e-5), `${at}: face.normal`);
  const cos = conditioning(theirs, ray);
  // f32 rounding of the object-space ray and vertices: a few 1e-7 of the coordinates, over |cos|.
  const scale = Math.max(1, ray.origin.length(), theirs.point.length());
  const tol = 1e-5 * Math.max(1, theirs.distance) + (1e-6 * scale) / Math.max(cos, 1e-9);
  assert.ok(Math.abs(ours.distance - theirs.distance) <= tol, `${at}: distance ${ours.distance} vs ${theirs.distance} (|cos| ${cos})`);
  assert.ok(ours.point.distanceTo(theirs.point) <= tol, `${at}: point`);
  for (const key of ['uv', 'uv1', 'normal']) assert.equal(key in ours, key in theirs, `${at}: ${key} present`);
  if (cos < 0.05) return; // grazing: the barycentrics are barely determined
  // The point's error over the triangle's size.
  const bary = 1e-4 + (2 * tol) / smallestEdge(theirs);
  assert.ok(closeVec(ours.barycoord, theirs.barycoord, bary), `${at}: barycoord`);
  for (const key of ['uv', 'uv1', 'normal']) {
    if (key in theirs) assert.ok(closeVec(ours[key], theirs[key], 10 * bary), `${at}: ${key}`);
  }
}

/** Asserts the lists are three's: in order, except that hits closer than the tolerance (ties at
 * an edge, which three and raypick order by rounding and by index) may come in either order. */
function assertSameHits(ours, theirs, ray, at) {
  assert.equal(ours.length, theirs.length, `${at}: ${ours.length} hits vs three's ${theirs.length}`);
  const key = (h) => `${h.object.id}/${h.instanceId}/${h.faceIndex}`;
  for (let i = 0; i < theirs.length; ) {
    let j = i + 1;
    while (j < theirs.length && close(theirs[j].distance, theirs[i].distance, 1e-5)) j++;
    const mine = new Map(ours.slice(i, j).map((h) => [key(h), h]));
    for (const h of theirs.slice(i, j)) {
      assert.ok(mine.has(key(h)), `${at}: three's hit ${key(h)} at ${h.distance} is missing`);
      assertSameHit(mine.get(key(h)), h, ray, `${at}, hit ${key(h)}`);
    }
    i = j;
  }
}

/** A random point on the surface of one of `objects` (a mesh, or an instance of an
 * InstancedMesh), in world space. */
function surfacePoint(objects, rnd) {
  const o = objects[Math.floor(rnd() * objects.length)];
  const g = o.geometry;
  const p = g.attributes.position;
  // A triangle the draw range keeps.
  const count = g.index ? g.index.count : p.count;
  const first = Math.ceil(g.drawRange.start / 3);
  const end = Math.floor(Math.min(count, g.drawRange.start + g.drawRange.count) / 3);
  const t = first + Math.floor(rnd() * (end - first));
  const v = (k) => new THREE.Vector3().fromBufferAttribute(p, g.index ? g.index.getX(3 * t + k) : 3 * t + k);
  const [a, b] = [rnd(), rnd()];
  const [u, w] = a + b > 1 ? [1 - a, 1 - b] : [a, b];
  const q = v(0).multiplyScalar(1 - u - w).addScaledVector(v(1), u).addScaledVector(v(2), w);
  if (o.isInstancedMesh) {
    const m = new THREE.Matrix4();
    o.getMatrixAt(Math.floor(rnd() * o.count), m);
    q.applyMatrix4(m);
  }
  return q.applyMatrix4(o.matrixWorld);
}

/** Rays: mostly from around the objects towards points of their surfaces (so most hit, and
 * many cross several layers), some through the pixels of a perspective camera
 * (setFromCamera), some from inside their box in random directions. */
function* rays(raycaster, objects, box, n, seed) {
  const rnd = random(seed);
  const c = box.getCenter(new THREE.Vector3());
  const r = box.getSize(new THREE.Vector3()).length();
  const camera = new THREE.PerspectiveCamera(50, 4 / 3, 0.01, 100);
  for (let k = 0; k < n; k++) {
    const kind = k % 6;
    if (kind < 4) {
      const o = new THREE.Vector3(2 * rnd() - 1, 2 * rnd() - 1, 2 * rnd() - 1).setLength(r).add(c);
      raycaster.set(o, surfacePoint(objects, rnd).sub(o).normalize());
    } else if (kind === 4) {
      camera.position.set(c.x + r * (2 * rnd() - 1), c.y + r * (2 * rnd() - 1), c.z + 1.5 * r);
      camera.lookAt(c);
      camera.updateMatrixWorld();
      raycaster.setFromCamera(new THREE.Vector2(0.5 * (2 * rnd() - 1), 0.5 * (2 * rnd() - 1)), camera);
    } else {
      const o = new THREE.Vector3(box.min.x + rnd() * (box.max.x - box.min.x), box.min.y + rnd() * (box.max.y - box.min.y), box.min.z + rnd() * (box.max.z - box.min.z));
      raycaster.set(o, new THREE.Vector3(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize());
    }
    yield k;
  }
}

function place(mesh, position, rotation, scale) {
  mesh.position.set(...position);
  mesh.rotation.set(...rotation);
  mesh.scale.set(...scale);
  mesh.updateMatrixWorld(true);
  return mesh;
}

/** Casts `n` rays at `objects` both ways, all hits then the first hit; returns how many hit. */
function compareMany(objects, n, seed, what, setup = () => {}) {
  const raycaster = new THREE.Raycaster();
  setup(raycaster);
  const box = new THREE.Box3();
  for (const o of objects) box.expandByObject(o);
  let hit = 0;
  let skipped = 0;
  for (const k of rays(raycaster, objects, box, n, seed)) {
    const at = `${what}, ray ${k}`;
    raycaster.firstHitOnly = false;
    const [theirs, ours] = both(raycaster, objects);
    // Only where the answer is determined: no hit of either within rounding of an edge.
    if ([...theirs, ...ours].some((h) => ambiguous(h, raycaster.ray))) {
      skipped++;
      continue;
    }
    assertSameHits(ours, theirs, raycaster.ray, at);
    raycaster.firstHitOnly = true;
    const [, first] = both(raycaster, objects);
    if (theirs.length === 0) {
      assert.equal(first.length, 0, `${at}: first hit where three has none`);
      continue;
    }
    hit++;
    // One closest hit per object (three.js's raycaster gathers them from every object).
    const perObject = new Set(theirs.map((h) => `${h.object.id}/${h.instanceId}`)).size;
    assert.equal(first.length, perObject, `${at}: firstHitOnly`);
    const unambiguous = theirs.length === 1 || !close(theirs[1].distance, theirs[0].distance, 1e-5);
    if (unambiguous) assertSameHit(first[0], theirs[0], raycaster.ray, `${at} (first hit)`);
    else assert.ok(close(first[0].distance, theirs[0].distance, 1e-5), `${at}: first distance`);
  }
  if (process.env.RAYPICK_TEST_VERBOSE) console.log(`${what}: ${hit} of ${n} rays hit, ${skipped} skipped`);
  assert.ok(skipped <= n / 50, `${what}: ${skipped} of ${n} rays pass within rounding of an edge`);
  return hit;
}

test('bunny, transformed: the same intersections as three.js, all hits and the first', () => {
  const g = bunnyGeometry();
  assert.ok(g.computeBoundsTree() instanceof MeshBoundsTree);
  const mesh = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide })), [0.3, -0.2, 0.1], [0.3, 1.1, -0.4], [2, 1.5, 0.7]);
  const hits = compareMany([mesh], 900, 1, 'double-sided bunny');
  assert.ok(hits > 300, `only ${hits} rays hit`);
});

test('material.side: FrontSide culls back faces, BackSide front faces, under a mirroring transform too', () => {
  const g = bunnyGeometry();
  g.computeBoundsTree();
  for (const side of [THREE.FrontSide, THREE.BackSide]) {
    const m = new THREE.MeshBasicMaterial({ side });
    const plain = place(new THREE.Mesh(g, m), [0, 0, 0], [0, 0, 0], [1, 1, 1]);
    const mirrored = place(new THREE.Mesh(g, m), [0.5, 0, 0], [0.2, -0.5, 0], [-1.2, 0.8, 1]);
    assert.ok(compareMany([plain, mirrored], 600, 2 + side, `side ${side}`) > 100);
  }
});

test('groups with per-group materials and sides, a group left out, and drawRange', () => {
  const g = bunnyGeometry();
  const n = g.index.count; // entries, three per triangle
  const third = 3 * Math.floor(n / 9);
  g.addGroup(0, third, 0);
  g.addGroup(third, third, 1);
  g.addGroup(2 * third, third, 2);
  // The rest (n - 3 * third entries) is in no group: three.js never hits it.
  g.computeBoundsTree();
  const materials = [THREE.FrontSide, THREE.BackSide, THREE.DoubleSide].map((side) => new THREE.MeshBasicMaterial({ side }));
  const mesh = place(new THREE.Mesh(g, materials), [0, 0.1, 0], [0.4, 0, 0.2], [1, 1, 1]);
  assert.ok(compareMany([mesh], 600, 5, 'groups') > 100);
  // A draw range that cuts a group: both honour it at raycast time, without a rebuild.
  g.setDrawRange(third / 2, third * 2);
  assert.ok(compareMany([mesh], 600, 6, 'groups + drawRange') > 50);
  // One material: groups are ignored, the draw range is not.
  const single = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.FrontSide })), [0, 0, 0], [0, 0, 0], [1, 1, 1]);
  assert.ok(compareMany([single], 400, 7, 'drawRange, one material') > 50);
});

test('non-indexed geometry', () => {
  const g = bunnyGeometry().toNonIndexed();
  g.computeBoundsTree();
  const mesh = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide })), [0, 0, 0], [-0.3, 0.2, 0], [1, 2, 1]);
  assert.ok(compareMany([mesh], 600, 8, 'non-indexed') > 100);
  g.setDrawRange(3 * 1000, 3 * 2000);
  assert.ok(compareMany([mesh], 400, 9, 'non-indexed + drawRange') > 20);
});

test('raycaster.near and far bound the world distance', () => {
  const g = bunnyGeometry();
  g.computeBoundsTree();
  const mesh = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide })), [0, 0, 0], [0, 0, 0], [3, 3, 3]);
  const hits = compareMany([mesh], 600, 10, 'near/far', (r) => {
    r.near = 0.45;
    r.far = 0.8;
  });
  assert.ok(hits > 50, `only ${hits} rays hit within near..far`);
});

test('InstancedMesh: instanceId and each instance transform', () => {
  const g = bunnyGeometry();
  g.computeBoundsTree();
  const inst = new THREE.InstancedMesh(g, new THREE.MeshBasicMaterial({ side: THREE.FrontSide }), 6);
  const rnd = random(12);
  const m = new THREE.Matrix4();
  for (let i = 0; i < inst.count; i++) {
    m.compose(
      new THREE.Vector3(0.3 * (rnd() - 0.5), 0.3 * (rnd() - 0.5), 0.3 * (rnd() - 0.5)),
      new THREE.Quaternion().setFromEuler(new THREE.Euler(rnd() * 3, rnd() * 3, rnd() * 3)),
      new THREE.Vector3(0.5 + rnd(), 0.5 + rnd(), 0.5 + rnd()),
    );
    inst.setMatrixAt(i, m);
  }
  inst.updateMatrixWorld(true);
  inst.computeBoundingSphere();
  const hits = compareMany([inst], 600, 13, 'instanced');
  assert.ok(hits > 200, `only ${hits} rays hit`);
  // The instances really are told apart: a ray from afar at each instance's centre hits it first
  // (or one in front of it).
  g.computeBoundingBox();
  const centre = g.boundingBox.getCenter(new THREE.Vector3());
  const raycaster = new THREE.Raycaster();
  raycaster.firstHitOnly = true;
  THREE.Mesh.prototype.raycast = acceleratedRaycast;
  const ids = new Set();
  for (let i = 0; i < inst.count; i++) {
    const c = centre.clone().applyMatrix4(inst.getMatrixAt(i, new THREE.Matrix4()));
    raycaster.set(c.clone().add(new THREE.Vector3(0, 0, 5)), new THREE.Vector3(0, 0, -1));
    for (const h of raycaster.intersectObject(inst)) ids.add(h.instanceId);
  }
  THREE.Mesh.prototype.raycast = threeRaycast;
  assert.ok(ids.size >= 3, `rays at the ${inst.count} instances hit instances ${[...ids]}`);
});

test('without a bounds tree three.js raycasts; disposeBoundsTree frees the engine copy', () => {
  const g = bunnyGeometry();
  const mesh = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial()), [0, 0, 0], [0, 0, 0], [1, 1, 1]);
  const raycaster = new THREE.Raycaster(new THREE.Vector3(0, 0.1, 1), new THREE.Vector3(0, 0, -1));
  const [theirs, ours] = both(raycaster, [mesh]);
  assert.ok(theirs.length > 0);
  assert.deepEqual(ours, theirs); // the same code ran
  const before = liveObjects();
  g.computeBoundsTree();
  assert.equal(liveObjects(), before + 1);
  const [, tree] = both(raycaster, [mesh]);
  assertSameHits(tree, theirs, raycaster.ray, 'with a tree');
  g.disposeBoundsTree();
  assert.equal(g.boundsTree, null);
  assert.equal(liveObjects(), before);
});

test('refit follows moved vertices', () => {
  const g = bunnyGeometry();
  g.computeBoundsTree();
  const p = g.attributes.position;
  for (let i = 0; i < p.count; i++) p.setXYZ(i, p.getX(i) * 1.5, p.getY(i) + 0.3 * p.getX(i), p.getZ(i));
  p.needsUpdate = true;
  g.computeBoundingSphere();
  g.computeVertexNormals();
  g.boundsTree.refit();
  const mesh = place(new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide })), [0, 0, 0], [0, 0, 0], [1, 1, 1]);
  assert.ok(compareMany([mesh], 400, 14, 'refitted') > 100);
});

test('bad geometry: a NaN vertex or an index out of range is a RaypickError naming the array', () => {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(new Float32Array([0, 0, 0, 1, 0, 0, 0, NaN, 0]), 3));
  assert.throws(() => g.computeBoundsTree(), { name: 'RaypickError', field: 'positions', message: /point 2 has a non-finite y/ });
  g.attributes.position.setY(2, 1);
  g.setIndex([0, 1, 5]);
  assert.throws(() => g.computeBoundsTree(), { name: 'RaypickError', field: 'indices', message: /indices\[2\] = 5/ });
});

test('rays through vertices and edges: the hits three.js finds, the native engine\'s first hit', () => {
  const g = bunnyGeometry();
  g.computeBoundsTree();
  const mesh = new THREE.Mesh(g, new THREE.MeshBasicMaterial({ side: THREE.DoubleSide }));
  mesh.updateMatrixWorld(true);
  const raycaster = new THREE.Raycaster();
  const rnd = random(15);
  const index = g.index.array;
  const p = g.attributes.position.array;
  g.computeBoundingBox();
  const top = Math.fround(g.boundingBox.max.z + 1);
  const rows = [];
  const firsts = [];
  for (let k = 0; k < 300; k++) {
    // Straight down z through a vertex, or through the midpoint of an edge along x or y when
    // that midpoint is exact (the ray then passes through the edge): both hit every triangle
    // with that point.
    const t = Math.floor(rnd() * (index.length / 3));
    const a = index[3 * t];
    const b = index[3 * t + 1];
    let x = p[3 * a];
    let y = p[3 * a + 1];
    if (k % 2 === 1 && p[3 * a + 1] === p[3 * b + 1]) x = Math.fround((p[3 * a] + p[3 * b]) / 2);
    const o = new THREE.Vector3(x, y, top);
    raycaster.set(o, new THREE.Vector3(0, 0, -1));
    raycaster.firstHitOnly = false;
    const [theirs, ours] = both(raycaster, [mesh]);
    assert.ok(ours.length > 0, `vertex ray ${k} missed`);
    assertSameHits(ours, theirs, raycaster.ray, `vertex ray ${k}`);
    raycaster.firstHitOnly = true;
    THREE.Mesh.prototype.raycast = acceleratedRaycast;
    firsts.push(raycaster.intersectObject(mesh)[0]);
    THREE.Mesh.prototype.raycast = threeRaycast;
    rows.push(x, y, top, 0, 0, -1);
  }
  // The native engine on the same triangles and rays: the same first triangle, and the
  // adapter's engine gives the same t bit for bit.
  const { path } = buildRpk(BUNNY);
  const npz = scratch('vertex-rays.npz');
  const batch = new Float32Array(rows);
  cli('cast', path, '--rays', writeRays('vertex.rays', batch), '--out', npz);
  const native = readNpz(npz);
  const engine = g.boundsTree.scene.castRays(batch);
  firsts.forEach((h, k) => {
    assert.equal(h.faceIndex, Number(native.prim[k]), `vertex ray ${k}: native triangle`);
    assert.equal(engine.prim[k], Number(native.prim[k]), `vertex ray ${k}: engine triangle`);
    assert.equal(bits(engine.t[k]), bits(native.t[k]), `vertex ray ${k}: native t`);
    assert.ok(close(h.distance, engine.t[k], 1e-6), `vertex ray ${k}: distance`);
  });
});

test('a ray grazing a cube\'s corner: three.js\'s bounding-sphere test drops it, raypick hits the corner as the native engine does', () => {
  const g = new THREE.BoxGeometry(1, 1, 1);
  g.computeBoundsTree();
  const mesh = new THREE.Mesh(g, new THREE.MeshBasicMaterial());
  mesh.updateMatrixWorld(true);
  // Through the corner (-0.5, -0.5, -0.5) along (0, 1, -1), perpendicular to the corner's
  // radius: the line touches the cube at that vertex only, exactly (f32 origin and direction).
  const corner = new THREE.Vector3(-0.5, -0.5, -0.5);
  const dir = new THREE.Vector3(0, 1, -1);
  const origin = corner.clone().addScaledVector(dir, -4);
  const raycaster = new THREE.Raycaster(origin, dir.clone().normalize());
  const [theirs, ours] = both(raycaster, [mesh]);
  assert.equal(theirs.length, 0, 'three.js now hits this ray: pick another');
  // three's triangle test alone hits it: the miss is the bounding-sphere pre-test's rounding.
  g.boundingSphere.radius *= 2;
  const [wide] = both(raycaster, [mesh]);
  g.computeBoundingSphere();
  assert.ok(wide.length > 0);
  assert.ok(ours.length > 0, 'raypick missed the corner');
  for (const h of ours) assert.ok(h.point.distanceTo(corner) < 1e-6, `hit at ${h.point.toArray()}`);
  // The native engine, on the cube as an OBJ and the same ray (unnormalized: t = 4 at the corner).
  const pos = g.attributes.position.array;
  const obj = [];
  for (let i = 0; i < pos.length; i += 3) obj.push(`v ${pos[i]} ${pos[i + 1]} ${pos[i + 2]}`);
  for (let i = 0; i < g.index.count; i += 3) obj.push(`f ${g.index.getX(i) + 1} ${g.index.getX(i + 1) + 1} ${g.index.getX(i + 2) + 1}`);
  const objPath = scratch('cube.obj');
  writeFileSync(objPath, obj.join('\n') + '\n');
  const npz = scratch('cube.npz');
  cli('cast', objPath, '--rays', writeRays('cube.rays', new Float32Array([...origin.toArray(), ...dir.toArray()])), '--out', npz);
  const native = readNpz(npz);
  const direct = g.boundsTree.scene.intersect(origin, dir);
  assert.equal(direct.prim, Number(native.prim[0]));
  assert.equal(bits(direct.t), bits(native.t[0]));
  assert.equal(direct.t, 4);
  raycaster.firstHitOnly = true;
  THREE.Mesh.prototype.raycast = acceleratedRaycast;
  assert.equal(raycaster.intersectObject(mesh)[0].faceIndex, direct.prim);
  THREE.Mesh.prototype.raycast = threeRaycast;
});

test("computeBoundsTree builds raypick's 'fast' tree unless given a quality", () => {
  const g = bunnyGeometry();
  const bytes = (options) => {
    const tree = g.computeBoundsTree(options);
    const b = Buffer.from(tree.scene.toBytes());
    g.disposeBoundsTree();
    return b;
  };
  const byDefault = bytes();
  assert.ok(byDefault.equals(bytes({ quality: 'fast' })), 'the default is the fast build');
  assert.ok(!byDefault.equals(bytes({ quality: 'balanced' })), 'balanced builds another tree');
});
