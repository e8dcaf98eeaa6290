//! Argument groups shared by several subcommands, and the value parsers clap calls for them.

use clap::{Args, ValueEnum};
use glam::{Vec2, Vec3};
use raypick::camera::ClipSpace;
use raypick_cli::view::CameraSpec;

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
