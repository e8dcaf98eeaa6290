//! Argument groups shared by several subcommands, and the value parsers clap calls for them.

use clap::{Args, ValueEnum};
use glam::{Vec2, Vec3};
use raypick::bvh::BuildConfig;
use raypick::camera::ClipSpace;
use raypick_cli::view::CameraSpec;
use raypick_io::{Instancing, LoadOptions, OutsideRefs, DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIANGLES};

/// What a load may read and build, for every subcommand that loads a model.
#[derive(Args, Clone)]
pub struct LoadArgs {
    /// Let the model refer to files outside its own folder (glTF buffers reached through `..`,
    /// symbolic links or absolute paths). Only for files you trust.
    #[arg(long)]
    pub allow_outside_refs: bool,
    /// The most bytes a load may read, the model and the files it refers to together: a number
    /// of bytes, or one with K, M or G (times 1024, 1024², 1024³).
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_count, default_value_t = DEFAULT_MAX_BYTES)]
    pub max_bytes: u64,
    /// The most triangles a load may make (every mesh once, plus copies baked for glTF instances
    /// with singular transforms).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_TRIANGLES)]
    pub max_triangles: u64,
    /// Keep every glTF node an instance of its mesh (hits then always name an instance). By
    /// default a node whose mesh no other node uses is baked into world space, which casts faster.
    #[arg(long)]
    pub keep_instances: bool,
    /// Keep the glTF node tree as nested instances (a scene per node with children), so that a
    /// hit names the node it struck however deep and carries the path of nodes down to it. Nodes
    /// deeper than the engine nests (8) are placed flat in their deepest allowed ancestor.
    #[arg(long, conflicts_with = "keep_instances")]
    pub hierarchy: bool,
    /// How the BVHs are built: `spatial` cuts long triangles (walls, floors) for faster casts in
    /// architecture at four to ten times the build time, worth it for a scene file built once
    /// (`raypick build --bvh spatial`). A scene file keeps the setting it was built with.
    #[arg(long, value_enum, default_value_t = BvhPreset::Balanced)]
    pub bvh: BvhPreset,
}

/// A BVH build preset ([`BuildConfig::PRESETS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BvhPreset {
    /// Fastest build ([`BuildConfig::FAST`]).
    Fast,
    /// The default ([`BuildConfig::BALANCED`]).
    Balanced,
    /// More bins, sweeps and reinsertion ([`BuildConfig::HIGH_QUALITY`]).
    HighQuality,
    /// Spatial splits ([`BuildConfig::SPATIAL`]).
    Spatial,
}

impl BvhPreset {
    /// The preset's settings.
    pub fn config(self) -> BuildConfig {
        match self {
            Self::Fast => BuildConfig::FAST,
            Self::Balanced => BuildConfig::BALANCED,
            Self::HighQuality => BuildConfig::HIGH_QUALITY,
            Self::Spatial => BuildConfig::SPATIAL,
        }
    }
}

impl LoadArgs {
    /// The loader's options these flags ask for.
    pub fn options(&self) -> LoadOptions {
        let instancing = if self.hierarchy {
            Instancing::Hierarchy
        } else if self.keep_instances {
            Instancing::Shared
        } else {
            Instancing::BakeSingleUse
        };
        LoadOptions {
            instancing,
            build: self.bvh.config(),
            ..LoadOptions::default()
        }
        .with_max_bytes(self.max_bytes)
        .with_max_triangles(self.max_triangles)
        .with_outside_refs(if self.allow_outside_refs {
            OutsideRefs::Allow
        } else {
            OutsideRefs::Refuse
        })
    }
}

