// End-to-end test of `raypick serve`'s ray-cast view (the server's frames and picks) in headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core): a click picks the same triangle
// as `raypick pick` for the same camera and pixel, the picked triangle is highlighted under the
// cursor, and a drag changes the view. The WebGL view is webgl.test.mjs's.
//
// Binary: $RAYPICK_BIN, else target/release/raypick, else target/debug/raypick.
// Screenshot: target/e2e/screenshot.png.
import { test, before, after } from 'node:test';
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
const HIGHLIGHT = [255, 20, 20]; // render.rs HIGHLIGHT
const W = 640, H = 480;

let server, baseUrl, context, page, profile;
const cspViolations = [];

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
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

before(async () => {
  assert.ok(bin, 'no raypick binary: build it first (cargo build -p raypick-cli)');
  ({ child: server, url: baseUrl } = await startServer());
  profile = mkdtempSync(path.join(tmpdir(), 'raypick-e2e-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    viewport: { width: 1100, height: 620 },
    timeout: 90_000,
    deviceScaleFactor: 1,
  });
  page = context.pages()[0] || (await context.newPage());
  // The debug binary on a shared 2-core machine can take a few hundred ms a frame.
  page.setDefaultTimeout(60_000);
  page.on('pageerror', (e) => { throw e; });
  // The server's Content-Security-Policy must allow everything the page does.
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
}, { timeout: 120_000 });

after(async () => {
  if (context) await context.close();
  if (server) { server.removeAllListeners('exit'); server.kill(); }
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const frames = () => page.$eval('#view', (c) => +c.dataset.frames);
const pixelAt = (x, y) => page.$eval('#view', (c, [x, y]) =>
  Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)), [x, y]);
const canvasData = () => page.$eval('#view', (c) => c.toDataURL('image/png'));

test('click picks the CLI triangle, highlights it, and a drag turns the view', { timeout: 120_000 }, async () => {
  const response = await page.goto(`${baseUrl}?w=${W}&h=${H}&mode=headlight`);
  const headers = response.headers();
  assert.match(headers['content-security-policy'] || '', /frame-ancestors 'none'/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  await page.waitForFunction(() => +document.getElementById('view').dataset.frames >= 1);
  const box = await page.locator('#view').boundingBox();
  assert.equal(Math.round(box.width), W);
  assert.equal(Math.round(box.height), H);

  // 1. Click a known pixel (the image centre, on the demo's objects).
  const [cx, cy] = [W / 2, H / 2];
  const before = await pixelAt(cx, cy);
  assert.notDeepEqual(before, HIGHLIGHT, 'the pixel is highlighted before any pick');
  const [pickResp] = await Promise.all([
    page.waitForResponse((r) => r.url().includes('/api/pick')),
    page.mouse.click(box.x + cx + 0.5, box.y + cy + 0.5),
  ]);
  const pickUrl = new URL(pickResp.url());
  const px = +pickUrl.searchParams.get('x'), py = +pickUrl.searchParams.get('y');
  assert.ok(Math.abs(px - (cx + 0.5)) <= 1 && Math.abs(py - (cy + 0.5)) <= 1, `clicked ${px},${py}`);
  const cam = (await pickResp.json()).camera;
  await page.waitForFunction(() => document.getElementById('p-triangle').textContent !== '–');

  // 2. The expected answer from the CLI, independent of the page and the server.
  const cameraArg = [...cam.eye, ...cam.target, ...cam.up, cam.fov].join(',');
  const cli = JSON.parse(execFileSync(bin, [
    'pick', '--pixel', `${px},${py}`, '--size', `${cam.size[0]}x${cam.size[1]}`,
    '--camera', cameraArg, '--json',
  ], { encoding: 'utf8' }));
  assert.ok(cli.hit, `the CLI sees nothing at ${px},${py}`);
  const panel = async (id) => (await page.textContent(`#p-${id}`)).trim();
  assert.equal(await panel('triangle'), String(cli.hit.triangle));
  assert.equal(await panel('geometry'), String(cli.hit.geometry));
  assert.equal(await panel('instance'), cli.hit.instance === null ? '–' : String(cli.hit.instance));
  assert.equal(await panel('object'), cli.hit.object);
  assert.equal(+(await panel('distance')), +cli.hit.t.toFixed(6));

  // 3. The next frame paints that triangle in the highlight colour, under the cursor.
  const hl = `${cli.hit.geometry},${cli.hit.instance === null ? '-' : cli.hit.instance},${cli.hit.triangle}`;
  await page.waitForFunction((hl) => {
    const c = document.getElementById('view');
    return c.dataset.hl === hl && c.dataset.full === '1';
  }, hl);
  assert.deepEqual(await pixelAt(Math.floor(px), Math.floor(py)), HIGHLIGHT);

  // 4. A drag orbits: the picture changes, and it is not a pick.
  const picksBefore = await page.$eval('#panel', (p) => p.dataset.picks);
  const imageBefore = await canvasData();
  const framesBefore = await frames();
  await page.mouse.move(box.x + 200, box.y + 200);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(box.x + 200 + 12 * i, box.y + 200 + 4 * i);
  await page.mouse.up();
  await page.waitForFunction((n) => +document.getElementById('view').dataset.frames > n, framesBefore);
  // The render loop (latest wins, previews while dragging) settles on the full final view.
  await page.waitForFunction(() => {
    const c = document.getElementById('view');
    return c.dataset.busy === '0' && c.dataset.full === '1';
  });
  assert.equal(await page.$eval('#view', (c) => c.dataset.full), '1', 'the last frame is a preview');
  assert.notEqual(await canvasData(), imageBefore, 'the drag did not change the image');
  assert.equal(await page.$eval('#panel', (p) => p.dataset.picks), picksBefore, 'the drag picked');

  const shots = path.join(root, 'target', 'e2e');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, 'screenshot.png') });
  assert.deepEqual(cspViolations, [], 'the page breaks the server\'s Content-Security-Policy');
  console.log(`# picked triangle ${cli.hit.triangle} of ${cli.hit.object}; screenshot ${path.join(shots, 'screenshot.png')}`);
});
