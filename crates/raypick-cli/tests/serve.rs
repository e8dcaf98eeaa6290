//! `raypick serve` through the binary: routes, 400s for bad parameters, picks equal to the library's
//! for the same camera, frames equal to the library's render, and no file served from a URL path.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use glam::{Vec2, Vec3};
use raypick::camera::{ClipSpace, Orbit};
use raypick_cli::demo::{demo_scene, NamedScene};
use raypick_cli::render::{render, Highlight, Image, Mode};
use raypick_cli::view::{make_camera, CameraSpec, Framing};

const BUNNY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/obj/stanford-bunny.obj"
);

/// A `raypick serve --port 0` child, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(model: Option<&str>) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_raypick"));
        cmd.arg("serve");
        if let Some(m) = model {
            cmd.arg(m);
        }
        let mut child = cmd
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn raypick serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the address line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.trim().strip_suffix('/'))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Self { child, addr }
    }

    /// Sends `method path` verbatim (no normalisation of the path) and returns (status, headers, body).
    fn request(&self, method: &str, path: &str) -> (u16, String, Vec<u8>) {
        self.raw(&format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        ))
    }

    /// Sends `text` as it is and returns (status, lower-cased headers, body) of the answer.
    fn raw(&self, text: &str) -> (u16, String, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        s.write_all(text.as_bytes()).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..split]).to_string();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line in {head:?}"));
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = dechunk(&body);
        }
        (status, head.to_ascii_lowercase(), body)
    }

    fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        self.request("GET", path)
    }

    fn json(&self, path: &str) -> serde_json::Value {
        let (status, _, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[eol + 2 + n + 2..];
    }
}

/// A view as the page sends it.
#[derive(Clone, Copy)]
struct View {
    orbit: Orbit,
    fov: f32,
    size: (u32, u32),
}

impl View {
    fn query(&self) -> String {
        let o = &self.orbit;
        format!(
            "tx={}&ty={}&tz={}&yaw={}&pitch={}&dist={}&fov={}&w={}&h={}",
            o.target.x,
            o.target.y,
            o.target.z,
            o.yaw,
            o.pitch,
            o.distance,
            self.fov,
            self.size.0,
            self.size.1
        )
    }

    /// The camera the server must build: `raypick pick --camera EYE,TARGET,0,1,0,FOV`.
    fn camera(&self, model: &NamedScene, framing: Framing) -> raypick::camera::Camera {
        let spec = CameraSpec {
            eye: self.orbit.eye(),
            target: self.orbit.target,
            up: Vec3::Y,
            fov_deg: self.fov,
        };
        make_camera(
            &model.scene,
            self.size,
            ClipSpace::OpenGl,
            Some(spec),
            framing,
        )
        .unwrap()
    }
}

fn view_from_scene_info(info: &serde_json::Value, size: (u32, u32)) -> View {
    let v = &info["view"];
    let f = |x: &serde_json::Value| x.as_f64().unwrap() as f32;
    View {
        orbit: Orbit {
            target: Vec3::new(f(&v["target"][0]), f(&v["target"][1]), f(&v["target"][2])),
            yaw: f(&v["yaw"]),
            pitch: f(&v["pitch"]),
            distance: f(&v["distance"]),
        },
        fov: f(&v["fov"]),
        size,
    }
}

fn f32_of(v: &serde_json::Value) -> f32 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) as f32
}

