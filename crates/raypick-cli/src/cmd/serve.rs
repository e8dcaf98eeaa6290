//! `raypick serve`: interactive picking in the browser.
//!
//! A small stateless HTTP server (axum on tokio) and one embedded page. The page draws the model
//! with three.js (WebGL) at the display's frame rate and picks in the page: it loads the scene's
//! `.rpk` bytes (`/api/scene.rpk`, the scene exactly as the server holds it, BVHs included) into
//! raypick's WebAssembly build and casts there on every click and on hover, with no round trip.
//! The server's own ray-cast frames (headlight, shaded, normal, depth, prim-id, PNG from
//! `/render`) remain a view mode, and `/api/pick` picks on the server.
//!
//! The camera lives in the page: an orbit (`target`, `yaw`, `pitch`, `distance`), a vertical field
//! of view and an image size, sent as query parameters of `/render` and `/api/pick` and handed to
//! the WebAssembly camera in the page. Both turn them into the same camera as
//! `raypick pick --camera EYE,TARGET,0,1,0,FOV --size WxH` (the eye is [`Orbit::eye`]), so a pick in
//! the page can be checked against the CLI and the library, bit for bit.
//!
//! Routes: `/` (the page), `/app.js`, `/style.css`, `/api/scene` (model summary and initial view),
//! `/api/scene.rpk` (the scene file), `/render` (PNG), `/api/pick` (JSON; `/pick` is an alias), and
//! below `/web/` the fixed set of three.js and raypick-wasm files read at start ([`web`]). No
//! route maps a URL to a file path.
//!
//! Bounds, so that one client cannot exhaust the machine: images at most [`MAX_SIZE`]² pixels; at
//! most [`MAX_RENDERS`] renders at a time, each on a blocking thread (`spawn_blocking`), at most
//! [`MAX_QUEUED`] more waiting, each for at most [`QUEUE_WAIT`] (then 503); request bodies at most
//! [`MAX_BODY`] bytes (no route reads one); at most [`conns::MAX_CONNECTIONS`] connections, each
//! closed when its request headers take longer than [`conns::HEADER_TIMEOUT`], the oldest idle one
//! closed to make room for a new one ([`conns`]).
//!
//! Every response carries `X-Content-Type-Options: nosniff`, a Content-Security-Policy that allows
//! only the page's own files and forbids framing (`frame-ancestors 'none'`), and a server bound to
//! loopback answers only requests whose `Host` is its own address or `localhost`, against DNS
//! rebinding ([`guard`]).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use glam::{Vec2, Vec3};
use raypick::camera::orbit::PITCH_LIMIT;
use raypick::camera::{Camera, ClipSpace, Orbit};
use raypick_cli::demo::{NamedScene, DEMO_FRAME};
use raypick_cli::render::{render, Highlight, Image, Mode};
use raypick_cli::view::{
    make_camera, CameraSpec, Framing, DEFAULT_FOV_DEG, DEFAULT_VIEW_DIR, DEMO_VIEW_DIR,
};

use crate::args::LoadArgs;
use crate::cmd::{framing_of, hit_json, load_model, vec3_json};
use tokio::sync::Semaphore;

mod conns;
mod frame;
mod guard;
mod web;

/// Largest image width and height served, pixels (a 2048² RGB frame is 12 MiB in memory).
pub const MAX_SIZE: u32 = 2048;
/// Renders running at once (each already uses every core through the batch query).
pub const MAX_RENDERS: usize = 2;
/// Render requests allowed to wait for a slot; more get 503 at once.
pub const MAX_QUEUED: usize = 8;
/// How long a render request waits for a slot before it gets 503.
pub const QUEUE_WAIT: Duration = Duration::from_secs(5);
/// Largest request body accepted, bytes (every route is a GET with its parameters in the URL).
pub const MAX_BODY: usize = 1024;
/// Largest coordinate of the orbit target and largest orbit distance accepted: beyond 1e7 an f32
/// has a spacing of 1, too coarse for any view.
const MAX_COORD: f32 = 1e7;
/// Range of the vertical field of view accepted, degrees.
const FOV_RANGE: (f32, f32) = (1.0, 170.0);

const INDEX_HTML: &str = include_str!("../../assets/index.html");
const APP_JS: &str = include_str!("../../assets/app.js");
const STYLE_CSS: &str = include_str!("../../assets/style.css");

