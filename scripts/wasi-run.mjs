// Runs a wasm32-wasip1 program (a `cargo test` binary) under Node's WASI: the cargo runner of
// `scripts/wasm-simd-test.sh`, so the engine's SIMD tests run on the wasm32 simd128 code.
// Usage: node scripts/wasi-run.mjs PROGRAM.wasm [ARGS...]; exits with the program's status.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import process from 'node:process';

const [program, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [program, ...args],
  env: { RUST_BACKTRACE: '0' },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