/// Checks `/api/pick` against `raypick::camera::pick` at `pixels`; returns how many hit.
fn assert_picks_match(
    server: &Server,
    model: &NamedScene,
    framing: Framing,
    view: View,
    pixels: &[Vec2],
) -> usize {
    let camera = view.camera(model, framing);
    let mut hits = 0;
    for &px in pixels {
        let r = server.json(&format!("/api/pick?{}&x={}&y={}", view.query(), px.x, px.y));
        let eye = view.orbit.eye();
        let cam = &r["camera"];
        assert_eq!(
            Vec3::new(
                f32_of(&cam["eye"][0]),
                f32_of(&cam["eye"][1]),
                f32_of(&cam["eye"][2])
            ),
            eye
        );
        let expected = raypick::camera::pick_path(&model.scene, &camera, px);
        match (&expected, r["hit"].is_null()) {
            (None, true) => {}
            (Some((p, path)), false) => {
                hits += 1;
                let h = &r["hit"];
                assert_eq!(h["triangle"].as_u64(), Some(p.hit.prim as u64), "{px}");
                assert_eq!(h["geometry"].as_u64(), Some(p.hit.geom as u64), "{px}");
                assert_eq!(
                    h["instance"].as_u64(),
                    p.hit.instance.map(u64::from),
                    "{px}"
                );
                assert_eq!(h["object"].as_str(), Some(model.name_of(&p.hit, path)));
                assert_eq!(f32_of(&h["t"]), p.hit.t);
                assert_eq!(f32_of(&h["u"]), p.hit.u);
                assert_eq!(f32_of(&h["v"]), p.hit.v);
                for k in 0..3 {
                    assert_eq!(f32_of(&h["point"][k]), p.hit.point[k]);
                    assert_eq!(f32_of(&h["normal"][k]), p.hit.normal[k]);
                }
            }
            (e, _) => panic!("pixel {px}: library {e:?}, server {}", r["hit"]),
        }
    }
    hits
}

fn grid(w: u32, h: u32, n: u32) -> Vec<Vec2> {
    (0..n)
        .flat_map(|j| (0..n).map(move |i| (i, j)))
        .map(|(i, j)| {
            Vec2::new(
                ((i * 2 + 1) * w / (2 * n)) as f32 + 0.5,
                ((j * 2 + 1) * h / (2 * n)) as f32 + 0.5,
            )
        })
        .collect()
}

#[test]
fn routes_serve_the_page_and_scene_info_on_loopback() {
    let s = Server::start(None);
    assert!(s.addr.starts_with("127.0.0.1:"), "{}", s.addr);
    let (status, head, body) = s.get("/");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"));
    let html = String::from_utf8(body).unwrap();
    assert!(html.contains("<canvas id=\"view\"") && html.contains("/app.js"));
    for (path, ty) in [("/app.js", "text/javascript"), ("/style.css", "text/css")] {
        let (status, head, body) = s.get(path);
        assert_eq!(status, 200, "{path}");
        assert!(head.contains(ty), "{path}: {head}");
        assert!(!body.is_empty());
    }
    let info = s.json("/api/scene");
    let model = demo_scene().unwrap();
    assert_eq!(info["names"].as_array().unwrap().len(), model.names.len());
    assert_eq!(
        info["triangles"].as_u64(),
        Some(model.scene.num_triangles() as u64)
    );
    assert_eq!(s.get("/nope").0, 404);
    assert_eq!(s.get("/api/nope").0, 404);
    // Only GET: a POST with a body is refused.
    assert_eq!(s.request("POST", "/render").0, 405);
}

#[test]
fn bad_parameters_get_400_with_a_message() {
    let s = Server::start(None);
    let ok = "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&fov=45&w=64&h=48";
    assert_eq!(s.get(&format!("/render?{ok}")).0, 200);
    assert_eq!(s.get(&format!("/api/pick?{ok}&x=3&y=4")).0, 200);
    let cases = [
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&w=64",
            "\"h\"",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&w=4096&h=48",
            "w=4096",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&w=0&h=48",
            "w=0",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=-1&w=64&h=48",
            "dist",
        ),
        (
            "/render",
            "tx=abc&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=1&w=64&h=48",
            "tx",
        ),
        (
            "/render",
            "tx=NaN&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=1&w=64&h=48",
            "tx",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0.3&pitch=2&dist=1&w=64&h=48",
            "pitch",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=inf&pitch=0&dist=1&w=64&h=48",
            "yaw",
        ),
        (
            "/render",
            "tx=0&ty=1&tz=0&yaw=0&pitch=0&dist=1&fov=180&w=64&h=48",
            "fov",
        ),
        ("/render", &format!("{ok}&mode=wireframe"), "mode"),
        ("/render", &format!("{ok}&hl=1,2"), "hl"),
        ("/render", &format!("{ok}&file=/etc/passwd"), "file"),
        ("/render", &format!("{ok}&w=32"), "twice"),
        ("/api/pick", ok, "\"x\""),
        ("/api/pick", &format!("{ok}&x=65&y=4"), "x=65"),
        ("/api/pick", &format!("{ok}&x=3&y=-1"), "y=-1"),
        ("/api/pick", &format!("{ok}&x=3&y=4&mode=shaded"), "mode"),
    ];
    for (route, q, needle) in cases {
        let (status, _, body) = s.get(&format!("{route}?{q}"));
        let msg = String::from_utf8_lossy(&body);
        assert_eq!(status, 400, "{route}?{q}: {msg}");
        assert!(msg.contains(needle), "{route}?{q}: {msg:?} lacks {needle}");
    }
    // A query that is not valid percent-encoding is refused too.
    assert_eq!(s.get("/render?tx=%ZZ").0, 400);
}