/// Options of `raypick serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Model file (OBJ, glTF/GLB, PLY, STL, or a `.rpk` scene file); the built-in demo scene when omitted.
    model: Option<PathBuf>,
    /// TCP port (0: any free port; the address is printed on the first line of stdout).
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// Address to bind; loopback unless told otherwise. On loopback only requests for
    /// `localhost` or this address are answered; a wider address answers to any host name.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// Folder of the in-page viewer's files (three.js from npm, the raypick WebAssembly package);
    /// default: `$RAYPICK_WEB`, else the repository's `web/`. Without them the page shows the
    /// server's ray-cast frames only.
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
}

struct AppState {
    model: NamedScene,
    label: String,
    framing: Framing,
    renders: Arc<Semaphore>,
    queued: AtomicUsize,
    /// The scene as a scene file, for the page's WebAssembly build.
    scene_file: Vec<u8>,
    web: web::WebAssets,
}

/// Loads the model and serves it until interrupted.
pub fn run(args: ServeArgs) -> Result<()> {
    let model = load_model(args.model.as_deref(), &args.load)?;
    if model.scene.bounds().is_empty() {
        anyhow::bail!("the scene is empty: nothing to show");
    }
    let label = args.model.as_ref().map_or_else(
        || "built-in demo scene".to_string(),
        |p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        },
    );
    let web = web::WebAssets::load(&web::WebAssets::folder(args.web.as_deref()));
    if !web.complete() {
        eprintln!(
            "raypick serve: the in-page viewer's files are missing (run scripts/build-wasm.sh); \
             serving ray-cast frames only:\n  {}",
            web.missing.join("\n  ")
        );
    }
    let state = Arc::new(AppState {
        scene_file: model.scene.to_bytes(),
        web,
        model,
        label,
        framing: framing_of(args.model.as_deref()),
        renders: Arc::new(Semaphore::new(MAX_RENDERS)),
        queued: AtomicUsize::new(0),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(serve(state, SocketAddr::new(args.host, args.port)))
}

async fn serve(state: Arc<AppState>, addr: SocketAddr) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    // First line of stdout: the address (tests and scripts read it when --port 0).
    println!("raypick serve: listening on http://{local}/");
    if !local.ip().is_loopback() {
        eprintln!("raypick serve: warning: {local} is reachable from other machines");
    }
    use std::io::Write;
    std::io::stdout().flush().ok();
    let app = router(state).layer(axum::middleware::from_fn_with_state(
        Arc::new(guard::HostCheck::for_address(local)),
        guard::guard,
    ));
    conns::serve(listener, app, async {
        tokio::signal::ctrl_c().await.ok();
    })
    .await
    .context("serving")
}

fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        // Browsers ask for an icon whatever the page says; none, without a 404 in the console.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/scene", get(scene_info))
        .route("/api/scene.rpk", get(scene_file))
        .route("/web/{*path}", get(web_file))
        .route("/render", get(render_frame))
        .route("/api/pick", get(pick))
        .route("/pick", get(pick))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(state)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// An error answer: a status and a one-line message.
#[derive(Debug)]
struct ApiError(StatusCode, String);

impl ApiError {
    fn bad(msg: impl Into<String>) -> Self {
        Self(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.0,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("{}\n", self.1),
        )
            .into_response()
    }
}

/// The view the page sends with every request.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ViewParams {
    orbit: Orbit,
    fov_deg: f32,
    width: u32,
    height: u32,
}

/// Query parameters, checked: each known at most once, no unknown ones.
struct Params(Vec<(String, String)>);

