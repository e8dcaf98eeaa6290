#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // Format detection plus whichever parser it picks (no extension hint).
    common::check(raypick_io::parse_bytes(data, None, &Default::default()).map(|(_, model)| model));
});
