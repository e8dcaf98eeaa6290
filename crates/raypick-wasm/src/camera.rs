//! Cameras and picking: [`raypick::camera::Camera`] made from a look-at and a projection, from a
//! renderer's own matrices, or exactly as the `raypick` command line makes it; pixel rays,
//! projection, and [`raypick::camera::pick_path_with`], the path `raypick pick` takes, so a pick
//! in the page equals the native pick bit for bit.
//!
//! Enumerations passed as `u32`: `clip` 0 OpenGL / WebGL, 1 Direct3D / wgpu / WebGPU / Metal,
//! 2 Vulkan; `pixel_origin` 0 top-left (browser events), 1 bottom-left; `projection` 0
//! perspective, 1 orthographic. Angles are in degrees and are turned into radians in `f32` here
//! (`f32::to_radians`), as the command line and the Python bindings do, so that the same numbers
//! give the same camera everywhere.

use glam::{Vec2, Vec3};
use raypick::camera::{
    pick_path_with, Camera, ClipSpace, DepthOrder, PixelOrigin, Projection, Viewport,
};
use raypick::Scene;

use crate::buffers::read_mat4;
use crate::error::{handle, status, AbiError};
use crate::out;
use crate::query::Opts;
use crate::registry::with_state;

fn clip_of(clip: u32) -> Result<ClipSpace, AbiError> {
    match clip {
        0 => Ok(ClipSpace::OpenGl),
        1 => Ok(ClipSpace::Direct3D),
        2 => Ok(ClipSpace::Vulkan),
        c => Err(AbiError::argument(
            "convention",
            format!("{c} is not 0 (OpenGL), 1 (Direct3D / wgpu) or 2 (Vulkan)"),
        )),
    }
}

fn origin_of(origin: u32) -> Result<PixelOrigin, AbiError> {
    match origin {
        0 => Ok(PixelOrigin::TopLeft),
        1 => Ok(PixelOrigin::BottomLeft),
        o => Err(AbiError::argument(
            "pixelOrigin",
            format!("{o} is not 0 (top-left) or 1 (bottom-left)"),
        )),
    }
}

fn viewport_of(width: u32, height: u32) -> Result<Viewport, AbiError> {
    if width == 0 || height == 0 || width > 1 << 24 || height > 1 << 24 {
        return Err(AbiError::argument(
            "width",
            format!("a {width}x{height} viewport: width and height must be in 1..=2^24"),
        ));
    }
    Ok(Viewport::new(width as f32, height as f32))
}

fn keep(camera: Camera) -> Result<u32, AbiError> {
    with_state(|s| s.cameras.insert(camera))
}

/// The look-at camera's parameters (`rp_camera_look_at`).
#[derive(Clone, Copy, Debug)]
pub struct LookAt {
    /// Eye position.
    pub eye: Vec3,
    /// Point looked at.
    pub target: Vec3,
    /// Up direction.
    pub up: Vec3,
    /// Vertical field of view, degrees (perspective; the default orthographic height too).
    pub fov_y_deg: f32,
    /// Near clip distance.
    pub near: f32,
    /// Far clip distance (∞: an infinite perspective).
    pub far: f32,
    /// 0 perspective, 1 orthographic.
    pub projection: u32,
    /// The orthographic view's height in world units; NaN: the height the perspective view has
    /// at the target, `2 |target − eye| tan(fov_y / 2)`.
    pub ortho_height: f32,
    /// Reversed depth (perspective only).
    pub reverse_z: bool,
}

