// raypick viewer. The camera state lives here. In the WebGL view three.js draws the scene and
// raypick's WebAssembly build picks in the page, on every click and on hover, from the scene file
// the server holds (/api/scene.rpk). The ray-cast views show the server's frames (/render) and
// pick on the server (/api/pick). Both views share one camera: an orbit around `target`, which the
// walk navigation moves with the eye.

const stage = document.getElementById('stage');
const canvas = document.getElementById('view');
const glCanvas = document.getElementById('gl');
const ctx = canvas.getContext('2d');
const statusEl = document.getElementById('status');
const query = new URLSearchParams(location.search);
const clampInt = (s, d, lo, hi) => {
  const n = parseInt(s, 10);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : d;
};

const state = {
  target: [0, 0, 0], yaw: 0, pitch: 0, distance: 1, fov: 45,
  w: clampInt(query.get('w'), 640, 16, 2048),
  h: clampInt(query.get('h'), 480, 16, 2048),
  mode: 'webgl',
  nav: query.get('nav') === 'walk' ? 'walk' : 'orbit',
  hl: null,          // "geom,instance|-,prim" of the picked triangle (server frames)
};
let info = null;
let initial = null;
let pitchLimit = 1.5;
let sceneRadius = 1;

function viewParams() {
  return new URLSearchParams({
    tx: state.target[0], ty: state.target[1], tz: state.target[2],
    yaw: state.yaw, pitch: state.pitch, dist: state.distance, fov: state.fov,
    w: state.w, h: state.h,
  });
}

// ---------------------------------------------------------------------------------------------
// Camera: the orbit; the eye is Orbit::eye, target + distance · (cos p · sin y, sin p, cos p · cos y).
const TAU = 2 * Math.PI;
function eye() {
  const cp = Math.cos(state.pitch), sp = Math.sin(state.pitch);
  const cy = Math.cos(state.yaw), sy = Math.sin(state.yaw);
  return [0, 1, 2].map((i) => state.target[i] + state.distance * [cp * sy, sp, cp * cy][i]);
}
// The explicit camera of the current view, rounded to f32: what raypick-wasm is given for an
// in-page pick, and what `raypick pick --camera` is given to check it (the shortest decimal of an
// f32 reads back as the same f32, so both build the same camera bit for bit).
function cameraSpec() {
  const f32 = Math.fround;
  return {
    eye: eye().map(f32), target: state.target.map(f32), up: [0, 1, 0], fov: f32(state.fov),
    size: [state.w, state.h],
  };
}
function forward() {
  const e = eye();
  const f = state.target.map((t, i) => t - e[i]);
  const l = Math.hypot(...f) || 1;
  return f.map((x) => x / l);
}
function rightUp() {
  const fw = forward();
  let r = [-fw[2], 0, fw[0]];
  const rl = Math.hypot(...r) || 1;
  r = r.map((x) => x / rl);
  const u = [r[1] * fw[2] - r[2] * fw[1], r[2] * fw[0] - r[0] * fw[2], r[0] * fw[1] - r[1] * fw[0]];
  return [r, u];
}
function rotate(dYaw, dPitch) {
  const keepEye = state.nav === 'walk' ? eye() : null;
  state.yaw = (((state.yaw + dYaw) % TAU) + TAU) % TAU;
  state.pitch = Math.max(-pitchLimit, Math.min(pitchLimit, state.pitch + dPitch));
  if (keepEye) {
    // Walking looks around from the eye: the target moves, the eye stays.
    const cp = Math.cos(state.pitch), sp = Math.sin(state.pitch);
    const off = [cp * Math.sin(state.yaw), sp, cp * Math.cos(state.yaw)];
    state.target = keepEye.map((e, i) => e - state.distance * off[i]);
  }
}
function pan(dx, dy) {
  const [r, u] = rightUp();
  // World units per pixel at the target's depth.
  const s = 2 * state.distance * Math.tan((state.fov * Math.PI) / 360) / state.h;
  state.target = state.target.map((t, i) => t - r[i] * dx * s + u[i] * dy * s);
}
function move(along, amount) {
  state.target = state.target.map((t, i) => t + along[i] * amount);
}