impl Params {
    fn new(pairs: Vec<(String, String)>, known: &[&str]) -> Result<Self, ApiError> {
        let mut seen = HashSet::new();
        for (k, _) in &pairs {
            if !known.contains(&k.as_str()) {
                return Err(ApiError::bad(format!(
                    "unknown parameter {k:?} (known: {})",
                    known.join(", ")
                )));
            }
            if !seen.insert(k.as_str()) {
                return Err(ApiError::bad(format!("parameter {k:?} given twice")));
            }
        }
        Ok(Self(pairs))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn f32_in(&self, key: &str, lo: f32, hi: f32) -> Result<f32, ApiError> {
        let s = self
            .get(key)
            .ok_or_else(|| ApiError::bad(format!("missing parameter {key:?}")))?;
        let x: f32 = s
            .trim()
            .parse()
            .map_err(|_| ApiError::bad(format!("{key}={s:?} is not a number")))?;
        if !(x.is_finite() && x >= lo && x <= hi) {
            return Err(ApiError::bad(format!(
                "{key}={s} is out of range [{lo}, {hi}]"
            )));
        }
        Ok(x)
    }

    fn u32_in(&self, key: &str, lo: u32, hi: u32) -> Result<u32, ApiError> {
        let s = self
            .get(key)
            .ok_or_else(|| ApiError::bad(format!("missing parameter {key:?}")))?;
        let x: u32 = s
            .trim()
            .parse()
            .map_err(|_| ApiError::bad(format!("{key}={s:?} is not a whole number")))?;
        if !(lo..=hi).contains(&x) {
            return Err(ApiError::bad(format!(
                "{key}={s} is out of range [{lo}, {hi}]"
            )));
        }
        Ok(x)
    }

    fn view(&self) -> Result<ViewParams, ApiError> {
        let target = Vec3::new(
            self.f32_in("tx", -MAX_COORD, MAX_COORD)?,
            self.f32_in("ty", -MAX_COORD, MAX_COORD)?,
            self.f32_in("tz", -MAX_COORD, MAX_COORD)?,
        );
        // Yaw is an angle: any finite value works, but the page keeps it in [0, 2π); ±1e4 rad is a
        // generous bound that still leaves f32 a resolution of 1e-3 rad.
        let yaw = self.f32_in("yaw", -1e4, 1e4)?;
        let pitch = self.f32_in("pitch", -PITCH_LIMIT, PITCH_LIMIT)?;
        let distance = self.f32_in("dist", f32::MIN_POSITIVE, MAX_COORD)?;
        let fov_deg = match self.get("fov") {
            Some(_) => self.f32_in("fov", FOV_RANGE.0, FOV_RANGE.1)?,
            None => DEFAULT_FOV_DEG,
        };
        Ok(ViewParams {
            orbit: Orbit {
                target,
                yaw,
                pitch,
                distance,
            },
            fov_deg,
            width: self.u32_in("w", 1, MAX_SIZE)?,
            height: self.u32_in("h", 1, MAX_SIZE)?,
        })
    }
}

const VIEW_KEYS: [&str; 9] = ["tx", "ty", "tz", "yaw", "pitch", "dist", "fov", "w", "h"];

impl ViewParams {
    /// The explicit camera this view stands for: what `raypick pick --camera` takes.
    fn spec(&self) -> CameraSpec {
        CameraSpec {
            eye: self.orbit.eye(),
            target: self.orbit.target,
            up: Vec3::Y,
            fov_deg: self.fov_deg,
        }
    }

    fn camera(&self, model: &NamedScene, framing: Framing) -> Result<Camera, ApiError> {
        make_camera(
            &model.scene,
            (self.width, self.height),
            ClipSpace::OpenGl,
            Some(self.spec()),
            framing,
        )
        .map_err(|e| ApiError::bad(format!("{e}")))
    }
}

/// What the viewer draws: its own fast headlight shading, or one of `raypick render`'s modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ViewMode {
    /// [`frame::render_headlight`]: the default, fast enough to drag.
    Headlight,
    /// [`render`] in this mode (the shaded one casts a shadow ray per pixel: slower).
    Render(Mode),
}

const MODES: [&str; 5] = ["headlight", "shaded", "normal", "depth", "prim-id"];

fn parse_mode(s: Option<&str>) -> Result<ViewMode, ApiError> {
    match s.unwrap_or("headlight") {
        "headlight" => Ok(ViewMode::Headlight),
        "shaded" => Ok(ViewMode::Render(Mode::Shaded)),
        "normal" => Ok(ViewMode::Render(Mode::Normal)),
        "depth" => Ok(ViewMode::Render(Mode::Depth)),
        "prim-id" => Ok(ViewMode::Render(Mode::PrimId)),
        other => Err(ApiError::bad(format!(
            "mode={other:?}: expected one of {}",
            MODES.join(", ")
        ))),
    }
}

