//! Comparison benchmark of raypick against other Rust ray casters.
//!
//! ```sh
//! cargo run --release -p raypick-bench --features compare -- --rays-dir /tmp/rays            # the shared ray sets
//! cargo run --release -p raypick-bench --features compare -- --rays 100000 --runs 3          # a quick look
//! cargo run --release -p raypick-bench --features compare -- --engines obvhs,bvh --threads 2
//! ```
//!
//! Prints, per ray set, the closest-hit and any-hit throughput (Mrays/s, median of `--runs` runs after
//! a warm-up) on 1 and N threads, the BVH build times, the ratio of the first engine to each, and the
//! ray-by-ray agreement of the engines (disputes settled by an `f64` brute force).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use rayon::{ThreadPool, ThreadPoolBuilder};
use raypick::{bvh::BuildConfig, Ray};
use raypick_bench::{
    agree::{self, Answers},
    engines::{Engine, EngineKind, HitRec},
    measure::{time_runs, Stats},
    mesh::{load_mesh, Mesh},
    rays,
};

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Compare raypick with obvhs, parry3d and bvh on the shared ray sets")]
struct Args {
    /// Mesh to cast against: any file raypick-io reads (OBJ, glTF/GLB, PLY, STL), as one triangle
    /// soup (OBJ groups concatenated, glTF instances flattened).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/obj/stanford-bunny.obj"))]
    mesh: PathBuf,
    /// Read `PREFIX.incoherent.rays` / `PREFIX.primary.rays` (written by shared/tools/make_rays.py)
    /// from this folder instead of making the sets here. PREFIX: `--rays-prefix`, else the only
    /// prefix found there.
    #[arg(long)]
    rays_dir: Option<PathBuf>,
    /// File name prefix of the `.rays` files in `--rays-dir`.
    #[arg(long)]
    rays_prefix: Option<String>,
    /// Timed runs per measurement (after one warm-up run); the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Use only this many rays of each set (evenly spread over it).
    #[arg(long)]
    rays: Option<usize>,
    /// Engines to run, comma-separated; the first is the reference of the ratios and the agreement.
    /// Default: every engine compiled in (raypick,obvhs,parry3d,bvh with `--features compare`).
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Threads of the "all threads" pool (default: every available core).
    #[arg(long)]
    threads: Option<usize>,
    /// Ray sets to run, comma-separated: incoherent, primary.
    #[arg(long, value_delimiter = ',', default_value = "incoherent,primary")]
    sets: Vec<String>,
    /// Longest a single-threaded timed run may take, in seconds: a slower engine gets a subsample of
    /// the rays (with a warning) so that the whole benchmark stays within minutes.
    #[arg(long, default_value_t = 10.0)]
    budget_s: f64,
    /// Most disputed rays to settle with the f64 brute force, per set.
    #[arg(long, default_value_t = 2000)]
    max_checked: usize,
    /// Number of incoherent rays when the sets are made here.
    #[arg(long, default_value_t = 1_000_000)]
    incoherent_rays: usize,
    /// Image size (pixels per side) of the primary set when made here.
    #[arg(long, default_value_t = 1024)]
    resolution: usize,
    /// Seed of the incoherent set when made here.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// raypick's BVH build preset: fast, balanced, high_quality or spatial (`BuildConfig::PRESETS`).
    #[arg(long, default_value = "balanced")]
    raypick_config: String,
}

/// One ray set, ready to cast.
struct RaySet {
    /// `incoherent` or `primary`.
    name: String,
    /// The rays, after `--rays` subsampling.
    rays: Vec<Ray>,
}

/// One engine's figures on one ray set.
struct SetResult {
    /// Rays per timed run (fewer than the set when the budget cut them).
    rays: usize,
    /// Closest-hit batch timings on the 1-thread and the N-thread pool.
    closest: [Stats; 2],
    /// Any-hit batch timings on the 1-thread and the N-thread pool.
    any: [Stats; 2],
}