// ---------------------------------------------------------------------------------------------
// The WebGL view: three.js draws the scene file's own triangles; raypick-wasm picks.
let THREE = null;
let rp = null;        // the raypick package (web/raypick)
let gl = null;        // { renderer, scene, camera, meshes: Map(key → three.js object), tri, hoverTri }
let rpScene = null;   // the scene in raypick-wasm
let glFrames = 0;
let glDirty = true;

async function startWebGL() {
  THREE = await import('/web/three/three.module.js');
  rp = await import('/web/raypick/index.js');
  await rp.init('/web/raypick/raypick.wasm');
  const bytes = new Uint8Array(await (await fetch('/api/scene.rpk')).arrayBuffer());
  rpScene = rp.Scene.fromBytes(bytes);
  const renderer = new THREE.WebGLRenderer({ canvas: glCanvas, antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(state.w, state.h, false);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x20242c);
  const camera = new THREE.PerspectiveCamera(state.fov, state.w / state.h, 0.01, 1000);
  scene.add(camera);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 0.9));
  const headlight = new THREE.DirectionalLight(0xffffff, 1.6);
  headlight.position.set(0.2, 0.4, 1);
  camera.add(headlight);
  camera.add(headlight.target);
  // Every placed mesh and sphere set of the scene file, drawn where the picks find them: one
  // three.js object per item, keyed by what a hit on it reports (geometry and instance path).
  const draw = rpScene.renderData();
  const geometries = draw.meshes.map(({ positions, indices }) => {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(positions, 3));
    g.setIndex(new THREE.BufferAttribute(indices, 1));
    g.computeVertexNormals();
    return g;
  });
  const ball = new THREE.IcosahedronGeometry(1, 3);
  const meshes = new Map();
  for (const item of draw.items) {
    const material = new THREE.MeshLambertMaterial({
      color: 0xc8c8c8, side: THREE.DoubleSide, flatShading: item.kind === 'mesh',
      polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1,
    });
    let object;
    if (item.kind === 'mesh') {
      object = new THREE.Mesh(geometries[item.data], material);
    } else {
      const spheres = draw.sphereSets[item.data].spheres;
      const n = spheres.length / 4;
      object = new THREE.InstancedMesh(ball, material, n);
      const m = new THREE.Matrix4();
      for (let i = 0; i < n; i++) {
        const r = spheres[4 * i + 3];
        object.setMatrixAt(i, m.makeScale(r, r, r).setPosition(spheres[4 * i], spheres[4 * i + 1], spheres[4 * i + 2]));
      }
    }
    object.matrixAutoUpdate = false;
    object.matrix.fromArray(item.matrix);
    object.matrixWorldNeedsUpdate = true;
    object.frustumCulled = false;
    object.userData = { kind: item.kind };
    scene.add(object);
    meshes.set(meshKey(item.geom, item.path), object);
  }
  const triangle = (color) => {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(9), 3));
    const m = new THREE.Mesh(g, new THREE.MeshBasicMaterial({ color, side: THREE.DoubleSide }));
    m.visible = false;
    m.frustumCulled = false;
    scene.add(m);
    return m;
  };
  gl = { renderer, scene, camera, meshes, tri: triangle(0xff1414), hoverTri: triangle(0xffb000) };
  requestAnimationFrame(frame);
}

const meshKey = (geom, path) => `${geom}/${path.join('.')}`;
const hitKey = (hit) => meshKey(hit.geom, hit.instancePath);

let lastTime = performance.now();
function frame(now) {
  const dt = Math.min(0.1, (now - lastTime) / 1000);
  lastTime = now;
  if (walkKeys.size) {
    walk(dt);
    glDirty = true;
  }
  if (hoverAt) hoverPick();
  if (glDirty && state.mode === 'webgl') {
    glDirty = false;
    drawGL();
  }
  requestAnimationFrame(frame);
}

