#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // No base folder: external buffers fail with MissingBuffer instead of touching the disk.
    common::check(raypick_io::gltf::parse(data, &Default::default()));
});
