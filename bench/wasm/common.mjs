// What the browser page (bench.js) and the Node driver (node.mjs) share: the median, the
// triangles of an OBJ, and the slice of a shared ray set that both cast.

export const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// The triangles of an OBJ: `v` lines and `f` lines (polygons as fans; negative indices count back).
export function parseObj(text) {
  const v = [];
  const idx = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('v ')) {
      const p = line.trim().split(/\s+/);
      v.push(+p[1], +p[2], +p[3]);
    } else if (line.startsWith('f ')) {
      const p = line.trim().split(/\s+/).slice(1).map((w) => {
        const i = parseInt(w, 10);
        return i < 0 ? v.length / 3 + i : i - 1;
      });
      for (let k = 1; k + 1 < p.length; k++) idx.push(p[0], p[k], p[k + 1]);
    }
  }
  return { positions: new Float32Array(v), indices: new Uint32Array(idx) };
}

// N rays of a shared set (`all`, six floats a ray): the first N incoherent rays; for the 1024²
// camera set (`primary`), N consecutive pixels from the middle row on (whole rows of the image,
// where the model is).
export function raySlice(all, kind, N) {
  const total = all.length / 6;
  const n = Math.min(N, total);
  const first = kind === 'primary' ? Math.max(0, Math.min(total - n, (total >> 1) - (n >> 1))) : 0;
  return all.slice(6 * first, 6 * (first + n));
}
