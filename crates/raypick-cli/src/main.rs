//! The `raypick` command-line tool.

fn main() {}