#[test]
fn demo_picks_and_frames_equal_the_library() {
    let s = Server::start(None);
    let model = demo_scene().unwrap();
    let view = view_from_scene_info(&s.json("/api/scene"), (160, 120));
    let hits = assert_picks_match(&s, &model, Framing::Demo, view, &grid(160, 120, 9));
    assert!(hits >= 30, "{hits} hits");
    // A turned, panned view that shows instances.
    let mut turned = view;
    turned.orbit.rotate(2.2, -0.2);
    turned.orbit.target += Vec3::new(0.5, 0.0, -1.0);
    turned.orbit.zoom(0.7);
    assert_picks_match(&s, &model, Framing::Demo, turned, &grid(160, 120, 9));

    // The frame is the library's render of the same camera, highlight included.
    let camera = view.camera(&model, Framing::Demo);
    let px = Vec2::new(80.5, 60.5);
    let picked = raypick::camera::pick(&model.scene, &camera, px).expect("the centre hits");
    let hl = Highlight::of(&picked.hit);
    let hl_param = format!(
        "{},{},{}",
        hl.geom,
        hl.instance.map_or("-".to_string(), |i| i.to_string()),
        hl.prim
    );
    let (status, head, png) = s.get(&format!(
        "/render?{}&hl={hl_param}&mode=shaded",
        view.query()
    ));
    assert_eq!(status, 200);
    assert!(head.contains("content-type: image/png") && head.contains("server-timing"));
    let served = Image::from_png(&png).unwrap();
    let (expected, _) = render(&model.scene, &camera, Mode::Shaded, Some(hl), |_| {});
    assert_eq!(served, expected);
    assert_eq!(served.get(80, 60), [255, 20, 20]);
    // Other modes are the library's too.
    let (_, _, png) = s.get(&format!("/render?{}&mode=prim-id", turned.query()));
    let (expected, _) = render(
        &model.scene,
        &turned.camera(&model, Framing::Demo),
        Mode::PrimId,
        None,
        |_| {},
    );
    assert_eq!(Image::from_png(&png).unwrap(), expected);
}

#[test]
fn bunny_picks_equal_the_library() {
    let s = Server::start(Some(BUNNY));
    let loaded = raypick_io::load(std::path::Path::new(BUNNY)).unwrap();
    let model = NamedScene {
        scene: loaded.scene,
        names: loaded.geometry_names,
        files: Vec::new(),
        nodes: loaded.nodes,
    };
    let view = view_from_scene_info(&s.json("/api/scene"), (640, 480));
    let hits = assert_picks_match(&s, &model, Framing::Scene, view, &grid(640, 480, 12));
    assert!(hits >= 20, "{hits} hits");
}

