//! The exported functions: the whole ABI in one table, each a one-line call into the safe
//! modules of the crate (see the [crate docs](crate) for the conventions).
//!
//! Exporting a function under a fixed symbol name takes `#[no_mangle]`, which the `unsafe_code`
//! lint counts as unsafe (two crates exporting one name would clash at link time). It is the only
//! reason for the `allow(unsafe_code)` the [`exports!`] macro puts on each shim; the crate denies
//! `unsafe_code` everywhere else, and no shim holds an `unsafe` block.

use glam::Vec3;

use crate::{buffers, builder, camera, error, out, point, query, registry, summary};

/// The ABI's version: `web/raypick/index.js` refuses a module with another one. Bumped whenever
/// an export's signature or meaning, or a record layout, changes.
pub const ABI_VERSION: u32 = 2;

/// Declares exported shims: `fn name(args) -> ret => body;`, documented.
macro_rules! exports {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $body:expr;
    )*) => {$(
        $(#[doc = $doc])*
        // `no_mangle` only (see the module docs); the body is a call into safe code.
        #[allow(unsafe_code, clippy::too_many_arguments)]
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) -> $ret {
            $body
        }
    )*};
}

exports! {
    /// [`ABI_VERSION`].
    fn rp_abi_version() -> u32 => ABI_VERSION;
    /// The last error's kind ([`error::kind`]); 0 before any error.
    fn rp_last_error_kind() -> u32 => error::last_kind();
    /// The address of the last error's message (UTF-8).
    fn rp_last_error_ptr() -> *const u8 => error::last_text(false).0;
    /// The byte length of the last error's message.
    fn rp_last_error_len() -> u32 => error::last_text(false).1;
    /// The address of the name of the argument the last error is about (UTF-8, may be empty).
    fn rp_last_error_field_ptr() -> *const u8 => error::last_text(true).0;
    /// The byte length of that name.
    fn rp_last_error_field_len() -> u32 => error::last_text(true).1;
    /// The address of the out area's f32 values ([`out`]).
    fn rp_out_f32_ptr() -> *const f32 => out::f32_ptr();
    /// The address of the out area's u32 values.
    fn rp_out_u32_ptr() -> *const u32 => out::u32_ptr();
    /// Objects of every kind not freed yet (leak checks).
    fn rp_live_objects() -> u32 => registry::with_state(|s| s.live() as u32);

    /// A new f32 buffer of `n` zeros; its handle (0: no memory).
    fn rp_f32_alloc(n: u32) -> u32 => buffers::alloc::<f32>(n);
    /// The address of f32 buffer `h` (null for a bad handle).
    fn rp_f32_ptr(h: u32) -> *mut f32 => buffers::ptr::<f32>(h);
    /// The length of f32 buffer `h`.
    fn rp_f32_len(h: u32) -> i32 => buffers::len::<f32>(h);
    /// Frees f32 buffer `h`.
    fn rp_f32_free(h: u32) -> i32 => buffers::free::<f32>(h);
    /// A new u32 buffer of `n` zeros.
    fn rp_u32_alloc(n: u32) -> u32 => buffers::alloc::<u32>(n);
    /// The address of u32 buffer `h`.
    fn rp_u32_ptr(h: u32) -> *mut u32 => buffers::ptr::<u32>(h);
    /// The length of u32 buffer `h`.
    fn rp_u32_len(h: u32) -> i32 => buffers::len::<u32>(h);
    /// Frees u32 buffer `h`.
    fn rp_u32_free(h: u32) -> i32 => buffers::free::<u32>(h);
    /// A new byte buffer of `n` zeros.
    fn rp_u8_alloc(n: u32) -> u32 => buffers::alloc::<u8>(n);
    /// The address of byte buffer `h`.
    fn rp_u8_ptr(h: u32) -> *mut u8 => buffers::ptr::<u8>(h);
    /// The length of byte buffer `h`.
    fn rp_u8_len(h: u32) -> i32 => buffers::len::<u8>(h);
    /// Frees byte buffer `h`.
    fn rp_u8_free(h: u32) -> i32 => buffers::free::<u8>(h);

    /// A new scene builder whose BVHs are built with `quality` (0 fast, 1 balanced, 2 high, 3 spatial;
    /// [`builder::quality_config`]).
    fn rp_builder_new(quality: u32) -> u32 => builder::builder_new(quality);
    /// Frees a builder that will not be built.
    fn rp_builder_free(b: u32) -> i32 => builder::builder_free(b);
    /// Adds a mesh: f32 `positions` (x, y, z per vertex), u32 `indices` (three per triangle; 0:
    /// none, consecutive vertex triples), `mask`, UTF-8 `name` (0: none). Its geometry id.
    fn rp_builder_add_mesh(b: u32, positions: u32, indices: u32, mask: u32, name: u32) -> i32
        => builder::add_mesh(b, positions, indices, mask, name);
    /// Adds a sphere set: f32 `centers` (x, y, z each), f32 `radii`. Its geometry id.
    fn rp_builder_add_spheres(b: u32, centers: u32, radii: u32, mask: u32, name: u32) -> i32
        => builder::add_spheres(b, centers, radii, mask, name);
    /// Places built scene `scene` with f32 `world_from_object` (16, column-major, affine). Its
    /// geometry id.
    fn rp_builder_add_instance(b: u32, scene: u32, world_from_object: u32, mask: u32, name: u32) -> i32
        => builder::add_instance(b, scene, world_from_object, mask, name);
    /// Builds the scene (the builder is used up either way); its handle.
    fn rp_builder_build(b: u32) -> u32 => builder::build(b);

    /// Frees a scene (instances placing it keep it alive).
    fn rp_scene_free(scene: u32) -> i32 => builder::scene_free(scene);
    /// A scene read from a scene file (`.rpk`) in byte buffer `bytes`.
    fn rp_scene_from_bytes(bytes: u32) -> u32 => builder::from_bytes(bytes);
    /// A new byte buffer holding the scene as a scene file.
    fn rp_scene_to_bytes(scene: u32) -> u32 => builder::to_bytes(scene);
    /// New vertices (f32 `positions`, same count) for mesh `geom`; the BVHs refitted.
    fn rp_scene_update_mesh(scene: u32, geom: u32, positions: u32) -> i32
        => builder::update_mesh(scene, geom, positions);
    /// A new byte buffer holding the scene's summary (JSON, [`summary::summary_json`]).
    fn rp_scene_summary(scene: u32) -> u32 => summary::summary(scene);
    /// A new byte buffer holding the scene's render list (JSON, [`summary`]).
    fn rp_scene_draws(scene: u32) -> u32 => summary::draws(scene);
    /// A new f32 buffer with distinct mesh `k`'s vertices.
    fn rp_scene_mesh_positions(scene: u32, k: u32) -> u32 => summary::mesh_positions(scene, k);
    /// A new u32 buffer with distinct mesh `k`'s triangles.
    fn rp_scene_mesh_indices(scene: u32, k: u32) -> u32 => summary::mesh_indices(scene, k);
    /// A new f32 buffer with distinct sphere set `k` (x, y, z, radius each).
    fn rp_scene_sphere_data(scene: u32, k: u32) -> u32 => summary::sphere_data(scene, k);

    /// The closest hit: 1 and a hit record in the out area, or 0.
    fn rp_scene_intersect(
        scene: u32, ox: f32, oy: f32, oz: f32, dx: f32, dy: f32, dz: f32,
        t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
    ) -> i32 => query::intersect(
        scene, Vec3::new(ox, oy, oz), Vec3::new(dx, dy, dz), (t_min, t_max, mask, cull, ranges),
    );
    /// Any hit: 1 or 0.
    fn rp_scene_occluded(
        scene: u32, ox: f32, oy: f32, oz: f32, dx: f32, dy: f32, dz: f32,
        t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
    ) -> i32 => query::occluded(
        scene, Vec3::new(ox, oy, oz), Vec3::new(dx, dy, dz), (t_min, t_max, mask, cull, ranges),
    );
    /// Every hit, sorted by `t`: their number, the records in the out area.
    fn rp_scene_intersect_all(
        scene: u32, ox: f32, oy: f32, oz: f32, dx: f32, dy: f32, dz: f32,
        t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
    ) -> i32 => query::intersect_all(
        scene, Vec3::new(ox, oy, oz), Vec3::new(dx, dy, dz), (t_min, t_max, mask, cull, ranges),
    );
    /// Every hit with closed edges (three.js's rule), sorted by `t`: their number, the records.
    fn rp_scene_intersect_all_closed(
        scene: u32, ox: f32, oy: f32, oz: f32, dx: f32, dy: f32, dz: f32,
        t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
    ) -> i32 => query::intersect_all_closed(
        scene, Vec3::new(ox, oy, oz), Vec3::new(dx, dy, dz), (t_min, t_max, mask, cull, ranges),
    );
    /// The number of crossings.
    fn rp_scene_count(
        scene: u32, ox: f32, oy: f32, oz: f32, dx: f32, dy: f32, dz: f32,
        t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
    ) -> i32 => query::count_hits(
        scene, Vec3::new(ox, oy, oz), Vec3::new(dx, dy, dz), (t_min, t_max, mask, cull, ranges),
    );
    /// The closest hits of f32 `rays` (six per ray) into columns: f32 `out_f32` (`t`, `u`, `v`),
    /// u32 `out_u32` (`geom`, `prim`, `instance`). The number of hits.
    fn rp_scene_cast(
        scene: u32, rays: u32, t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
        out_f32: u32, out_u32: u32,
    ) -> i32 => query::cast(scene, rays, (t_min, t_max, mask, cull, ranges), out_f32, out_u32);
    /// Every hit of every ray (f32 `rays`, six per ray; `edges` 0 half-open, 1 closed) into the
    /// out area as columns: u32 `offsets` (n + 1), `geom`, `prim`, `instance`; f32 `t`, `u`,
    /// `v`. The number of hits ([`query::intersect_all_rays`]).
    fn rp_scene_intersect_all_rays(
        scene: u32, rays: u32, t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
        edges: u32,
    ) -> i32 => query::intersect_all_rays(scene, rays, (t_min, t_max, mask, cull, ranges), edges);
    /// Any hit of every ray into byte buffer `out` (1 or 0 each). The number occluded.
    fn rp_scene_occluded_rays(
        scene: u32, rays: u32, t_min: f32, t_max: f32, mask: u32, cull: u32, ranges: u32,
        out: u32,
    ) -> i32 => query::occluded_rays(scene, rays, (t_min, t_max, mask, cull, ranges), out);

    /// The closest point within `max_distance`: 1 and a closest-point record, or 0.
    fn rp_scene_closest_point(scene: u32, x: f32, y: f32, z: f32, max_distance: f32) -> i32
        => point::closest_point(scene, Vec3::new(x, y, z), max_distance);
    /// The distance to the surface, in the out area.
    fn rp_scene_distance(scene: u32, x: f32, y: f32, z: f32) -> i32
        => point::distance(scene, Vec3::new(x, y, z));
    /// Inside (1) or outside (0), by `method` (0 parity, 1 winding number).
    fn rp_scene_contains(scene: u32, x: f32, y: f32, z: f32, method: u32) -> i32
        => point::contains(scene, Vec3::new(x, y, z), method);
    /// The signed distance (negative inside), in the out area.
    fn rp_scene_signed_distance(scene: u32, x: f32, y: f32, z: f32, method: u32) -> i32
        => point::signed_distance(scene, Vec3::new(x, y, z), method);
    /// The signed distances of f32 `points` (three per point) into f32 buffer `out`.
    fn rp_scene_signed_distances(scene: u32, points: u32, method: u32, out: u32) -> i32
        => point::signed_distances(scene, points, method, out);

    /// A look-at camera, perspective or orthographic.
    fn rp_camera_look_at(
        ex: f32, ey: f32, ez: f32, tx: f32, ty: f32, tz: f32, ux: f32, uy: f32, uz: f32,
        fov_y_deg: f32, near: f32, far: f32, projection: u32, ortho_height: f32, reverse_z: u32,
        width: u32, height: u32, clip: u32, pixel_origin: u32,
    ) -> u32 => camera::look_at(
        camera::LookAt {
            eye: Vec3::new(ex, ey, ez),
            target: Vec3::new(tx, ty, tz),
            up: Vec3::new(ux, uy, uz),
            fov_y_deg, near, far, projection, ortho_height,
            reverse_z: reverse_z != 0,
        },
        width, height, clip, pixel_origin,
    );
    /// A camera from f32 `view` (`view_from_world`) and `proj` (`clip_from_view`), 16 each,
    /// column-major.
    fn rp_camera_from_matrices(
        view: u32, proj: u32, width: u32, height: u32, clip: u32, reverse_z: u32, pixel_origin: u32,
    ) -> u32 => camera::from_matrices(view, proj, width, height, clip, reverse_z, pixel_origin);
    /// The camera of `raypick pick --camera EYE,TARGET,UP,FOV` for `scene`.
    fn rp_camera_cli(
        scene: u32, ex: f32, ey: f32, ez: f32, tx: f32, ty: f32, tz: f32, ux: f32, uy: f32, uz: f32,
        fov_deg: f32, width: u32, height: u32, clip: u32, pixel_origin: u32,
    ) -> u32 => camera::camera_cli(
        scene, Vec3::new(ex, ey, ez), Vec3::new(tx, ty, tz), Vec3::new(ux, uy, uz),
        fov_deg, width, height, clip, pixel_origin,
    );
    /// A camera framing `scene`'s bounds along `view_dir`.
    fn rp_camera_frame(
        scene: u32, vx: f32, vy: f32, vz: f32, ux: f32, uy: f32, uz: f32, fov_deg: f32,
        width: u32, height: u32, clip: u32, pixel_origin: u32,
    ) -> u32 => camera::camera_frame(
        scene, Vec3::new(vx, vy, vz), Vec3::new(ux, uy, uz), fov_deg, width, height, clip,
        pixel_origin,
    );
    /// Frees a camera.
    fn rp_camera_free(cam: u32) -> i32 => camera::camera_free(cam);
    /// The ray through window position `(x, y)`, in the out area.
    fn rp_camera_ray(cam: u32, x: f32, y: f32) -> i32 => camera::ray(cam, x, y);
    /// The window position of a world point: 1 and `x, y, depth` in the out area, or 0.
    fn rp_camera_project(cam: u32, x: f32, y: f32, z: f32) -> i32
        => camera::project(cam, Vec3::new(x, y, z));
    /// The camera's `view_from_world` and `clip_from_view`, in the out area.
    fn rp_camera_matrices(cam: u32) -> i32 => camera::matrices(cam);
    /// The pick under window position `(x, y)`: the ray, then 1 and a hit record, or 0.
    fn rp_scene_pick(scene: u32, cam: u32, x: f32, y: f32, mask: u32, cull: u32) -> i32
        => camera::pick(scene, cam, x, y, mask, cull);
}
