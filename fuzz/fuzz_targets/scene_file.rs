#![no_main]
//! Scene files (`raypick::scene::file`): any bytes are refused with a typed error or load a scene
//! (the same through `Scene::from_bytes` and the streaming `Scene::from_reader`) that passes
//! `validate()`, answers a query, and saves to bytes that load and save back to
//! themselves (a file may list its placed scenes in another order, or one nothing places, so the
//! first save need not repeat the input). The input is
//! tried as a whole file (the header checks) and as a payload under a header made to match it
//! (its length and CRC-32), since random bytes almost never carry the right checksum and the
//! decoder behind it is what needs the fuzzing.

use raypick::glam::Vec3;
use raypick::scene::file::{BYTE_ORDER_MARKER, HEADER_BYTES, MAGIC, VERSION};
use raypick::{Ray, Scene};

fn check(bytes: &[u8]) {
    // The file held whole and the file read a piece at a time accept the same files and refuse
    // the others with the same error.
    let whole = Scene::from_bytes(bytes);
    let streamed = Scene::from_reader(bytes, bytes.len() as u64);
    let scene = match (whole, streamed) {
        (Ok(scene), Ok(other)) => {
            assert!(scene.to_bytes() == other.to_bytes(), "the two loads differ");
            scene
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            return;
        }
        (a, b) => panic!("from_bytes: {:?}, from_reader: {:?}", a.err(), b.err()),
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