/// One engine, built, with its build times on 1 and N threads.
struct Built {
    /// The engine as built on the N-thread pool.
    engine: Box<dyn Engine>,
    /// Build timings on the 1-thread and the N-thread pool.
    build: [Stats; 2],
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let kinds = if args.engines.is_empty() {
        if EngineKind::available().len() == 1 {
            eprintln!("note: built without `--features compare`: raypick only");
        }
        EngineKind::available().to_vec()
    } else {
        args.engines
            .iter()
            .map(|name| EngineKind::parse(name))
            .collect::<Result<Vec<_>>>()?
    };
    let raypick_config = BuildConfig::PRESETS
        .iter()
        .find(|(name, _)| *name == args.raypick_config)
        .map(|&(_, config)| config)
        .with_context(|| {
            format!(
                "unknown --raypick-config `{}` (known: {})",
                args.raypick_config,
                BuildConfig::PRESETS.map(|(name, _)| name).join(", ")
            )
        })?;
    let n_threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pools = [pool(1)?, pool(n_threads)?];
    let labels = ["1T".to_string(), format!("{n_threads}T")];

    let mesh = load_mesh(&args.mesh)?;
    if mesh.indices.is_empty() {
        bail!("{}: no triangles", args.mesh.display());
    }
    let sets = ray_sets(&args, &mesh)?;

    println!("# raypick-bench");
    println!();
    println!("- date (UTC): {}", utc_date());
    println!("- CPU: {} ({} threads available)", cpu_model(), num_cpus());
    println!(
        "- mesh: {} ({} vertices, {} triangles)",
        args.mesh.display(),
        mesh.vertices.len(),
        mesh.num_triangles()
    );
    for set in &sets {
        println!("- {} rays: {}", set.name, set.rays.len());
    }
    println!(
        "- threads: 1 and {n_threads}; median of {} runs after a warm-up",
        args.runs
    );
    for kind in &kinds {
        println!("- {} {}: {}", kind.name(), kind.version(), kind.method());
        if *kind == EngineKind::Raypick {
            println!("  (this run: `--raypick-config {}`)", args.raypick_config);
        }
    }
    println!();

    let mut built = Vec::new();
    for &kind in &kinds {
        eprintln!("building {} ...", kind.name());
        match build(kind, &mesh, &pools, args.runs, raypick_config) {
            Ok(b) => built.push(b),
            Err(e) => eprintln!("warning: {} skipped: {e:#}", kind.name()),
        }
    }
    if built.is_empty() {
        bail!("no engine could be built");
    }

    println!("## BVH build, ms (median)");
    println!();
    println!(
        "| engine | version | build {} | build {} |",
        labels[0], labels[1]
    );
    println!("|---|---|---:|---:|");
    for b in &built {
        let kind = b.engine.kind();
        let is_ref = std::ptr::eq(b, &built[0]);
        let cell = |i: usize| {
            let (ms, ms_ref) = (b.build[i].median * 1e3, built[0].build[i].median * 1e3);
            ratio_cell(ms, (!is_ref).then_some(ms_ref / ms))
        };
        println!(
            "| {} | {} | {} | {} |",
            kind.name(),
            kind.version(),
            cell(0),
            cell(1)
        );
    }
    println!();
    for b in &built {
        if let Some(bytes) = b.engine.memory_bytes() {
            println!(
                "- {} memory: {:.1} bytes per triangle ({:.2} MB: acceleration structure and the \
                 mesh it keeps)",
                b.engine.kind().name(),
                bytes as f64 / mesh.num_triangles() as f64,
                bytes as f64 / 1e6
            );
        }
    }
    println!();
    println!(
        "(×) = {0} / engine: for build times below 1 means {0} builds faster, for throughput \
         (below) above 1 means {0} casts faster.",
        built[0].engine.kind().name()
    );
    println!();

    for set in &sets {
        let results = measure_set(&built, set, &pools, &args);
        print_set(set, &built, &results, &labels);
        let common = results.iter().map(|r| r.rays).min().unwrap_or(0);
        agreement(&mesh, set, &built, common, &pools[1], args.max_checked)?;
    }
    Ok(())
}

/// A rayon pool of `n` threads.
fn pool(n: usize) -> Result<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .build()
        .context("building a rayon pool")
}

/// Makes or reads the requested ray sets, subsampled to `--rays`.
fn ray_sets(args: &Args, mesh: &Mesh) -> Result<Vec<RaySet>> {
    let mut sets = Vec::new();
    for name in &args.sets {
        let name = name.trim();
        let rays = match (name, &args.rays_dir) {
            ("incoherent" | "primary", Some(dir)) => {
                let prefix = match &args.rays_prefix {
                    Some(p) => p.clone(),
                    None => find_prefix(dir)?,
                };
                let path = dir.join(format!("{prefix}.{name}.rays"));
                rays::read_rays(&path)?
            }
            ("incoherent", None) => rays::incoherent(mesh, args.incoherent_rays, args.seed),
            ("primary", None) => rays::primary(mesh, args.resolution),
            (other, _) => bail!("unknown ray set `{other}` (known: incoherent, primary)"),
        };
        let rays = match args.rays {
            Some(n) => rays::subsample(&rays, n),
            None => rays,
        };
        if rays.is_empty() {
            bail!("the {name} set is empty");
        }
        sets.push(RaySet {
            name: name.to_string(),
            rays,
        });
    }
    Ok(sets)
}

