//! Scene files (`.rpk`, [`raypick::scene::file`]): a built scene with every BVH, read by
//! [`crate::load`] without a build. The format lives in the engine; this module finds such files
//! among models, applies the load's budgets and names what the scene holds.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use raypick::scene::file::MAGIC;
use raypick::{Geometry, Scene, SceneFileError};

use crate::limits::too_many_triangles;
use crate::{Format, Limits, LoadError, Loaded, Location, Source};

/// `true` when `head` (a file's first bytes) starts like a scene file.
pub fn is_scene_file(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// The scene file at `path` when it is one (a regular file whose content starts with the scene
/// file magic, or whose extension is `rpk`), read within `limits`; `None` for any other file.
pub(crate) fn load_if_scene_file(
    path: &Path,
    limits: &Limits,
) -> Result<Option<Loaded>, LoadError> {
    let io_error = |error| LoadError::Io {
        source_name: Source(Some(path.to_path_buf())),
        error,
    };
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    if !metadata.is_file() {
        return Ok(None);
    }
    let by_extension = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("rpk"));
    let mut file = File::open(path).map_err(io_error)?;
    let mut head = Vec::with_capacity(MAGIC.len());
    (&mut file)
        .take(MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(io_error)?;
    if !by_extension && !is_scene_file(&head) {
        return Ok(None);
    }
    let len = metadata.len();
    limits
        .check_bytes(len, Location::File)
        .map_err(|error| error.with_path(path))?;
    // Read a piece at a time, never held whole; at most the size checked above, even if the
    // file grows while it is read.
    let scene = Scene::from_reader((&head[..]).chain(file), len).map_err(|error| match error {
        SceneFileError::Io(error) => io_error(error),
        error => LoadError::SceneFile {
            source_name: Source(Some(path.to_path_buf())),
            error,
        },
    })?;
    within_budget(scene, limits)
        .map(Some)
        .map_err(|error| error.with_path(path))
}

/// A scene from the bytes of a scene file, within `limits` (the triangles of the scene and of
/// each scene its instances place, each counted once, against [`Limits::max_triangles`]).
///
/// # Errors
/// [`LoadError::SceneFile`] for a file the engine refuses, [`LoadError::TooManyBytes`] or
/// [`LoadError::TooManyTriangles`] over a budget.
pub fn load_scene_bytes(bytes: &[u8], limits: &Limits) -> Result<Loaded, LoadError> {
    limits.check_bytes(bytes.len() as u64, Location::File)?;
    let scene = Scene::from_bytes(bytes).map_err(|error| LoadError::SceneFile {
        source_name: Source::default(),
        error,
    })?;
    within_budget(scene, limits)
}

/// `scene`, loaded, when its triangles and those of each scene its instances place (each counted
/// once) are within [`Limits::max_triangles`].
fn within_budget(scene: Scene, limits: &Limits) -> Result<Loaded, LoadError> {
    let mut placed = HashSet::new();
    let mut triangles = scene.num_triangles() as u64;
    for g in (0..scene.num_geometries() as u32).filter_map(|id| scene.geometry(id)) {
        if let Geometry::Instance(i) = g {
            if placed.insert(Arc::as_ptr(i.scene())) {
                triangles += i.scene().num_triangles() as u64;
            }
        }
    }
    if triangles > limits.max_triangles {
        return Err(too_many_triangles(
            Format::Scene,
            Location::File,
            limits.max_triangles,
        ));
    }
    Ok(loaded(scene))
}

/// The names of a loaded scene file: each top-level geometry by its own name; as meshes, each
/// mesh and sphere set of the scene, then each placed scene once, named after its first
/// geometry (as a glTF mesh shared by several nodes is one mesh).
fn loaded(scene: Scene) -> Loaded {
    let name = |g: &Geometry| g.name().unwrap_or_default().to_string();
    let mut geometry_names = Vec::new();
    let mut geometry_mesh = Vec::new();
    let mut mesh_names = Vec::new();
    // Each placed scene met so far and its mesh index.
    let mut placed: Vec<(*const Scene, usize)> = Vec::new();
    for g in (0..scene.num_geometries() as u32).filter_map(|id| scene.geometry(id)) {
        geometry_names.push(name(g));
        let mesh = match g {
            Geometry::Instance(i) => {
                let ptr = Arc::as_ptr(i.scene());
                match placed.iter().find(|&&(p, _)| p == ptr) {
                    Some(&(_, mesh)) => mesh,
                    None => {
                        mesh_names.push(i.scene().geometry(0).map(name).unwrap_or_default());
                        placed.push((ptr, mesh_names.len() - 1));
                        mesh_names.len() - 1
                    }
                }
            }
            _ => {
                mesh_names.push(name(g));
                mesh_names.len() - 1
            }
        };
        geometry_mesh.push(mesh);
    }
    Loaded {
        scene,
        format: Format::Scene,
        geometry_names,
        geometry_mesh,
        mesh_names,
        notes: Vec::new(),
        references: Vec::new(),
        nodes: crate::Nodes::default(),
    }
}
