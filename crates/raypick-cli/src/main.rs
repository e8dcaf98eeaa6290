//! The `raypick` command-line tool: what is under a pixel, ray-cast images, batch casting for
//! pipelines, scene statistics and kernel timings, on OBJ, glTF, PLY and STL files or on a built-in
//! demo scene.

//!
//! This file holds the command line's definition and its dispatch; each subcommand is a module of
//! [`cmd`].

mod args;
mod cmd;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use glam::Vec2;
use raypick_cli::render::Mode;

use args::{parse_pixel, parse_size, LoadArgs, Origin, ViewArgs};
use cmd::bench::Effort;
use cmd::cast::CastQuery;
use cmd::Output;

const EXAMPLES: &str = "\
Examples:
  raypick demo                                   # render the built-in scene to raypick-demo.png
  raypick pick bunny.obj --pixel 400,300         # what is under pixel (400, 300) of an 800x600 view
  raypick pick model.glb --pixel 10,20 --convention d3d --json
  raypick render model.ply -o out.png --mode prim-id --size 640x480
  raypick cast bunny.obj --rays bunny.incoherent.rays --out hits.npz
  raypick info scene.gltf
  raypick build sponza.obj -o sponza.rpk         # build once; every subcommand loads .rpk without a build
  raypick bench";