/// The single `PREFIX` of the `PREFIX.incoherent.rays` files in `dir`.
fn find_prefix(dir: &Path) -> Result<String> {
    let mut prefixes = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = entry?.file_name();
        if let Some(p) = name.to_string_lossy().strip_suffix(".incoherent.rays") {
            prefixes.push(p.to_string());
        }
    }
    match prefixes.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("no *.incoherent.rays in {}", dir.display()),
        many => bail!(
            "several prefixes in {} ({}): pick one with --rays-prefix",
            dir.display(),
            many.join(", ")
        ),
    }
}

/// Builds `kind` on 1 and N threads, timing each; keeps the N-thread build.
fn build(
    kind: EngineKind,
    mesh: &Mesh,
    pools: &[ThreadPool; 2],
    runs: usize,
    config: BuildConfig,
) -> Result<Built> {
    // Surface a build error once, before timing.
    kind.build_with(mesh, config)?;
    let (one, _) = pools[0].install(|| time_runs(runs, || kind.build_with(mesh, config)));
    let (all, engine) = pools[1].install(|| time_runs(runs, || kind.build_with(mesh, config)));
    Ok(Built {
        engine: engine?,
        build: [one, all],
    })
}

/// The rays `engine` is timed on: the whole set, or the evenly spread share that keeps one
/// single-threaded closest-hit run within `--budget-s` (estimated from a 1024-ray probe).
fn budget_rays(engine: &dyn Engine, set: &RaySet, pool: &ThreadPool, budget_s: f64) -> Vec<Ray> {
    let probe = rays::subsample(&set.rays, 1024);
    let mut out = vec![None; probe.len()];
    let (stats, ()) = pool.install(|| time_runs(1, || engine.closest_batch(&probe, &mut out)));
    let per_ray = stats.median / probe.len() as f64;
    let allowed = (budget_s / per_ray).max(probe.len() as f64) as usize;
    if allowed < set.rays.len() {
        eprintln!(
            "warning: {} would take ~{:.0} s per single-threaded run over {} {} rays: timing {allowed} of them (--budget-s)",
            engine.kind().name(),
            per_ray * set.rays.len() as f64,
            set.rays.len(),
            set.name
        );
        rays::subsample(&set.rays, allowed)
    } else {
        set.rays.clone()
    }
}

/// Times closest and any hit on 1 and N threads for every engine.
///
/// The runs are interleaved: round `r` times every engine once before round `r + 1` starts (round 0
/// is the warm-up), so a change in the machine's load during the measurement hits every engine
/// alike and the ratios stay meaningful on a shared machine.
fn measure_set(
    built: &[Built],
    set: &RaySet,
    pools: &[ThreadPool; 2],
    args: &Args,
) -> Vec<SetResult> {
    eprintln!("{} rays ...", set.name);
    let rays: Vec<Vec<Ray>> = built
        .iter()
        .map(|b| budget_rays(b.engine.as_ref(), set, &pools[0], args.budget_s))
        .collect();
    let mut closest_out: Vec<Vec<Option<HitRec>>> =
        rays.iter().map(|r| vec![None; r.len()]).collect();
    let mut any_out: Vec<Vec<bool>> = rays.iter().map(|r| vec![false; r.len()]).collect();
    // samples[engine][query: 0 closest, 1 any][pool]
    let mut samples: Vec<[[Vec<f64>; 2]; 2]> =
        (0..built.len()).map(|_| Default::default()).collect();
    for (p, pool) in pools.iter().enumerate() {
        for any_hit in [false, true] {
            for round in 0..=args.runs {
                for (e, b) in built.iter().enumerate() {
                    let secs = pool.install(|| {
                        let start = Instant::now();
                        if any_hit {
                            b.engine.any_batch(&rays[e], &mut any_out[e]);
                        } else {
                            b.engine.closest_batch(&rays[e], &mut closest_out[e]);
                        }
                        start.elapsed().as_secs_f64()
                    });
                    if round > 0 {
                        samples[e][usize::from(any_hit)][p].push(secs);
                    }
                }
            }
        }
    }
    samples
        .iter()
        .zip(&rays)
        .map(|(s, r)| SetResult {
            rays: r.len(),
            closest: [Stats::from_samples(&s[0][0]), Stats::from_samples(&s[0][1])],
            any: [Stats::from_samples(&s[1][0]), Stats::from_samples(&s[1][1])],
        })
        .collect()
}

