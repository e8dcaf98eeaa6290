#![no_main]
//! Scene files (`raypick::scene::file`): any bytes are refused with a typed error or load a scene
//! that passes `validate()`, answers a query, and saves to bytes that load and save back to
//! themselves (a file may list its placed scenes in another order, or one nothing places, so the
//! first save need not repeat the input). The input is
//! tried as a whole file (the header checks) and as a payload under a header made to match it
//! (its length and CRC-32), since random bytes almost never carry the right checksum and the
//! decoder behind it is what needs the fuzzing.

use raypick::glam::Vec3;
use raypick::scene::file::{BYTE_ORDER_MARKER, HEADER_BYTES, MAGIC, VERSION};
use raypick::{Ray, Scene};

fn check(bytes: &[u8]) {
    let Ok(scene) = Scene::from_bytes(bytes) else {
        return;
    };
    assert_eq!(scene.validate(), Ok(()));
    let b = scene.bounds();
    let origin = if b.is_empty() { Vec3::ZERO } else { b.center() + b.extent() };
    let _ = scene.intersect(&Ray::new(origin, -b.extent().normalize_or(Vec3::X)));
    let _ = scene.count_intersections(&Ray::new(origin, Vec3::NEG_Y));
    let saved = scene.to_bytes();
    let again = Scene::from_bytes(&saved).expect("a saved scene loads");
    assert!(again.to_bytes() == saved, "a saved scene saves to other bytes");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check(data);
    let mut file = Vec::with_capacity(HEADER_BYTES + data.len());
    file.extend_from_slice(&MAGIC);
    file.extend_from_slice(&VERSION.to_le_bytes());
    file.extend_from_slice(&BYTE_ORDER_MARKER.to_le_bytes());
    file.extend_from_slice(&(data.len() as u64).to_le_bytes());
    file.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    file.extend_from_slice(&0u32.to_le_bytes());
    file.extend_from_slice(data);
    check(&file);
});
