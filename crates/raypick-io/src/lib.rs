//! Loaders for raypick: OBJ, glTF 2.0, PLY and STL into scenes.
