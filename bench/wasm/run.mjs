// The browser benchmark, headless, in one command:
//
//   node bench/wasm/run.mjs [--rays 100000] [--rounds 5] [--meshes bunny,sponza,conference]
//                           [--kinds primary,incoherent] [--queries first,all]
//                           [--quality fast|balanced|high] [--out FILE.json]
//
// `--quality` is raypick's build (default fast, the three.js adapter's default: the build
// three-mesh-bvh's users expect when they call computeBoundsTree).
//
// Serves bench/wasm (the page), web/ (raypick's package and its .wasm, three.js and
// three-mesh-bvh from npm), ../shared/data (the meshes) and bench/out (the shared ray sets, made
// with ../shared/tools/make_rays.py when missing) on loopback, opens the page in Debian's
// Chromium through playwright-core (e2e/node_modules) and prints its table as Markdown.
// Needs: scripts/build-wasm.sh, `npm ci` in web/ and in e2e/ (scripts/e2e.sh does both).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from '../../e2e/node_modules/playwright-core/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const data = process.env.RAYPICK_DATA || path.join(root, '..', 'shared', 'data');
const { values: opt } = parseArgs({
  options: {
    rays: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    meshes: { type: 'string', default: 'bunny,sponza,conference' },
    kinds: { type: 'string', default: 'primary,incoherent' },
    queries: { type: 'string', default: 'first,all' },
    quality: { type: 'string', default: 'fast' },
    out: { type: 'string' },
  },
});
const KNOWN = {
  bunny: ['stanford-bunny', 'obj/stanford-bunny.obj'],
  sponza: ['sponza-dabrovic', 'scenes/sponza-dabrovic.obj'],
  conference: ['conference', 'scenes/conference.obj'],
  sibenik: ['sibenik', 'scenes/sibenik.obj'],
};
const meshes = opt.meshes.split(',').map((m) => {
  if (!KNOWN[m]) throw new Error(`unknown mesh ${m} (known: ${Object.keys(KNOWN).join(', ')})`);
  return KNOWN[m];
});

// The shared ray sets, made once.
for (const [name, file] of meshes) {
  const prefix = path.join(root, 'bench', 'out', name);
  if (!existsSync(`${prefix}.incoherent.rays`) || !existsSync(`${prefix}.primary.rays`)) {
    mkdirSync(path.dirname(prefix), { recursive: true });
    const py = existsSync(path.join(root, '.venv/bin/python')) ? path.join(root, '.venv/bin/python') : 'python3';
    console.error(`making the ray sets of ${name}`);
    execFileSync(py, [path.join(data, '..', 'tools', 'make_rays.py'), path.join(data, file), prefix], { stdio: 'inherit' });
  }
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const MOUNTS = [
  ['/web/', path.join(root, 'web')],
  ['/data/', data],
  ['/rays/', path.join(root, 'bench', 'out')],
  ['/', path.join(root, 'bench', 'wasm')],
];
const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x').pathname;
  const route = url === '/' ? '/index.html' : url;
  for (const [prefix, dir] of MOUNTS) {
    if (!route.startsWith(prefix)) continue;
    const file = path.resolve(dir, '.' + route.slice(prefix.length - 1));
    if (!file.startsWith(dir + path.sep)) break;
    try {
      if (!(await stat(file)).isFile()) break;
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(await readFile(file));
      return;
    } catch {
      break;
    }
  }
  res.writeHead(404);
  res.end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error(`page: ${m.text()}`); });
  const query = new URLSearchParams({
    meshes: meshes.map(([n, f]) => `${n}=${f}`).join(','),
    rays: opt.rays, rounds: opt.rounds, kinds: opt.kinds, queries: opt.queries, quality: opt.quality,
  });
  await page.goto(`${base}/?${query}`);
  const result = await page.waitForFunction(() => window.benchResult, null, { timeout: 3_600_000, polling: 500 })
    .then((h) => h.jsonValue());
  if (result.error) throw new Error(result.error);
  const version = JSON.parse(await readFile(path.join(root, 'web/node_modules/three-mesh-bvh/package.json'), 'utf8')).version;
  console.log(`${result.userAgent}`);
  console.log(`raypick.wasm ${result.wasmBytes} bytes, build quality ${result.quality}; three-mesh-bvh ${version}; ${result.rays} rays per set, median of ${result.rounds} rounds\n`);
  console.log('| mesh | triangles | build ms raypick | build ms three-mesh-bvh | rays | query | raypick batch Mrays/s | raypick per ray | three-mesh-bvh | ÷ three-mesh-bvh | closest hits compared |');
  console.log('|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|');
  for (const m of result.meshes) {
    for (const c of m.cells) {
      const mine = c.mrays['raypick batch'] ?? c.mrays['raypick per ray'];
      const agree = c.agreement
        ? `${c.agreement.hits} hits; ${c.agreement.hitMiss} hit/miss, ${c.agreement.triangle} triangle differ`
        : `${c.hits.raypick} / ${c.hits['three-mesh-bvh']} hits`;
      console.log(`| ${m.name} | ${m.triangles} | ${m.build.raypick.toFixed(1)} | ${m.build['three-mesh-bvh'].toFixed(1)} | ${c.kind} | ${c.query} | ${c.mrays['raypick batch']?.toFixed(2) ?? '–'} | ${c.mrays['raypick per ray'].toFixed(2)} | ${c.mrays['three-mesh-bvh'].toFixed(2)} | ${(mine / c.mrays['three-mesh-bvh']).toFixed(2)} | ${agree} |`);
    }
  }
  if (opt.out) writeFileSync(opt.out, JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  server.close();
}
