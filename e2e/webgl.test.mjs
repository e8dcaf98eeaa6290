// End-to-end test of the in-page viewer of `raypick serve` (three.js drawing, raypick-wasm picking)
// in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core), on the bunny and on
// sponza from ../shared/data:
// - every in-page pick equals `raypick pick` for the same explicit camera and pixel, bit for bit
//   (geometry, instance, triangle, t); real clicks and a grid of pixels;
// - hover highlights the triangle under the cursor (its colour in a screenshot), a click selects it;
// - WASD walking moves the view; no console errors, no Content-Security-Policy violation.
//
// Binary: $RAYPICK_BIN, else target/release/raypick, else target/debug/raypick. The viewer's files
// come from web/ (scripts/build-wasm.sh builds the .wasm). Screenshots: target/e2e/webgl-*.png.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.RAYPICK_BIN ||
  [path.join(root, 'target/release/raypick'), path.join(root, 'target/debug/raypick')].find(existsSync);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const DATA = process.env.RAYPICK_DATA || path.join(root, '..', 'shared', 'data');
const W = 640, H = 480;
const HOVER = [255, 176, 0];   // app.js hoverTri colour
const SELECTED = [255, 20, 20]; // app.js tri colour
const shots = path.join(root, 'target', 'e2e');

const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function startServer(model) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['serve', model, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`raypick serve exited with ${code}`)));
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const m = line.match(/http:\/\/\S+/);
      if (!m) reject(new Error(`no address in ${JSON.stringify(line)}`));
      else resolve({ child, url: m[0] });
    });
  });
}

async function openViewer(model) {
  const { child, url } = await startServer(model);
  cleanups.push(() => { child.removeAllListeners('exit'); child.kill(); });
  const profile = mkdtempSync(path.join(tmpdir(), 'raypick-webgl-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // WebGL through SwiftShader: a software GPU, the same on every machine.
    args: [
      '--headless', '--no-sandbox', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    ],
    viewport: { width: 1100, height: 620 },
    timeout: 90_000,
    deviceScaleFactor: 1,
  });
  cleanups.push(async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(90_000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  await page.goto(`${url}?w=${W}&h=${H}`);
  await page.waitForFunction(() => document.body.dataset.ready === '1');
  assert.equal(await page.$eval('#stage', (s) => s.dataset.mode), 'webgl',
    `the page did not start in the WebGL view: ${await page.textContent('#status')}`);
  await page.waitForFunction(() => +document.getElementById('gl').dataset.frames >= 1);
  const box = await page.locator('#stage').boundingBox();
  return { page, box, errors };
}

// `raypick pick` for the page's explicit camera and pixel.
function cliPick(model, camera, x, y) {
  const cameraArg = [...camera.eye, ...camera.target, ...camera.up, camera.fov].join(',');
  return JSON.parse(execFileSync(bin, [
    'pick', model, '--pixel', `${x},${y}`, '--size', `${camera.size[0]}x${camera.size[1]}`,
    `--camera=${cameraArg}`, '--json',
  ], { encoding: 'utf8' })).hit;
}

function assertSameHit(page, cli, where) {
  if (!cli) {
    assert.equal(page, null, `${where}: the page hits, the CLI does not`);
    return;
  }
  assert.ok(page, `${where}: the CLI hits triangle ${cli.triangle}, the page nothing`);
  assert.equal(page.geometry, cli.geometry, `${where}: geometry`);
  assert.equal(page.instance, cli.instance, `${where}: instance`);
  assert.equal(page.triangle, cli.triangle, `${where}: triangle`);
  // The CLI prints t as the shortest decimal of the f32: it reads back as the same f32.
  assert.equal(page.t, Math.fround(cli.t), `${where}: t`);
}

// The canvas's pixels (the WebGL canvas keeps its drawing buffer) within `r` of (x, y).
const pixelsNear = (page, x, y, r) => page.$eval('#gl', (c, [x, y, r]) => {
  const tmp = document.createElement('canvas');
  tmp.width = c.width;
  tmp.height = c.height;
  const g = tmp.getContext('2d');
  g.drawImage(c, 0, 0);
  const d = g.getImageData(x - r, y - r, 2 * r + 1, 2 * r + 1).data;
  const out = [];
  for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2]]);
  return out;
}, [x, y, r]);
const near = (a, b) => a.every((v, i) => Math.abs(v - b[i]) <= 4);

