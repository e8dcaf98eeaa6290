//! Library side of the `raypick` command-line tool, shared by the binary, its tests and the
//! browser viewer: the built-in demo scene, image rendering, and ray batch I/O.
pub mod demo;
pub mod raysio;
pub mod render;
pub mod view;