/// A byte count: digits, optionally followed by K, M or G (powers of 1024; a trailing `B` or
/// `iB` is accepted too).
pub fn parse_byte_count(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let t = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, scale) = match t.char_indices().last() {
        Some((i, 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'm')) => (&t[..i], 1 << 20),
        Some((i, 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("{s:?}: expected a byte count such as 5000000, 200M or 2G"))
}

/// Camera and image options shared by pick and render.
#[derive(Args, Clone)]
pub struct ViewArgs {
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "800x600", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Camera as eye,target,up,fov: 10 numbers (fov vertical, degrees); default frames the model.
    #[arg(long, value_parser = parse_camera)]
    pub camera: Option<CameraSpec>,
    /// Clip-space convention of the projection.
    #[arg(long, value_enum, default_value = "gl")]
    pub convention: Convention,
}

/// The clip-space convention a projection is built for.
#[derive(Clone, Copy, ValueEnum)]
pub enum Convention {
    /// OpenGL: NDC z in [-1, 1].
    Gl,
    /// Direct3D / wgpu / Metal: NDC z in [0, 1].
    D3d,
    /// Vulkan: NDC z in [0, 1], y down.
    Vulkan,
}

impl Convention {
    /// The engine's name for this convention.
    pub fn clip_space(self) -> ClipSpace {
        match self {
            Self::Gl => ClipSpace::OpenGl,
            Self::D3d => ClipSpace::Direct3D,
            Self::Vulkan => ClipSpace::Vulkan,
        }
    }
}

/// Where pixel row 0 is.
#[derive(Clone, Copy, ValueEnum)]
pub enum Origin {
    /// Row 0 at the top.
    TopLeft,
    /// Row 0 at the bottom.
    BottomLeft,
}

fn parse_numbers(s: &str, n: usize, what: &str) -> Result<Vec<f32>, String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f32>()
                .map_err(|_| format!("{what}: {x:?} is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() != n {
        return Err(format!(
            "{what}: expected {n} comma-separated numbers, found {}",
            v.len()
        ));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(format!("{what}: numbers must be finite"));
    }
    Ok(v)
}

/// `WIDTHxHEIGHT`, each in `1..=16384`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size {s:?}: expected WIDTHxHEIGHT, e.g. 800x600"))?;
    let w: u32 = w
        .trim()
        .parse()
        .map_err(|_| format!("size {s:?}: width {w:?} is not a positive integer"))?;
    let h: u32 = h
        .trim()
        .parse()
        .map_err(|_| format!("size {s:?}: height {h:?} is not a positive integer"))?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(format!("size {s:?}: width and height must be in 1..=16384"));
    }
    Ok((w, h))
}

/// `X,Y`: integers name a pixel (its centre is used), decimals an exact window position.
pub fn parse_pixel(s: &str) -> Result<Vec2, String> {
    let v = parse_numbers(s, 2, "pixel X,Y")?;
    let is_int = |t: &str| t.trim().parse::<i64>().is_ok();
    let parts: Vec<&str> = s.split(',').collect();
    let x = if is_int(parts[0]) { v[0] + 0.5 } else { v[0] };
    let y = if is_int(parts[1]) { v[1] + 0.5 } else { v[1] };
    Ok(Vec2::new(x, y))
}

/// `eye,target,up,fov`: 10 numbers, the field of view in `(0, 180)` degrees.
pub fn parse_camera(s: &str) -> Result<CameraSpec, String> {
    let v = parse_numbers(s, 10, "camera eye,target,up,fov")?;
    let spec = CameraSpec {
        eye: Vec3::new(v[0], v[1], v[2]),
        target: Vec3::new(v[3], v[4], v[5]),
        up: Vec3::new(v[6], v[7], v[8]),
        fov_deg: v[9],
    };
    if !(spec.fov_deg > 0.0 && spec.fov_deg < 180.0) {
        return Err(format!(
            "camera: fov {} must be in (0, 180) degrees",
            spec.fov_deg
        ));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_byte_count("5000"), Ok(5000));
        assert_eq!(parse_byte_count("64K"), Ok(64 << 10));
        assert_eq!(parse_byte_count("200M"), Ok(200 << 20));
        assert_eq!(parse_byte_count("2G"), Ok(2 << 30));
        assert_eq!(parse_byte_count("2GiB"), Ok(2 << 30));
        assert_eq!(parse_byte_count("3mb"), Ok(3 << 20));
        for bad in ["", "G", "-1", "1.5G", "99999999999G", "12 apples"] {
            assert!(parse_byte_count(bad).is_err(), "{bad}");
        }
    }
}