/// `rp_camera_look_at`: a right-handed look-at camera (the Python `raypick.Camera`'s rules).
pub fn look_at(p: LookAt, width: u32, height: u32, clip: u32, pixel_origin: u32) -> u32 {
    handle(|| {
        let clip = clip_of(clip)?;
        let origin = origin_of(pixel_origin)?;
        let viewport = viewport_of(width, height)?;
        let aspect = viewport.aspect();
        let fov_y = p.fov_y_deg.to_radians();
        let proj = match p.projection {
            0 if p.far == f32::INFINITY && p.reverse_z => {
                Projection::perspective_infinite_reverse_z(fov_y, aspect, p.near, clip)
            }
            0 if p.far == f32::INFINITY => {
                Projection::perspective_infinite(fov_y, aspect, p.near, clip)
            }
            0 if p.reverse_z => {
                Projection::perspective_reverse_z(fov_y, aspect, p.near, p.far, clip)
            }
            0 => Projection::perspective(fov_y, aspect, p.near, p.far, clip),
            1 if p.reverse_z => {
                return Err(AbiError::argument(
                    "reverseZ",
                    "reversed depth is for perspective projections",
                ))
            }
            1 => {
                let h = if p.ortho_height.is_nan() {
                    2.0 * (p.target - p.eye).length() * (0.5 * fov_y).tan()
                } else {
                    p.ortho_height
                };
                if !(h.is_finite() && h > 0.0) {
                    return Err(AbiError::argument(
                        "orthoHeight",
                        format!("{h} must be finite and > 0"),
                    ));
                }
                Projection::orthographic_symmetric(h, aspect, p.near, p.far, clip)
            }
            k => {
                return Err(AbiError::argument(
                    "projection",
                    format!("{k} is not 0 (perspective) or 1 (orthographic)"),
                ))
            }
        }?;
        keep(Camera::look_at(p.eye, p.target, p.up, proj, viewport)?.with_pixel_origin(origin))
    })
}

/// `rp_camera_from_matrices`: a renderer's own `view_from_world` and `clip_from_view` (f32
/// buffers of 16, column-major: three.js's `camera.matrixWorldInverse.elements` and
/// `camera.projectionMatrix.elements`).
pub fn from_matrices(
    view: u32,
    proj: u32,
    width: u32,
    height: u32,
    clip: u32,
    reverse_z: u32,
    pixel_origin: u32,
) -> u32 {
    handle(|| {
        let clip = clip_of(clip)?;
        let origin = origin_of(pixel_origin)?;
        let viewport = viewport_of(width, height)?;
        let order = if reverse_z != 0 {
            DepthOrder::Reversed
        } else {
            DepthOrder::Standard
        };
        let (view, proj) = with_state(|s| {
            Ok::<_, AbiError>((
                read_mat4(s.f32.get(view, "viewFromWorld")?, "viewFromWorld")?,
                read_mat4(s.f32.get(proj, "clipFromView")?, "clipFromView")?,
            ))
        })?;
        let projection = Projection::from_matrix(proj, clip, order)?;
        keep(Camera::new(view, projection, viewport)?.with_pixel_origin(origin))
    })
}

/// The camera `raypick pick --camera EYE,TARGET,UP,FOV --size WxH --convention C` makes
/// (`raypick_cli::view::make_camera`): an infinite perspective whose near plane is 1e-4 of the
/// working distance (eye to target plus the scene's bounding radius). A test holds the two equal.
pub fn cli_camera(
    scene: &Scene,
    eye: Vec3,
    target: Vec3,
    up: Vec3,
    fov_deg: f32,
    viewport: Viewport,
    clip: ClipSpace,
) -> Result<Camera, AbiError> {
    if !(fov_deg > 0.0 && fov_deg < 180.0) {
        return Err(AbiError::argument(
            "fovDeg",
            format!("{fov_deg} must be in (0, 180) degrees"),
        ));
    }
    let b = scene.bounds();
    let dist = (target - eye).length();
    let radius = if b.is_empty() {
        1.0
    } else {
        0.5 * b.extent().length()
    };
    let near = 1e-4 * (dist + radius).max(1e-3);
    let projection =
        Projection::perspective_infinite(fov_deg.to_radians(), viewport.aspect(), near, clip)?;
    Ok(Camera::look_at(eye, target, up, projection, viewport)?)
}