/// `hl=GEOM,INSTANCE,PRIM` with INSTANCE `-` when not instanced.
fn parse_highlight(s: Option<&str>) -> Result<Option<Highlight>, ApiError> {
    let Some(s) = s else { return Ok(None) };
    let bad = || {
        ApiError::bad(format!(
            "hl={s:?}: expected GEOM,INSTANCE,PRIM (INSTANCE may be -)"
        ))
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [g, i, p] = parts.as_slice() else {
        return Err(bad());
    };
    let geom = g.parse().map_err(|_| bad())?;
    let instance = if *i == "-" {
        None
    } else {
        Some(i.parse().map_err(|_| bad())?)
    };
    let prim = p.parse().map_err(|_| bad())?;
    Ok(Some(Highlight {
        geom,
        instance,
        prim,
    }))
}

/// Encodes an image as PNG, fast: the viewer trades size (on loopback) for latency.
fn encode_png_fast(image: &Image) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::with_capacity(image.rgb.len() / 2);
    {
        let mut enc = png::Encoder::new(&mut out, image.width, image.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.set_filter(png::FilterType::Sub);
        let mut w = enc.write_header()?;
        w.write_image_data(&image.rgb)?;
    }
    Ok(out)
}

/// Waits for one of the [`MAX_RENDERS`] render slots: 503 when [`MAX_QUEUED`] requests already
/// wait, or after [`QUEUE_WAIT`].
async fn render_slot(state: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    let busy = || {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy: too many renders in progress, retry shortly".into(),
        )
    };
    if let Ok(p) = Arc::clone(&state.renders).try_acquire_owned() {
        return Ok(p);
    }
    if state.queued.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED {
        state.queued.fetch_sub(1, Ordering::SeqCst);
        return Err(busy());
    }
    let permit = tokio::time::timeout(QUEUE_WAIT, Arc::clone(&state.renders).acquire_owned()).await;
    state.queued.fetch_sub(1, Ordering::SeqCst);
    match permit {
        Ok(Ok(p)) => Ok(p),
        _ => Err(busy()),
    }
}

async fn render_frame(
    State(state): State<Arc<AppState>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let mut keys = VIEW_KEYS.to_vec();
    keys.extend(["mode", "hl"]);
    let params = Params::new(pairs, &keys)?;
    let view = params.view()?;
    let mode = parse_mode(params.get("mode"))?;
    let highlight = parse_highlight(params.get("hl"))?;
    // Build the camera before queueing, so a degenerate one is a 400 and not a wasted slot.
    let camera = view.camera(&state.model, state.framing)?;
    let permit = render_slot(&state).await?;
    let st = Arc::clone(&state);
    let (png, render_ms, encode_ms) = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let t0 = Instant::now();
        let image = match mode {
            ViewMode::Headlight => frame::render_headlight(&st.model.scene, &camera, highlight),
            ViewMode::Render(mode) => render(&st.model.scene, &camera, mode, highlight, |_| {}).0,
        };
        let t1 = Instant::now();
        let png = encode_png_fast(&image);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        (png, ms(t1 - t0), ms(t1.elapsed()))
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("render: {e}")))?;
    let png = png.map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("png: {e}")))?;
    let timing = format!("render;dur={render_ms:.2}, encode;dur={encode_ms:.2}");
    let mut resp = (
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        png,
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&timing) {
        resp.headers_mut().insert("server-timing", v);
    }
    Ok(resp)
}

async fn pick(
    State(state): State<Arc<AppState>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let mut keys = VIEW_KEYS.to_vec();
    keys.extend(["x", "y"]);
    let params = Params::new(pairs, &keys)?;
    let view = params.view()?;
    let pixel = Vec2::new(
        params.f32_in("x", 0.0, view.width as f32)?,
        params.f32_in("y", 0.0, view.height as f32)?,
    );
    let camera = view.camera(&state.model, state.framing)?;
    // One ray through the BVH: microseconds, so it runs on the async thread.
    let t0 = Instant::now();
    // With the path: under --hierarchy it names the node struck.
    let picked = raypick::camera::pick_path(&state.model.scene, &camera, pixel);
    let us = t0.elapsed().as_secs_f64() * 1e6;
    let spec = view.spec();
    let body = serde_json::json!({
        "pixel": [pixel.x, pixel.y],
        "camera": {
            "eye": vec3_json(spec.eye),
            "target": vec3_json(spec.target),
            "up": vec3_json(spec.up),
            "fov": spec.fov_deg,
            "size": [view.width, view.height],
        },
        "hit": picked.as_ref().map(|(p, path)| hit_json(&state.model, &p.hit, path)),
        "pick_us": us,
    });
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response())
}

/// The orbit that frames the model like `raypick render` without `--camera`, for a square image
/// (the narrower field of view of any wider image is the same).
fn initial_orbit(state: &AppState) -> Orbit {
    let (dir, bounds) = match state.framing {
        Framing::Demo => (DEMO_VIEW_DIR, DEMO_FRAME),
        Framing::Scene => (DEFAULT_VIEW_DIR, state.model.scene.bounds()),
    };
    let mut orbit = Orbit::framing(bounds, DEFAULT_FOV_DEG.to_radians(), 1.0);
    let to_eye = -dir.normalize();
    orbit.yaw = to_eye.x.atan2(to_eye.z).rem_euclid(std::f32::consts::TAU);
    orbit.pitch = to_eye.y.asin().clamp(-PITCH_LIMIT, PITCH_LIMIT);
    orbit
}