function drawGL() {
  const { renderer, scene, camera } = gl;
  const spec = cameraSpec();
  const dist = Math.hypot(...spec.target.map((t, i) => t - spec.eye[i]));
  camera.fov = state.fov;
  camera.aspect = state.w / state.h;
  camera.near = Math.max(1e-4 * (dist + sceneRadius), 1e-6);
  camera.far = dist + 4 * sceneRadius + 1;
  camera.position.set(...spec.eye);
  camera.up.set(0, 1, 0);
  camera.lookAt(...spec.target);
  camera.updateProjectionMatrix();
  renderer.render(scene, camera);
  glFrames += 1;
  glCanvas.dataset.frames = String(glFrames);
}

// The triangle `prim` of the hit's mesh, in world space, into the highlight mesh `tri`.
function placeTriangle(tri, hit) {
  const mesh = hit && gl.meshes.get(hitKey(hit));
  if (!mesh || mesh.userData.kind !== 'mesh') {
    tri.visible = false;
    return;
  }
  const pos = mesh.geometry.attributes.position;
  const index = mesh.geometry.index;
  const out = tri.geometry.attributes.position;
  const v = new THREE.Vector3();
  for (let k = 0; k < 3; k++) {
    v.fromBufferAttribute(pos, index.getX(3 * hit.triangle + k)).applyMatrix4(mesh.matrix);
    out.setXYZ(k, v.x, v.y, v.z);
  }
  out.needsUpdate = true;
  tri.geometry.computeBoundingSphere();
  tri.visible = true;
}

let tinted = [];
function tint(hits) {
  for (const m of tinted) m.material.emissive.setHex(0x000000);
  tinted = [];
  for (const [hit, color] of hits) {
    const mesh = hit && gl.meshes.get(hitKey(hit));
    if (mesh && !tinted.includes(mesh)) {
      mesh.material.emissive.setHex(color);
      tinted.push(mesh);
    }
  }
}

// A pick in the page: raypick-wasm's camera made as `raypick pick --camera` makes it, from the
// same explicit camera, and the engine's pick. The hit in the panel's terms (geometry, instance,
// triangle) beside the package's own fields.
function pickInPage(x, y) {
  const spec = cameraSpec();
  const t0 = performance.now();
  const camera = rp.Camera.forScene(rpScene, {
    eye: spec.eye, target: spec.target, up: spec.up, fovDeg: spec.fov,
    width: spec.size[0], height: spec.size[1],
  });
  const r = rpScene.pick(camera, x, y);
  camera.dispose();
  const us = (performance.now() - t0) * 1000;
  const hit = r && {
    geometry: r.geom, instance: r.instance, triangle: r.prim, t: r.t, u: r.u, v: r.v,
    point: r.point, normal: r.normal, geom: r.geom, instancePath: r.instancePath,
  };
  return { hit, camera: spec, us };
}

let selected = null;
let hovered = null;
let hoverAt = null;
function hoverPick() {
  const [x, y] = hoverAt;
  hoverAt = null;
  const { hit } = pickInPage(x, y);
  const same = (a, b) => (a && b ? hitKey(a) === hitKey(b) && a.triangle === b.triangle : a === b);
  if (same(hit, hovered)) return;
  hovered = hit;
  placeTriangle(gl.hoverTri, hit);
  tint([[hovered, 0x302000], [selected, 0x401010]]);
  show('p-hover', hit ? `${objectName(hit)} · triangle ${hit.triangle}` : 'nothing');
  glCanvas.dataset.hover = hit ? `${hit.geometry},${hit.instance === null ? '-' : hit.instance},${hit.triangle}` : '';
  glDirty = true;
}

function objectName(hit) {
  const names = info.names || [];
  const top = hit.instance === null ? hit.geometry : hit.instance;
  return names[top] !== undefined ? names[top] : '?';
}