#[derive(Parser)]
#[command(name = "raypick", version, about = "Exact, fast ray casting and picking.", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render the built-in demo scene (no file needed), mark and print a few picks.
    #[command(after_help = "Example:\n  raypick demo --out demo.png --size 1024x768")]
    Demo {
        /// Output PNG.
        #[arg(short, long, default_value = "raypick-demo.png")]
        out: PathBuf,
        /// Image size, WIDTHxHEIGHT.
        #[arg(long, default_value = "960x640", value_parser = parse_size)]
        size: (u32, u32),
    },
    /// Print what is under one pixel.
    #[command(
        after_help = "Examples:\n  raypick pick bunny.obj --pixel 400,300\n  raypick pick model.glb --pixel 10,20 --size 640x480 --convention vulkan --json\n  raypick pick bunny.obj --pixel 400,300 --camera 0,0.1,0.3,0,0.1,0,0,1,0,45"
    )]
    Pick {
        /// Model file (OBJ, glTF/GLB, PLY, STL, or a `.rpk` scene file); the built-in demo scene when omitted.
        model: Option<PathBuf>,
        #[command(flatten)]
        load: LoadArgs,
        /// Pixel X,Y (integers: the pixel centre is used; decimals: that exact window position).
        #[arg(long, value_parser = parse_pixel)]
        pixel: Vec2,
        #[command(flatten)]
        view: ViewArgs,
        /// Pixel row 0 at the top (window events) or bottom (OpenGL window coordinates).
        #[arg(long, value_enum, default_value = "top-left")]
        origin: Origin,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Ray-cast an image of a model.
    #[command(
        after_help = "Examples:\n  raypick render bunny.obj -o bunny.png\n  raypick render model.glb -o ids.png --mode prim-id --size 320x240"
    )]
    Render {
        /// Model file; the built-in demo scene when omitted.
        model: Option<PathBuf>,
        #[command(flatten)]
        load: LoadArgs,
        /// Output PNG (never one of the input files; replaced only once complete).
        #[arg(short, long)]
        out: PathBuf,
        /// What each pixel shows.
        #[arg(long, value_enum, default_value = "shaded")]
        mode: Mode,
        #[command(flatten)]
        view: ViewArgs,
        /// Highlight the triangle under this pixel X,Y.
        #[arg(long, value_parser = parse_pixel)]
        highlight: Option<Vec2>,
    },
    /// Cast a batch of rays from a file and write the hits as numpy arrays.
    #[command(
        after_help = "Examples:\n  raypick cast bunny.obj --rays bunny.incoherent.rays --out hits.npz\n  raypick cast bunny.obj --rays rays.npy --out occ.npz --any-hit\n\nInput: .rays (little-endian float32 rows ox oy oz dx dy dz) or .npy (N x 6, float32/float64).\nOutput .npz arrays, in input order: t (float32, inf on a miss), prim (int64, -1 on a miss), u, v\n(float32), geom and instance (int64, -1 when none). --any-hit writes `occluded` (bool).\n--all-hits writes one row per hit plus `ray` (int64, the ray it belongs to), sorted by ray then t."
    )]
    Cast {
        /// Model file.
        model: PathBuf,
        #[command(flatten)]
        load: LoadArgs,
        /// Ray file (.rays or .npy).
        #[arg(long)]
        rays: PathBuf,
        /// Output .npz (never one of the input files; replaced only once complete).
        #[arg(long)]
        out: PathBuf,
        /// Occlusion only: does each ray hit anything?
        #[arg(long, conflicts_with = "all_hits")]
        any_hit: bool,
        /// Every hit of every ray, not only the closest.
        #[arg(long)]
        all_hits: bool,
    },
    /// Closest surface points of a batch of query points, with signed distance or inside test.
    #[command(
        after_help = "Examples:\n  raypick closest bunny.obj --points points.npy --out closest.npz\n  raypick closest room.obj --points grid.npy --out sdf.npz --signed --inside\n\nInput: .npy (N x 3, float32/float64).\nOutput .npz arrays, in input order: point (N x 3 float32, NaN when none), distance (float32; NaN\nfor a non-finite point, inf in an empty scene), prim, geom, instance (int64, -1 when none), u, v\n(float32 barycentrics of v1, v2), normal (N x 3 float32). --signed adds signed_distance (negative\ninside), --inside adds inside (bool). --method picks the inside test: parity (closed meshes,\nexact; default) or winding-number (meshes with holes)."
    )]
    Closest {
        /// Model file.
        model: PathBuf,
        #[command(flatten)]
        load: LoadArgs,
        /// Query points (.npy, N x 3).
        #[arg(long)]
        points: PathBuf,
        /// Output .npz (never one of the input files; replaced only once complete).
        #[arg(long)]
        out: PathBuf,
        /// Also write the signed distance (negative inside).
        #[arg(long)]
        signed: bool,
        /// Also write whether each point is inside.
        #[arg(long)]
        inside: bool,
        /// How inside is decided.
        #[arg(long, value_enum, default_value_t = InsideArg::Parity)]
        method: InsideArg,
    },
    /// Load and build a model once and save it as a scene file (`.rpk`: geometry, names, masks
    /// and every BVH), which every subcommand then loads without a build.
    #[command(
        after_help = "Example:\n  raypick build sponza.obj -o sponza.rpk\n  raypick render sponza.rpk -o sponza.png"
    )]
    Build {
        /// Model file (OBJ, glTF/GLB, PLY, STL, or a scene file).
        model: PathBuf,
        #[command(flatten)]
        load: LoadArgs,
        /// The scene file to write.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Geometries, triangles, bounds, BVH statistics and build time.
    #[command(after_help = "Example:\n  raypick info scene.gltf --json")]
    Info {
        /// Model file; the built-in demo scene when omitted.
        model: Option<PathBuf>,
        #[command(flatten)]
        load: LoadArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Time every intersection kernel and the scene queries on this machine.
    #[command(after_help = "Example:\n  raypick bench --quick")]
    Bench {
        /// Fewer rays and runs (for a smoke test).
        #[arg(long)]
        quick: bool,
    },
    /// Interactive picking in the browser: a local web viewer rendered and picked by raypick.
    #[command(after_help = "Examples:\n  raypick serve\n  raypick serve bunny.obj --port 8080")]
    Serve(cmd::serve::ServeArgs),
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Demo { out, size } => cmd::demo::run(&out, size),
        Command::Pick {
            model,
            load,
            pixel,
            view,
            origin,
            json,
        } => cmd::pick::run(
            model.as_deref(),
            &load,
            pixel,
            &view,
            origin,
            Output::from_json_flag(json),
        ),
        Command::Render {
            model,
            load,
            out,
            mode,
            view,
            highlight,
        } => cmd::render::run(model.as_deref(), &load, &out, mode, &view, highlight),
        Command::Cast {
            model,
            load,
            rays,
            out,
            any_hit,
            all_hits,
        } => cmd::cast::run(
            &model,
            &load,
            &rays,
            &out,
            CastQuery::from_flags(any_hit, all_hits),
        ),
        Command::Closest {
            model,
            load,
            points,
            out,
            signed,
            inside,
            method,
        } => cmd::closest::run(
            &model,
            &load,
            &points,
            &out,
            cmd::closest::Extras { signed, inside },
            method.into(),
        ),
        Command::Build { model, load, out } => cmd::build::run(&model, &load, &out),
        Command::Info { model, load, json } => {
            cmd::info::run(model.as_deref(), &load, Output::from_json_flag(json))
        }
        Command::Bench { quick } => {
            cmd::bench::run(if quick { Effort::Quick } else { Effort::Full })
        }
        Command::Serve(args) => cmd::serve::run(args),
    }
}

/// The inside test of `raypick closest --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum InsideArg {
    /// Crossing parity of one ray: exact for closed meshes.
    Parity,
    /// Generalized winding number above 1/2: for meshes with holes.
    WindingNumber,
}

impl From<InsideArg> for raypick::InsideMethod {
    fn from(m: InsideArg) -> Self {
        match m {
            InsideArg::Parity => Self::Parity,
            InsideArg::WindingNumber => Self::WindingNumber,
        }
    }
}

fn main() {
    ignore_file_size_signal();
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        // One line: the error and its causes joined by ": ".
        eprintln!("raypick: error: {e:#}");
        std::process::exit(1);
    }
}

/// A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, which kills the process and
/// leaves its temporary output file behind. Ignored, the write fails with EFBIG instead: the tool
/// reports it, removes the temporary file, and the previous output stays as it was.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_IGN` installs no handler code; it only sets this signal's
    // disposition, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