/// `rp_camera_cli`: [`cli_camera`].
#[allow(clippy::too_many_arguments)]
pub fn camera_cli(
    scene: u32,
    eye: Vec3,
    target: Vec3,
    up: Vec3,
    fov_deg: f32,
    width: u32,
    height: u32,
    clip: u32,
    pixel_origin: u32,
) -> u32 {
    handle(|| {
        let clip = clip_of(clip)?;
        let origin = origin_of(pixel_origin)?;
        let viewport = viewport_of(width, height)?;
        let cam = with_state(|s| {
            let scene = s.scenes.get(scene, "scene")?;
            cli_camera(scene, eye, target, up, fov_deg, viewport, clip)
        })?;
        keep(cam.with_pixel_origin(origin))
    })
}

/// `rp_camera_frame`: a perspective camera looking along `view_dir` that frames the scene's
/// bounds ([`Camera::frame_bounds`]); with the view direction `(0, -0.6, -2.2)`, up `+y` and 45°
/// it is the camera `raypick pick` makes without `--camera`.
#[allow(clippy::too_many_arguments)]
pub fn camera_frame(
    scene: u32,
    view_dir: Vec3,
    up: Vec3,
    fov_deg: f32,
    width: u32,
    height: u32,
    clip: u32,
    pixel_origin: u32,
) -> u32 {
    handle(|| {
        let clip = clip_of(clip)?;
        let origin = origin_of(pixel_origin)?;
        let viewport = viewport_of(width, height)?;
        let bounds = with_state(|s| s.scenes.get(scene, "scene").map(|s| s.bounds()))?;
        let cam = Camera::frame_bounds(bounds, view_dir, up, fov_deg.to_radians(), viewport, clip)?;
        keep(cam.with_pixel_origin(origin))
    })
}

/// `rp_camera_free`.
pub fn camera_free(cam: u32) -> i32 {
    status(|| with_state(|s| s.cameras.remove(cam, "camera").map(|_| 0)))
}

fn camera(cam: u32) -> Result<Camera, AbiError> {
    with_state(|s| s.cameras.get(cam, "camera").copied())
}

/// `rp_camera_ray`: 0, the ray through window position `(x, y)` in the out area.
pub fn ray(cam: u32, x: f32, y: f32) -> i32 {
    status(|| {
        let cam = camera(cam)?;
        out::clear();
        out::push_ray(&cam.pixel_ray(x, y));
        Ok(0)
    })
}

/// `rp_camera_project`: 1 and the window position `x, y, depth` of a world point in the out
/// area, or 0 when the point has no window position (behind the eye).
pub fn project(cam: u32, p: Vec3) -> i32 {
    status(|| {
        let cam = camera(cam)?;
        out::clear();
        Ok(match cam.project(p) {
            Some(w) => {
                out::push_f32(&w.to_array());
                1
            }
            None => 0,
        })
    })
}

/// `rp_camera_matrices`: 0, then `view_from_world` and `clip_from_view` (16 values each,
/// column-major) in the out area: the matrices to render with so that the picture is the one
/// picks see.
pub fn matrices(cam: u32) -> i32 {
    status(|| {
        let cam = camera(cam)?;
        out::clear();
        out::push_f32(&cam.view_from_world().to_cols_array());
        out::push_f32(&cam.projection().clip_from_view().to_cols_array());
        Ok(0)
    })
}