for (const [name, rel] of [['bunny', 'obj/stanford-bunny.obj'], ['sponza', 'scenes/sponza-dabrovic.obj']]) {
  test(`${name}: in-page picks equal raypick pick; hover and click highlight; WASD walks`, { timeout: 240_000 }, async () => {
    assert.ok(bin, 'no raypick binary: build it first (cargo build -p raypick-cli)');
    const model = path.join(DATA, rel);
    const { page, box, errors } = await openViewer(model);

    // 1. A grid of pixels over the middle of the image through the page's own pick (the same
    // function a click calls).
    const checked = { hits: 0, misses: 0 };
    for (let j = 0; j < 4; j++) {
      for (let i = 0; i < 5; i++) {
        const x = Math.floor(W / 4 + (i + 0.5) * W / 10) + 0.5, y = Math.floor(H / 4 + (j + 0.5) * H / 8) + 0.5;
        const r = await page.evaluate(([x, y]) => {
          const p = window.raypickViewer.pick(x, y);
          return { camera: p.camera, hit: p.hit };
        }, [x, y]);
        assertSameHit(r.hit, cliPick(model, r.camera, x, y), `${name} pixel ${x},${y}`);
        checked[r.hit ? 'hits' : 'misses'] += 1;
      }
    }
    assert.ok(checked.hits >= 5, `only ${checked.hits} of 20 grid pixels hit the model`);

    // 2. Hover: the triangle under the cursor turns the hover colour.
    const [cx, cy] = [Math.floor(W / 2), Math.floor(H / 2)];
    assert.ok(!(await pixelsNear(page, cx, cy, 2)).some((p) => near(p, HOVER)), 'hover colour before hovering');
    await page.mouse.move(box.x + cx + 0.5, box.y + cy + 0.5);
    await page.waitForFunction(() => (document.getElementById('gl').dataset.hover || '') !== '');
    const framesAfterHover = await page.$eval('#gl', (c) => +c.dataset.frames);
    await page.waitForFunction((n) => +document.getElementById('gl').dataset.frames >= n, framesAfterHover);
    await page.waitForTimeout(100);
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, `webgl-${name}-hover.png`) });
    assert.ok((await pixelsNear(page, cx, cy, 2)).some((p) => near(p, HOVER)),
      `no hover colour under the cursor: ${JSON.stringify(await pixelsNear(page, cx, cy, 1))}`);
    assert.match(await page.textContent('#p-hover'), /triangle \d+/);

    // 3. A real click: the panel shows the CLI's answer, the triangle turns the selection colour.
    await page.mouse.click(box.x + cx + 0.5, box.y + cy + 0.5);
    await page.waitForFunction(() => window.raypickViewer.lastPick !== null);
    const last = await page.evaluate(() => window.raypickViewer.lastPick);
    assert.deepEqual([last.x, last.y], [cx + 0.5, cy + 0.5]);
    const cli = cliPick(model, last.camera, last.x, last.y);
    assertSameHit(last.hit, cli, `${name} click`);
    assert.ok(cli, 'the click at the centre hits nothing');
    assert.equal((await page.textContent('#p-triangle')).trim(), String(cli.triangle));
    assert.equal((await page.textContent('#p-object')).trim(), cli.object);
    assert.equal(+(await page.textContent('#p-distance')), +cli.t.toFixed(6));
    await page.mouse.move(box.x + 5, box.y + 5); // hover elsewhere: the selection colour shows
    await page.waitForTimeout(200);
    assert.ok((await pixelsNear(page, cx, cy, 2)).some((p) => near(p, SELECTED)), 'no selection colour at the click');
    await page.screenshot({ path: path.join(shots, `webgl-${name}-selected.png`) });

    // 4. WASD: holding W walks forward, the picture changes.
    const before = await page.$eval('#gl', (c) => c.toDataURL());
    await page.focus('#stage');
    await page.keyboard.down('w');
    await page.waitForTimeout(400);
    await page.keyboard.up('w');
    await page.waitForTimeout(100);
    assert.equal(await page.$eval('#nav', (s) => s.value), 'walk');
    assert.notEqual(await page.$eval('#gl', (c) => c.toDataURL()), before, 'walking did not change the view');

    assert.deepEqual(errors, [], 'errors in the page');
    console.log(`# ${name}: ${checked.hits} grid hits and ${checked.misses} misses equal the CLI; clicked triangle ${cli.triangle}`);
  });
}