/// The scene as a scene file: what the page loads into its WebAssembly build.
async fn scene_file(State(state): State<Arc<AppState>>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        state.scene_file.clone(),
    )
        .into_response()
}

/// One of the viewer's files read at start ([`web::WebAssets`]); 404 for any other path.
async fn web_file(State(state): State<Arc<AppState>>, uri: axum::http::Uri) -> Response {
    match state.web.get(uri.path()) {
        Some((content_type, bytes)) => (
            [
                (header::CONTENT_TYPE, content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes.to_vec(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found\n").into_response(),
    }
}

async fn scene_info(State(state): State<Arc<AppState>>) -> Response {
    let scene = &state.model.scene;
    let b = scene.bounds();
    let o = initial_orbit(&state);
    let body = serde_json::json!({
        "model": state.label,
        "geometries": scene.num_geometries(),
        "triangles": scene.num_triangles(),
        "names": state.model.names,
        "bounds": [vec3_json(b.min), vec3_json(b.max)],
        "view": {
            "target": vec3_json(o.target),
            "yaw": o.yaw,
            "pitch": o.pitch,
            "distance": o.distance,
            "fov": DEFAULT_FOV_DEG,
        },
        "limits": { "max_size": MAX_SIZE, "pitch": PITCH_LIMIT },
        "modes": MODES,
        "webgl": { "ready": state.web.complete(), "missing": state.web.missing },
    });
    axum::Json(body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &[(&str, &str)]) -> Result<Params, ApiError> {
        let mut keys = VIEW_KEYS.to_vec();
        keys.extend(["mode", "hl", "x", "y"]);
        Params::new(
            q.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            &keys,
        )
    }

    const GOOD: [(&str, &str); 8] = [
        ("tx", "0"),
        ("ty", "1"),
        ("tz", "-2"),
        ("yaw", "0.5"),
        ("pitch", "0.3"),
        ("dist", "7"),
        ("w", "64"),
        ("h", "48"),
    ];

    #[test]
    fn view_parameters_parse_and_check_ranges() {
        let v = params(&GOOD).unwrap().view().unwrap();
        assert_eq!(v.orbit.target, Vec3::new(0.0, 1.0, -2.0));
        assert_eq!((v.width, v.height, v.fov_deg), (64, 48, DEFAULT_FOV_DEG));
        let spec = v.spec();
        assert!(((spec.eye - spec.target).length() - 7.0).abs() < 1e-5);
        for (k, bad) in [
            ("w", "0"),
            ("w", "2049"),
            ("h", "-3"),
            ("dist", "0"),
            ("dist", "nan"),
            ("pitch", "1.5708"),
            ("tx", "inf"),
            ("yaw", "x"),
        ] {
            let q: Vec<_> = GOOD
                .iter()
                .map(|&(k2, v2)| if k2 == k { (k2, bad) } else { (k2, v2) })
                .collect();
            let e = params(&q).unwrap().view().unwrap_err();
            assert_eq!(e.0, StatusCode::BAD_REQUEST, "{k}={bad}");
            assert!(e.1.contains(k), "{k}={bad}: {}", e.1);
        }
        assert!(params(&[("zz", "1")]).is_err());
        assert!(params(&[("w", "1"), ("w", "2")]).is_err());
        let mut missing = GOOD.to_vec();
        missing.pop();
        assert!(params(&missing).unwrap().view().is_err());
    }

    #[test]
    fn highlight_and_mode_parse() {
        assert_eq!(parse_highlight(None).unwrap(), None);
        assert_eq!(
            parse_highlight(Some("3,-,17")).unwrap(),
            Some(Highlight {
                geom: 3,
                instance: None,
                prim: 17
            })
        );
        assert_eq!(
            parse_highlight(Some("0,5,2")).unwrap().unwrap().instance,
            Some(5)
        );
        for bad in ["", "1,2", "1,2,3,4", "a,-,1", "1,-,-1"] {
            assert!(parse_highlight(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(parse_mode(None).unwrap(), ViewMode::Headlight);
        assert_eq!(
            parse_mode(Some("prim-id")).unwrap(),
            ViewMode::Render(Mode::PrimId)
        );
        assert!(parse_mode(Some("../etc")).is_err());
    }

    #[test]
    fn fast_png_decodes_to_the_same_pixels() {
        let mut img = Image::new(37, 11);
        for (i, b) in img.rgb.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        let back = Image::from_png(&encode_png_fast(&img).unwrap()).unwrap();
        assert_eq!(back, img);
    }
}
