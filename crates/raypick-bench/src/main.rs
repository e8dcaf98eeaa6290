//! Comparison benchmark of raypick against other Rust ray casters.
fn main() {}