// ---------------------------------------------------------------------------------------------
// The ray-cast view: the server's frames. One request in flight; a newer state replaces any
// pending one (latest wins). While a drag is under way frames are rendered at half size and scaled
// up (a quarter of the rays); the full frame comes when the drag ends.
let inFlight = false;
let pending = false;
let preview = false;
let frames = 0;
function requestRender(isPreview = false) {
  if (state.mode === 'webgl') {
    glDirty = true;
    return;
  }
  pending = true;
  preview = isPreview;
  canvas.dataset.busy = '1';
  if (!inFlight) renderNext();
}
async function renderNext() {
  if (!pending) return;
  pending = false;
  inFlight = true;
  const p = viewParams();
  const full = !preview;
  if (!full) {
    p.set('w', Math.max(1, Math.ceil(state.w / 2)));
    p.set('h', Math.max(1, Math.ceil(state.h / 2)));
  }
  p.set('mode', state.mode);
  if (state.hl) p.set('hl', state.hl);
  const hl = state.hl || '';
  const t0 = performance.now();
  try {
    const resp = await fetch('/render?' + p.toString());
    if (resp.status === 503) {
      pending = true; // busy: retry shortly
      await new Promise((r) => setTimeout(r, 50));
    } else if (!resp.ok) {
      statusEl.textContent = 'render error: ' + (await resp.text());
    } else {
      const bitmap = await createImageBitmap(await resp.blob());
      ctx.imageSmoothingEnabled = !full;
      ctx.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      bitmap.close();
      frames += 1;
      canvas.dataset.frames = String(frames);
      canvas.dataset.hl = hl;
      canvas.dataset.full = full ? '1' : '0';
      const timing = resp.headers.get('server-timing') || '';
      const dur = (name) => {
        const m = timing.match(new RegExp(name + ';dur=([0-9.]+)'));
        return m ? parseFloat(m[1]).toFixed(1) : '?';
      };
      statusEl.textContent = `${p.get('w')}×${p.get('h')}  render ${dur('render')} ms  png ${dur('encode')} ms  ` +
        `round trip ${(performance.now() - t0).toFixed(1)} ms`;
    }
  } catch (e) {
    statusEl.textContent = 'render failed: ' + e;
  }
  inFlight = false;
  if (pending) renderNext();
  else canvas.dataset.busy = '0'; // idle: the canvas shows the latest state
}

// ---------------------------------------------------------------------------------------------
// Input: drag to orbit (or look around when walking), shift-drag to pan, wheel to zoom, click to
// pick, WASD (and Q/E down/up) to walk.
const walkKeys = new Set();
function walk(dt) {
  const speed = sceneRadius * 0.6 * (walkKeys.has('shift') ? 4 : 1) * dt;
  const fw = forward();
  const [r] = rightUp();
  if (walkKeys.has('w')) move(fw, speed);
  if (walkKeys.has('s')) move(fw, -speed);
  if (walkKeys.has('d')) move(r, speed);
  if (walkKeys.has('a')) move(r, -speed);
  if (walkKeys.has('e')) move([0, 1, 0], speed);
  if (walkKeys.has('q')) move([0, -1, 0], speed);
}
stage.addEventListener('keydown', (ev) => {
  const k = ev.key.toLowerCase();
  if (['w', 'a', 's', 'd', 'q', 'e'].includes(k)) {
    if (state.nav !== 'walk') setNav('walk');
    walkKeys.add(k);
    ev.preventDefault();
  }
  if (ev.shiftKey) walkKeys.add('shift');
});
stage.addEventListener('keyup', (ev) => {
  walkKeys.delete(ev.key.toLowerCase());
  if (!ev.shiftKey) walkKeys.delete('shift');
  if (walkKeys.size === 0 || (walkKeys.size === 1 && walkKeys.has('shift'))) {
    walkKeys.clear();
    requestRender();
  }
});
stage.addEventListener('blur', () => walkKeys.clear());

