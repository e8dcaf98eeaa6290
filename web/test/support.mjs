// What the tests share: where the repository, the data and the native `raypick` binary are, the
// wasm module loaded once, scene files built by the native CLI, a .npz reader for `raypick cast`'s
// output, and seeded random numbers.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { init } from '../raypick/index.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DATA = process.env.RAYPICK_DATA ?? join(ROOT, '..', 'shared', 'data');
export const BUNNY = join(DATA, 'obj', 'stanford-bunny.obj');
export const SPONZA = join(DATA, 'scenes', 'sponza-dabrovic.obj');

/** The native `raypick` binary: $RAYPICK_BIN, else the debug build scripts/wasm-test.sh makes. */
export const RAYPICK_BIN = process.env.RAYPICK_BIN ?? join(ROOT, 'target', 'debug', 'raypick');

/** Loads the module (web/raypick/raypick.wasm, built by scripts/build-wasm.sh). */
export async function ready() {
  await init(new URL('../raypick/raypick.wasm', import.meta.url));
}

const work = mkdtempSync(join(tmpdir(), 'raypick-web-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

/** A scratch file path, removed when the process ends. */
export function scratch(name) {
  return join(work, name);
}

/** Runs the native CLI; its stdout. */
export function cli(...args) {
  if (!existsSync(RAYPICK_BIN)) {
    throw new Error(`${RAYPICK_BIN} is missing: run scripts/wasm-test.sh (it builds it), or set RAYPICK_BIN`);
  }
  return execFileSync(RAYPICK_BIN, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

const built = new Map();

/** The scene file `raypick build MODEL -o X.rpk` writes, as bytes, and its path. */
export function buildRpk(model) {
  if (!built.has(model)) {
    if (!existsSync(model)) throw new Error(`${model} is missing (set RAYPICK_DATA to the shared data folder)`);
    const out = scratch(`${built.size}.rpk`);
    cli('build', model, '-o', out);
    built.set(model, out);
  }
  const path = built.get(model);
  return { path, bytes: readFileSync(path) };
}

/** `raypick pick … --json`, parsed. */
export function cliPick(rpk, args) {
  return JSON.parse(cli('pick', rpk, '--json', ...args));
}

/** Writes rays (Float32Array, six per ray) as a `.rays` file (little-endian f32 rows). */
export function writeRays(name, rays) {
  const path = scratch(name);
  const bytes = new Uint8Array(rays.length * 4);
  const dv = new DataView(bytes.buffer);
  rays.forEach((x, i) => dv.setFloat32(4 * i, x, true));
  writeFileSync(path, bytes);
  return path;
}

/**
 * The arrays of a `.npz` file as written by `raypick cast` (a zip of stored `.npy` members,
 * zip64 sizes): `{name: TypedArray}` (f4 → Float32Array, i8 → BigInt64Array, b1 → Uint8Array).
 */
export function readNpz(path) {
  const buf = readFileSync(path);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = {};
  let p = 0;
  while (p + 30 <= buf.length && dv.getUint32(p, true) === 0x04034b50) {
    const method = dv.getUint16(p + 8, true);
    let size = dv.getUint32(p + 18, true);
    const nameLen = dv.getUint16(p + 26, true);
    const extraLen = dv.getUint16(p + 28, true);
    const name = buf.subarray(p + 30, p + 30 + nameLen).toString('utf8');
    let q = p + 30 + nameLen;
    const extraEnd = q + extraLen;
    while (q + 4 <= extraEnd) {
      const id = dv.getUint16(q, true);
      const len = dv.getUint16(q + 2, true);
      if (id === 0x0001 && size === 0xffffffff) size = Number(dv.getBigUint64(q + 4, true));
      q += 4 + len;
    }
    if (method !== 0) throw new Error(`${path}: ${name} is compressed (method ${method})`);
    out[name.replace(/\.npy$/, '')] = parseNpy(buf.subarray(extraEnd, extraEnd + size));
    p = extraEnd + size;
  }
  return out;
}

function parseNpy(b) {
  if (b[0] !== 0x93 || b.subarray(1, 6).toString('latin1') !== 'NUMPY') throw new Error('not a .npy member');
  const major = b[6];
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = b.subarray(start, start + headerLen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const data = b.subarray(start + headerLen);
  const copy = new Uint8Array(data).buffer; // aligned
  switch (descr) {
    case '<f4': return new Float32Array(copy);
    case '<i8': return new BigInt64Array(copy);
    case '|b1': return new Uint8Array(copy);
    default: throw new Error(`unexpected dtype ${descr}`);
  }
}

/** A seeded generator of floats in [0, 1) (mulberry32): the same rays on every run. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The f32 bit pattern of a number (for exact comparisons that tell -0 from 0 and show NaNs). */
export function bits(x) {
  const f = new Float32Array([x]);
  return new Uint32Array(f.buffer)[0];
}
