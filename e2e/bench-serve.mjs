// Latency of a running `raypick serve`: median and p90 over N requests of a W×H frame (render +
// PNG + delivery, as the page's fetch sees it) and of a pick, each request with a slightly turned
// view so nothing can be cached. Usage:
//   raypick serve ../shared/data/obj/stanford-bunny.obj --port 7878 &
//   node e2e/bench-serve.mjs http://127.0.0.1:7878 [N=20] [W=640] [H=480] [mode=shaded]
const [base = 'http://127.0.0.1:7878', n = '20', w = '640', h = '480', mode = 'shaded'] = process.argv.slice(2);
const N = +n;
const info = await (await fetch(`${base}/api/scene`)).json();
const v = info.view;
const q = (i) => new URLSearchParams({
  tx: v.target[0], ty: v.target[1], tz: v.target[2], yaw: v.yaw + 0.01 * i, pitch: v.pitch,
  dist: v.distance, fov: v.fov, w, h,
});
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.floor(s.length * 0.9)], min: s[0], max: s[s.length - 1] };
};
const fmt = (o) => Object.entries(o).map(([k, x]) => `${k} ${x.toFixed(2)}`).join(', ');

// Warm-up (page-in, thread pools).
for (let i = 0; i < 3; i++) await (await fetch(`${base}/render?${q(-i)}&mode=${mode}`)).arrayBuffer();
const total = [], render = [], encode = [], bytes = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const resp = await fetch(`${base}/render?${q(i)}&mode=${mode}`);
  const body = await resp.arrayBuffer();
  total.push(performance.now() - t0);
  if (!resp.ok) throw new Error(`render: ${resp.status}`);
  const timing = resp.headers.get('server-timing');
  render.push(+timing.match(/render;dur=([0-9.]+)/)[1]);
  encode.push(+timing.match(/encode;dur=([0-9.]+)/)[1]);
  bytes.push(body.byteLength / 1024);
}
const pickTotal = [], pickServer = [];
let hits = 0;
for (let i = 0; i < N; i++) {
  const p = q(i);
  p.set('x', String(+w / 2 + 0.5));
  p.set('y', String(+h / 2 + 0.5));
  const t0 = performance.now();
  const r = await (await fetch(`${base}/api/pick?${p}`)).json();
  pickTotal.push(performance.now() - t0);
  pickServer.push(r.pick_us / 1000);
  if (r.hit) hits++;
}
console.log(`${info.model} (${info.triangles} triangles), ${w}x${h} ${mode}, ${N} requests each`);
console.log(`frame round trip ms: ${fmt(stats(total))}`);
console.log(`  server render ms:  ${fmt(stats(render))}`);
console.log(`  server png ms:     ${fmt(stats(encode))}`);
console.log(`  png KiB:           ${fmt(stats(bytes))}`);
console.log(`pick round trip ms:  ${fmt(stats(pickTotal))} (${hits}/${N} hits)`);
console.log(`  server pick ms:    ${fmt(stats(pickServer))}`);