/// A figure, followed by `(×ratio)` when there is one (not for the reference engine itself).
fn ratio_cell(value: f64, ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!("{} (×{r:.2})", format_sig(value)),
        None => format_sig(value),
    }
}

/// Three significant figures, at most two decimals for large values.
fn format_sig(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Prints the throughput table of one set.
fn print_set(set: &RaySet, built: &[Built], results: &[SetResult], labels: &[String; 2]) {
    println!("## {} rays: Mrays/s (median)", set.name);
    println!();
    println!(
        "| engine | rays timed | closest {0} | closest {1} | any {0} | any {1} |",
        labels[0], labels[1]
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let reference = &results[0];
    for (b, r) in built.iter().zip(results) {
        let is_ref = std::ptr::eq(r, reference);
        // Throughput ratio: reference / engine.
        let cell = |s: &Stats, s_ref: &Stats| {
            let (m, m_ref) = (s.mrays(r.rays), s_ref.mrays(reference.rays));
            ratio_cell(m, (!is_ref).then_some(m_ref / m))
        };
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            b.engine.kind().name(),
            r.rays,
            cell(&r.closest[0], &reference.closest[0]),
            cell(&r.closest[1], &reference.closest[1]),
            cell(&r.any[0], &reference.any[0]),
            cell(&r.any[1], &reference.any[1]),
        );
    }
    println!();
    println!("Spread of the timed runs (max/min − 1): ");
    for (b, r) in built.iter().zip(results) {
        let spread = |s: &Stats| format!("{:.0}%", (s.max / s.min - 1.0) * 100.0);
        println!(
            "- {}: closest {} / {}, any {} / {}",
            b.engine.kind().name(),
            spread(&r.closest[0]),
            spread(&r.closest[1]),
            spread(&r.any[0]),
            spread(&r.any[1])
        );
    }
    println!();
}

/// Casts the common share of the set with every engine and prints how they agree.
fn agreement(
    mesh: &Mesh,
    set: &RaySet,
    built: &[Built],
    common: usize,
    pool: &ThreadPool,
    max_checked: usize,
) -> Result<()> {
    let rays = rays::subsample(&set.rays, common);
    let answers: Vec<Answers> = built
        .iter()
        .map(|b| {
            let mut closest = vec![None; rays.len()];
            let mut any = vec![false; rays.len()];
            pool.install(|| {
                b.engine.closest_batch(&rays, &mut closest);
                b.engine.any_batch(&rays, &mut any);
            });
            Answers {
                name: b.engine.kind().name().to_string(),
                closest,
                any,
            }
        })
        .collect();
    let report = pool.install(|| agree::compare(mesh, &rays, &answers, max_checked));
    println!("### {} rays: agreement", set.name);
    println!();
    println!(
        "{} rays; {} disputed (answers not unanimous), {} of them settled by the f64 brute force.",
        report.rays, report.disputed, report.checked
    );
    println!();
    println!(
        "| engine | hits | any-hits | hit/miss ≠ {0} | triangle ≠ {0} | any ≠ closest | closest right / grazing / wrong | any right / grazing / wrong |",
        report.engines[0].name
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for e in &report.engines {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} / {} / {} | {} / {} / {} |",
            e.name,
            e.hits,
            e.any_hits,
            e.hit_miss_vs_first,
            e.prim_vs_first,
            e.any_vs_closest,
            e.closest.right,
            e.closest.grazing,
            e.closest.wrong,
            e.any.right,
            e.any.grazing,
            e.any.wrong
        );
    }
    println!();
    if !report.no_errors() {
        eprintln!(
            "warning: some engine gave a wrong answer on the {} set (see the table)",
            set.name
        );
    }
    Ok(())
}

/// The CPU's model name from /proc/cpuinfo, or "unknown CPU".
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// Logical CPUs available to this process.
fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Today's date and time in UTC, `YYYY-MM-DD HH:MM` (civil-from-days, H. Hinnant's algorithm).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}