// Window position of the pointer's pixel centre, top-left origin, in image pixels.
function pixelOf(ev) {
  const rect = stage.getBoundingClientRect();
  const x = Math.floor(((ev.clientX - rect.left) * state.w) / rect.width) + 0.5;
  const y = Math.floor(((ev.clientY - rect.top) * state.h) / rect.height) + 0.5;
  return [Math.min(x, state.w - 0.5), Math.min(y, state.h - 0.5)];
}

let drag = null;
stage.addEventListener('pointerdown', (ev) => {
  stage.focus();
  stage.setPointerCapture(ev.pointerId);
  drag = { x: ev.clientX, y: ev.clientY, moved: 0, shift: ev.shiftKey };
});
stage.addEventListener('pointermove', (ev) => {
  if (!drag) {
    if (state.mode === 'webgl' && gl) hoverAt = pixelOf(ev);
    return;
  }
  const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
  drag.x = ev.clientX;
  drag.y = ev.clientY;
  drag.moved += Math.abs(dx) + Math.abs(dy);
  if (drag.moved < 3) return;
  if (drag.shift || ev.shiftKey) pan(dx, dy);
  else if (state.nav === 'walk') rotate(dx * 0.004, -dy * 0.004);
  else rotate(-dx * 0.008, dy * 0.008);
  requestRender(true);
});
stage.addEventListener('pointerup', (ev) => {
  const d = drag;
  drag = null;
  if (d && d.moved >= 3) requestRender();
  if (d && d.moved < 3) {
    const [x, y] = pixelOf(ev);
    if (state.mode === 'webgl') pickWebGL(x, y);
    else pickOnServer(x, y);
  }
});
stage.addEventListener('pointercancel', () => {
  if (drag && drag.moved >= 3) requestRender();
  drag = null;
});
stage.addEventListener('pointerleave', () => { hoverAt = null; });
stage.addEventListener('wheel', (ev) => {
  ev.preventDefault();
  const factor = Math.exp(Math.max(-0.5, Math.min(0.5, ev.deltaY * 0.001)));
  if (state.nav === 'walk') {
    move(forward(), -Math.sign(ev.deltaY) * sceneRadius * 0.05);
  } else {
    // The server accepts distances in (0, 1e7]; stay well inside.
    state.distance = Math.max(1e-4, Math.min(1e6, state.distance * factor));
  }
  requestRender();
}, { passive: false });

// ---------------------------------------------------------------------------------------------
// The info panel.
const fmt = (v) => v.map((x) => x.toFixed(4)).join(', ');
function show(id, text) { document.getElementById(id).textContent = text; }
function showPick(x, y, h, us) {
  show('p-pixel', `${x}, ${y}`);
  show('p-time', `${us.toFixed(0)} µs`);
  if (!h) {
    for (const id of ['p-object', 'p-geometry', 'p-instance', 'p-triangle', 'p-distance', 'p-point', 'p-normal', 'p-bary']) {
      show(id, id === 'p-object' ? 'nothing' : '–');
    }
  } else {
    show('p-object', h.object);
    show('p-geometry', String(h.geometry));
    show('p-instance', h.instance === null ? '–' : String(h.instance));
    show('p-triangle', String(h.triangle));
    show('p-distance', h.t.toFixed(6));
    show('p-point', fmt(h.point));
    show('p-normal', fmt(h.normal));
    show('p-bary', `u ${h.u.toFixed(4)}, v ${h.v.toFixed(4)}, w ${(1 - h.u - h.v).toFixed(4)}`);
  }
  const panel = document.getElementById('panel');
  panel.dataset.picks = String((+panel.dataset.picks || 0) + 1);
}

// The last in-page pick, for tests and the console: pixel, camera and answer.
window.raypickViewer = {
  lastPick: null,
  pick: (x, y) => pickInPage(x, y),
  state: () => ({
    keys: gl ? [...gl.meshes.keys()] : [],
    hovered: hovered && hitKey(hovered),
    highlight: gl ? [gl.hoverTri.visible, gl.tri.visible] : [],
  }),
};