/// `rp_scene_pick`: the closest hit under window position `(x, y)` (pixel `(i, j)`'s centre is
/// `(i + 0.5, j + 0.5)`), between the near and far planes. The out area gets the pixel ray, then
/// a hit record when something is hit; answers 1 for a hit, 0 for none.
pub fn pick(scene: u32, cam: u32, x: f32, y: f32, mask: u32, cull: u32) -> i32 {
    status(|| {
        with_state(|s| {
            // The range is the pixel ray's own (near to far plane).
            let o = Opts::read(s, 0.0, f32::INFINITY, mask, cull, 0)?;
            let scene = s.scenes.get(scene, "scene")?;
            let cam = s.cameras.get(cam, "camera")?;
            let ray = cam.pixel_ray(x, y);
            out::clear();
            out::push_ray(&ray);
            let pick = o.with_query(ray.dir, |q| pick_path_with(scene, cam, Vec2::new(x, y), q));
            Ok(match pick {
                Some((p, path)) => {
                    out::push_hit(&p.hit, &path);
                    1
                }
                None => 0,
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use raypick::{SceneBuilder, TriMesh};
    use raypick_cli::view::{make_camera, CameraSpec, Framing};

    fn scene() -> Scene {
        let mut b = SceneBuilder::new();
        b.add_mesh(TriMesh::new(
            vec![
                Vec3::new(-1.0, 0.0, 0.3),
                Vec3::new(2.0, 0.1, -0.2),
                Vec3::new(0.2, 1.7, 0.05),
            ],
            vec![[0, 1, 2]],
        ));
        b.build().unwrap()
    }

    /// `rp_camera_cli` and `rp_camera_frame` reproduce the command line's cameras exactly.
    #[test]
    fn the_cli_cameras_are_reproduced() {
        let scene = scene();
        let clips = [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan];
        for (k, clip) in clips.into_iter().enumerate() {
            for (size, spec) in [
                (
                    (800, 600),
                    CameraSpec {
                        eye: Vec3::new(0.0, 0.1, 3.0),
                        target: Vec3::new(0.0, 0.1, 0.0),
                        up: Vec3::Y,
                        fov_deg: 45.0,
                    },
                ),
                (
                    (317, 911),
                    CameraSpec {
                        eye: Vec3::new(-2.5, 1.25, 0.7),
                        target: Vec3::new(0.3, 0.2, -0.1),
                        up: Vec3::new(0.1, 1.0, 0.2),
                        fov_deg: 63.7,
                    },
                ),
            ] {
                let native = make_camera(&scene, size, clip, Some(spec), Framing::Scene).unwrap();
                let vp = Viewport::new(size.0 as f32, size.1 as f32);
                let ours = cli_camera(
                    &scene,
                    spec.eye,
                    spec.target,
                    spec.up,
                    spec.fov_deg,
                    vp,
                    clip,
                )
                .unwrap();
                assert_eq!(ours, native);
                let framed = make_camera(&scene, size, clip, None, Framing::Scene).unwrap();
                let h =
                    with_state(|s| s.scenes.insert(std::sync::Arc::new(scene.clone()))).unwrap();
                let c = camera_frame(
                    h,
                    raypick_cli::view::DEFAULT_VIEW_DIR,
                    Vec3::Y,
                    raypick_cli::view::DEFAULT_FOV_DEG,
                    size.0,
                    size.1,
                    k as u32,
                    0,
                );
                assert_eq!(camera(c).unwrap(), framed);
            }
        }
    }

    #[test]
    fn bad_camera_arguments_name_the_field() {
        let p = LookAt {
            eye: Vec3::Z,
            target: Vec3::Z,
            up: Vec3::Y,
            fov_y_deg: 45.0,
            near: 0.1,
            far: 10.0,
            projection: 0,
            ortho_height: f32::NAN,
            reverse_z: false,
        };
        assert_eq!(look_at(p, 10, 10, 0, 0), 0);
        assert_eq!(crate::error::last_kind(), crate::error::kind::CAMERA);
        assert_eq!(
            look_at(
                LookAt {
                    eye: Vec3::ONE,
                    ..p
                },
                10,
                10,
                7,
                0
            ),
            0
        );
        assert_eq!(crate::error::last_kind(), crate::error::kind::ARGUMENT);
        assert_ne!(
            look_at(
                LookAt {
                    eye: Vec3::ONE,
                    ..p
                },
                10,
                10,
                2,
                1
            ),
            0
        );
    }
}
