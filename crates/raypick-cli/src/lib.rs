//! Library side of the raypick CLI: shared by the binary and its tests.
pub mod raysio;
pub mod shapes;
