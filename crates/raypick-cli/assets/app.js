// raypick viewer: the camera state lives here; the server renders and picks statelessly.
'use strict';

const canvas = document.getElementById('view');
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
  mode: 'headlight',
  hl: null,          // "geom,instance|-,prim" of the picked triangle
};
let initial = null;
let pitchLimit = 1.5;

function viewParams() {
  const p = new URLSearchParams({
    tx: state.target[0], ty: state.target[1], tz: state.target[2],
    yaw: state.yaw, pitch: state.pitch, dist: state.distance, fov: state.fov,
    w: state.w, h: state.h,
  });
  return p;
}

// Rendering: one request in flight; a newer state replaces any pending one (latest wins).
// While a drag is under way frames are rendered at half size and scaled up (a quarter of the rays,
// so the view follows the pointer on a busy machine); the full frame comes when the drag ends.
let inFlight = false;
let pending = false;
let preview = false;
let frames = 0;
function requestRender(isPreview = false) {
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

// Orbit, pan, zoom.
const TAU = 2 * Math.PI;
function eye() {
  const cp = Math.cos(state.pitch), sp = Math.sin(state.pitch);
  const cy = Math.cos(state.yaw), sy = Math.sin(state.yaw);
  return [0, 1, 2].map((i) => state.target[i] + state.distance * [cp * sy, sp, cp * cy][i]);
}
function rotate(dYaw, dPitch) {
  state.yaw = (((state.yaw + dYaw) % TAU) + TAU) % TAU;
  state.pitch = Math.max(-pitchLimit, Math.min(pitchLimit, state.pitch + dPitch));
}
function pan(dx, dy) {
  const e = eye();
  const f = state.target.map((t, i) => t - e[i]);
  const fl = Math.hypot(...f);
  const fw = f.map((x) => x / fl);
  // right = forward × +Y, up = right × forward
  let r = [-fw[2], 0, fw[0]];
  const rl = Math.hypot(...r) || 1;
  r = r.map((x) => x / rl);
  const u = [r[1] * fw[2] - r[2] * fw[1], r[2] * fw[0] - r[0] * fw[2], r[0] * fw[1] - r[1] * fw[0]];
  // World units per pixel at the target's depth.
  const s = 2 * state.distance * Math.tan((state.fov * Math.PI) / 360) / state.h;
  state.target = state.target.map((t, i) => t - r[i] * dx * s + u[i] * dy * s);
}

let drag = null;
canvas.addEventListener('pointerdown', (ev) => {
  canvas.setPointerCapture(ev.pointerId);
  drag = { x: ev.clientX, y: ev.clientY, moved: 0, shift: ev.shiftKey };
});
canvas.addEventListener('pointermove', (ev) => {
  if (!drag) return;
  const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
  drag.x = ev.clientX;
  drag.y = ev.clientY;
  drag.moved += Math.abs(dx) + Math.abs(dy);
  if (drag.moved < 3) return;
  if (drag.shift || ev.shiftKey) pan(dx, dy);
  else rotate(-dx * 0.008, dy * 0.008);
  requestRender(true);
});
canvas.addEventListener('pointerup', (ev) => {
  const d = drag;
  drag = null;
  if (d && d.moved >= 3) requestRender();
  if (d && d.moved < 3) {
    // Window position of the clicked pixel's centre, top-left origin, in image pixels.
    const rect = canvas.getBoundingClientRect();
    const x = Math.floor(((ev.clientX - rect.left) * canvas.width) / rect.width) + 0.5;
    const y = Math.floor(((ev.clientY - rect.top) * canvas.height) / rect.height) + 0.5;
    pick(x, y);
  }
});
canvas.addEventListener('pointercancel', () => {
  if (drag && drag.moved >= 3) requestRender();
  drag = null;
});
canvas.addEventListener('wheel', (ev) => {
  ev.preventDefault();
  const d = state.distance * Math.exp(Math.max(-0.5, Math.min(0.5, ev.deltaY * 0.001)));
  // The server accepts distances in (0, 1e7]; stay well inside.
  state.distance = Math.max(1e-4, Math.min(1e6, d));
  requestRender();
}, { passive: false });

const fmt = (v) => v.map((x) => x.toFixed(4)).join(', ');
function show(id, text) { document.getElementById(id).textContent = text; }

async function pick(x, y) {
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
  show('p-pixel', `${x}, ${y}`);
  show('p-time', `${r.pick_us.toFixed(0)} µs`);
  if (!h) {
    state.hl = null;
    for (const id of ['p-object', 'p-geometry', 'p-instance', 'p-triangle', 'p-distance', 'p-point', 'p-normal', 'p-bary']) {
      show(id, id === 'p-object' ? 'nothing' : '–');
    }
  } else {
    state.hl = `${h.geometry},${h.instance === null ? '-' : h.instance},${h.triangle}`;
    show('p-object', h.object);
    show('p-geometry', String(h.geometry));
    show('p-instance', h.instance === null ? '–' : String(h.instance));
    show('p-triangle', String(h.triangle));
    show('p-distance', h.t.toFixed(6));
    show('p-point', fmt(h.point));
    show('p-normal', fmt(h.normal));
    show('p-bary', `u ${h.u.toFixed(4)}, v ${h.v.toFixed(4)}, w ${(1 - h.u - h.v).toFixed(4)}`);
  }
  document.getElementById('panel').dataset.picks = String((+document.getElementById('panel').dataset.picks || 0) + 1);
  requestRender();
}

document.getElementById('mode').addEventListener('change', (ev) => {
  state.mode = ev.target.value;
  requestRender();
});
function reset() {
  Object.assign(state, { target: [...initial.target], yaw: initial.yaw, pitch: initial.pitch, distance: initial.distance, fov: initial.fov });
  requestRender();
}
document.getElementById('reset').addEventListener('click', reset);

(async () => {
  const info = await (await fetch('/api/scene')).json();
  document.getElementById('model').textContent =
    `${info.model}: ${info.geometries} geometries, ${info.triangles} triangles`;
  pitchLimit = Math.min(1.56, info.limits.pitch);
  initial = info.view;
  canvas.width = state.w;
  canvas.height = state.h;
  canvas.style.width = `${state.w}px`;
  canvas.style.height = `${state.h}px`;
  reset();
})();
