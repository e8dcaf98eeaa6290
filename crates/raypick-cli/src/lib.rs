//! Library side of the `raypick` command-line tool, shared by the binary, its tests and the
//! browser viewer: the built-in demo scene, image rendering, ray batch I/O, and how outputs are
//! written.
pub mod demo;
pub mod output;
pub mod raysio;
pub mod render;
pub mod view;