#[test]
fn no_path_serves_a_file() {
    let s = Server::start(None);
    let paths = [
        "/../Cargo.toml",
        "/../../Cargo.toml",
        "/..%2f..%2fCargo.toml",
        "/%2e%2e/%2e%2e/Cargo.toml",
        "/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/assets/../../../Cargo.toml",
        "/app.js/../../Cargo.toml",
        "/src/main.rs",
        "/assets/index.html",
        "/Cargo.toml",
        "//etc/passwd",
        "/..%5c..%5cCargo.toml",
        "/etc/passwd",
        "/render/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    ];
    for p in paths {
        let (status, _, body) = s.get(p);
        let text = String::from_utf8_lossy(&body);
        assert!(
            status == 404 || status == 400,
            "{p}: status {status}: {text}"
        );
        assert!(
            !text.contains("[package]") && !text.contains("root:") && !text.contains("fn main"),
            "{p} leaked a file: {text}"
        );
    }
}

#[test]
fn concurrent_renders_are_bounded_with_503() {
    let s = std::sync::Arc::new(Server::start(None));
    // 12 large frames at once: 2 render, 8 may wait (for at most 5 s), the rest get 503 at once.
    let q = "/render?tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&w=2048&h=2048&mode=normal";
    let answers: Vec<(u16, Vec<u8>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|_| {
                let s = std::sync::Arc::clone(&s);
                scope.spawn(move || {
                    let (status, _, body) = s.get(q);
                    (status, body)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok = answers.iter().filter(|(st, _)| *st == 200).count();
    let busy: Vec<_> = answers.iter().filter(|(st, _)| *st == 503).collect();
    assert_eq!(ok + busy.len(), answers.len());
    assert!(ok >= 2, "{ok} served");
    assert!(busy.len() >= 2, "{} refused", busy.len());
    assert!(String::from_utf8_lossy(&busy[0].1).contains("busy"));
    // The server still answers afterwards.
    assert_eq!(s.get("/api/scene").0, 200);
}

/// The headlight frame, rebuilt pixel by pixel from library picks through each pixel centre:
/// sky rows `lerp(top, bottom, y/h)`, objects `id_color(object) · (0.25 + 0.75·|n·d|)`, the picked
/// triangle in the highlight colour.
fn headlight_reference(
    model: &NamedScene,
    camera: &raypick::camera::Camera,
    hl: Option<Highlight>,
) -> Image {
    let vp = camera.viewport();
    let (w, h) = (vp.width as u32, vp.height as u32);
    let mut img = Image::new(w, h);
    let (top, bottom) = (
        Vec3::new(194.0, 213.0, 237.0),
        Vec3::new(245.0, 247.0, 250.0),
    );
    for y in 0..h {
        for x in 0..w {
            let px = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let c = match raypick::camera::pick(&model.scene, camera, px) {
                None => {
                    let s = top.lerp(bottom, y as f32 / h as f32);
                    [s.x as u8, s.y as u8, s.z as u8]
                }
                Some(p) if hl == Some(Highlight::of(&p.hit)) => [255, 20, 20],
                Some(p) => {
                    let key =
                        (p.hit.instance.map_or(0, |i| i as u64 + 1) << 32) | p.hit.geom as u64;
                    let k = 0.25 + 0.75 * p.hit.normal.normalize().dot(p.ray.dir).abs();
                    raypick_cli::render::id_color(key).map(|c| (c as f32 * k + 0.5) as u8)
                }
            };
            img.set(x as i64, y as i64, c);
        }
    }
    img
}

#[test]
fn headlight_frames_are_the_picks_shaded() {
    let s = Server::start(None);
    let model = demo_scene().unwrap();
    let mut view = view_from_scene_info(&s.json("/api/scene"), (96, 72));
    view.orbit.rotate(1.3, 0.1);
    let camera = view.camera(&model, Framing::Demo);
    let picked = raypick::camera::pick(&model.scene, &camera, Vec2::new(48.5, 36.5)).unwrap();
    let hl = Highlight::of(&picked.hit);
    let hl_param = format!(
        "{},{},{}",
        hl.geom,
        hl.instance.map_or("-".to_string(), |i| i.to_string()),
        hl.prim
    );
    // The default mode is headlight.
    let (status, _, png) = s.get(&format!("/render?{}&hl={hl_param}", view.query()));
    assert_eq!(status, 200);
    let served = Image::from_png(&png).unwrap();
    assert_eq!(served, headlight_reference(&model, &camera, Some(hl)));
    assert_eq!(served.get(48, 36), [255, 20, 20]);
    let (_, _, png) = s.get(&format!("/render?{}&mode=headlight", view.query()));
    assert_eq!(
        Image::from_png(&png).unwrap(),
        headlight_reference(&model, &camera, None)
    );
    // From inside the scene's bounding box (no screen rectangle bounds the rays), and from afar
    // (most pixels outside it).
    for (target, distance) in [(Vec3::new(1.0, 1.0, 1.0), 1.5), (Vec3::ZERO, 80.0)] {
        let mut v = view;
        v.orbit.target = target;
        v.orbit.distance = distance;
        let (_, _, png) = s.get(&format!("/render?{}", v.query()));
        assert_eq!(
            Image::from_png(&png).unwrap(),
            headlight_reference(&model, &v.camera(&model, Framing::Demo), None),
            "target {target}, distance {distance}"
        );
    }
}

/// Every response, refusals and 404s included, forbids sniffing and framing and carries the page's
/// Content-Security-Policy; a server on loopback answers only to its own address and `localhost`.
#[test]
fn hosts_are_checked_and_every_response_is_guarded() {
    let s = Server::start(None);
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let get = |host: &str, path: &str| {
        s.raw(&format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        ))
    };
    let view = "tx=0&ty=1&tz=0&yaw=0.3&pitch=0.4&dist=12&w=32&h=24";
    let mut answers = vec![
        s.get("/"),
        s.get("/app.js"),
        s.get("/api/scene"),
        s.get(&format!("/render?{view}")),
        s.get(&format!("/api/pick?{view}&x=3&y=4")),
        s.get("/nope"),
        get(&format!("localhost:{port}"), "/api/scene"),
    ];
    for answer in &answers {
        assert!(answer.0 == 200 || answer.0 == 404, "{}", answer.1);
    }
    // DNS rebinding: another site's name pointed at 127.0.0.1.
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        "localhost:1".to_string(),
    ] {
        let answer = get(&host, "/api/scene");
        assert_eq!(answer.0, 421, "{host}: {}", answer.1);
        assert!(
            String::from_utf8_lossy(&answer.2).contains("--host"),
            "{host}"
        );
        answers.push(answer);
    }
    // HTTP/1.0 without a Host header.
    let answer = s.raw("GET /api/scene HTTP/1.0\r\n\r\n");
    assert_eq!(answer.0, 400, "{}", answer.1);
    answers.push(answer);
    for (status, head, _) in &answers {
        for header in [
            "x-content-type-options: nosniff",
            "frame-ancestors 'none'",
            "content-security-policy: default-src 'none'; script-src 'self'",
            "x-frame-options: deny",
        ] {
            assert!(head.contains(header), "{status}: no {header} in {head}");
        }
    }
    // The page needs nothing the policy forbids: no inline script or style, no other origin.
    let html = String::from_utf8(s.get("/").2).unwrap();
    assert!(!html.contains("<script>") && !html.contains("style=") && !html.contains("<style"));
    assert!(!html.contains("http:") && !html.contains("https:"));
}

/// Idle sockets, and sockets that send half a request, neither lock the server nor stay open:
/// past the connection limit the oldest idle connection makes room for the new one, and an idle
/// connection is closed after the header timeout. Loopback only; a few hundred sockets.
#[test]
fn idle_sockets_neither_lock_the_server_nor_stay_open() {
    const LIMIT: usize = 256; // raypick serve's MAX_CONNECTIONS
    const HEADER_TIMEOUT: Duration = Duration::from_secs(10); // and its HEADER_TIMEOUT
    let s = Server::start(None);
    let mut idle: Vec<TcpStream> = Vec::new();
    for i in 0..LIMIT + 44 {
        let mut socket = TcpStream::connect(&s.addr).unwrap();
        if i % 2 == 1 {
            // Half a request line, as a slow client sends it, then nothing.
            socket.write_all(b"GET /api/scene HTTP/1.1\r\nHo").unwrap();
        }
        idle.push(socket);
    }
    // Still answers, at once.
    let start = std::time::Instant::now();
    let info = s.json("/api/scene");
    assert!(info["triangles"].as_u64().unwrap() > 0);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    // A request that announces a body and never sends it is answered all the same.
    let answer = s.raw(&format!(
        "GET /api/scene HTTP/1.1\r\nHost: {}\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n",
        s.addr
    ));
    assert_eq!(answer.0, 200);
    // The oldest idle sockets were closed to make room: each reads end of file (or a reset).
    let closed = |socket: &mut TcpStream, wait: Duration| {
        socket.set_read_timeout(Some(wait)).unwrap();
        let mut byte = [0u8; 1];
        match socket.read(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    };
    assert!(closed(&mut idle[0], Duration::from_secs(5)), "not evicted");
    // And an idle socket that nothing evicts is closed after the header timeout, not before.
    let mut lone = TcpStream::connect(&s.addr).unwrap();
    let start = std::time::Instant::now();
    assert!(closed(&mut lone, HEADER_TIMEOUT + Duration::from_secs(10)));
    let waited = start.elapsed();
    assert!(
        waited >= HEADER_TIMEOUT - Duration::from_secs(1),
        "closed after {waited:?}"
    );
    drop(idle);
    assert_eq!(s.get("/api/scene").0, 200);
}