function pickWebGL(x, y) {
  const { hit, camera, us } = pickInPage(x, y);
  const h = hit && { ...hit, object: objectName(hit) };
  selected = hit;
  placeTriangle(gl.tri, hit);
  tint([[hovered, 0x302000], [selected, 0x401010]]);
  glCanvas.dataset.selected = hit ? `${hit.geometry},${hit.instance === null ? '-' : hit.instance},${hit.triangle}` : '';
  window.raypickViewer.lastPick = { x, y, camera, hit: h };
  showPick(x, y, h, us);
  glDirty = true;
}

async function pickOnServer(x, y) {
  const p = viewParams();
  p.set('x', x);
  p.set('y', y);
  const resp = await fetch('/api/pick?' + p.toString());
  if (!resp.ok) {
    statusEl.textContent = 'pick error: ' + (await resp.text());
    return;
  }
  const r = await resp.json();
  const h = r.hit;
  state.hl = h ? `${h.geometry},${h.instance === null ? '-' : h.instance},${h.triangle}` : null;
  showPick(x, y, h, r.pick_us);
  requestRender();
}

// ---------------------------------------------------------------------------------------------
function setMode(mode) {
  state.mode = mode;
  document.getElementById('mode').value = mode;
  const webgl = mode === 'webgl';
  glCanvas.hidden = !webgl;
  canvas.hidden = webgl;
  stage.dataset.mode = mode;
  if (!webgl) hoverAt = null;
  requestRender();
}
function setNav(nav) {
  state.nav = nav;
  document.getElementById('nav').value = nav;
  document.getElementById('hint').textContent = nav === 'walk'
    ? 'WASD: walk · Q/E: down/up · shift: faster · drag: look · click: pick'
    : 'Drag: orbit · shift-drag: pan · wheel: zoom · click: pick · WASD: walk';
}
document.getElementById('mode').addEventListener('change', (ev) => setMode(ev.target.value));
document.getElementById('nav').addEventListener('change', (ev) => setNav(ev.target.value));
function reset() {
  Object.assign(state, { target: [...initial.target], yaw: initial.yaw, pitch: initial.pitch, distance: initial.distance, fov: initial.fov });
  requestRender();
}
document.getElementById('reset').addEventListener('click', reset);

(async () => {
  info = await (await fetch('/api/scene')).json();
  document.getElementById('model').textContent =
    `${info.model}: ${info.geometries} geometries, ${info.triangles} triangles`;
  pitchLimit = Math.min(1.56, info.limits.pitch);
  sceneRadius = 0.5 * Math.hypot(...info.bounds[1].map((b, i) => b - info.bounds[0][i])) || 1;
  initial = info.view;
  for (const c of [canvas, glCanvas]) {
    c.width = state.w;
    c.height = state.h;
    c.style.width = `${state.w}px`;
    c.style.height = `${state.h}px`;
  }
  stage.style.width = `${state.w}px`;
  stage.style.height = `${state.h}px`;
  setNav(state.nav);
  Object.assign(state, { target: [...initial.target], yaw: initial.yaw, pitch: initial.pitch, distance: initial.distance, fov: initial.fov });
  const wanted = query.get('mode') || 'webgl';
  let mode = [...document.getElementById('mode').options].some((o) => o.value === wanted) ? wanted : 'webgl';
  if (mode === 'webgl' && !info.webgl.ready) {
    statusEl.textContent = 'WebGL view unavailable (run scripts/build-wasm.sh): ray-cast frames';
    document.querySelector('#mode option[value="webgl"]').disabled = true;
    mode = 'headlight';
  }
  if (info.webgl.ready) {
    try {
      await startWebGL();
    } catch (e) {
      statusEl.textContent = 'WebGL view failed: ' + e;
      document.querySelector('#mode option[value="webgl"]').disabled = true;
      if (mode === 'webgl') mode = 'headlight';
    }
  }
  setMode(mode);
  document.body.dataset.ready = '1';
})();
