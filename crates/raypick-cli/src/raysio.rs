//! Ray batches in and hit arrays out: the `.rays` format of the shared benchmarks, numpy `.npy`
//! (N×6 float32 or float64) in, and numpy `.npz` out; query points as `.npy` (N×3).
//!
//! A `.rays` file is little-endian float32, N rows of `ox oy oz dx dy dz`, no header.

use std::io::{Cursor, Write};

use npyz::WriterBuilder;
use std::path::Path;

use glam::Vec3;
use raypick::Ray;

/// Why a ray file could not be read or a result file written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RaysError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The OS error (in the message, so not also the error's source).
        error: std::io::Error,
    },
    /// The result file could not be written (the previous one, if any, is unchanged).
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The file's content is not a ray batch.
    #[error("{path}: {what}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong, and where.
        what: String,
    },
}

fn format_err(path: &Path, what: impl Into<String>) -> RaysError {
    RaysError::Format {
        path: path.display().to_string(),
        what: what.into(),
    }
}

/// Reads rays from a `.rays` or `.npy` file (chosen by the `.npy` magic bytes, not the extension).
/// Every ray gets `t ∈ [0, ∞)`.
pub fn read_rays(path: &Path) -> Result<Vec<Ray>, RaysError> {
    let bytes = std::fs::read(path).map_err(|error| RaysError::Io {
        path: path.display().to_string(),
        error,
    })?;
    if bytes.starts_with(b"\x93NUMPY") {
        read_npy(path, &bytes)
    } else {
        read_raw(path, &bytes)
    }
}

fn rows_to_rays(rows: impl Iterator<Item = [f32; 6]>) -> Vec<Ray> {
    rows.map(|r| Ray::new(Vec3::new(r[0], r[1], r[2]), Vec3::new(r[3], r[4], r[5])))
        .collect()
}

fn read_raw(path: &Path, bytes: &[u8]) -> Result<Vec<Ray>, RaysError> {
    const ROW: usize = 24;
    if !bytes.len().is_multiple_of(ROW) {
        return Err(format_err(
            path,
            format!(
                "size {} is not a multiple of 24 bytes (6 little-endian float32 per ray); {} trailing bytes at offset {}",
                bytes.len(),
                bytes.len() % ROW,
                bytes.len() - bytes.len() % ROW
            ),
        ));
    }
    Ok(rows_to_rays(bytes.chunks_exact(ROW).map(|row| {
        let mut r = [0f32; 6];
        for (k, c) in row.chunks_exact(4).enumerate() {
            r[k] = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        r
    })))
}

fn read_npy(path: &Path, bytes: &[u8]) -> Result<Vec<Ray>, RaysError> {
    let flat = read_npy_rows(path, bytes, 6)?;
    Ok(rows_to_rays(
        flat.chunks_exact(6)
            .map(|c| [c[0], c[1], c[2], c[3], c[4], c[5]]),
    ))
}

/// Reads query points from a `.npy` file: an (N, 3) float32 or float64 array, C order.
pub fn read_points(path: &Path) -> Result<Vec<Vec3>, RaysError> {
    let bytes = std::fs::read(path).map_err(|error| RaysError::Io {
        path: path.display().to_string(),
        error,
    })?;
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(format_err(
            path,
            "not a .npy file (save the points with numpy.save as an (N, 3) array)",
        ));
    }
    let flat = read_npy_rows(path, &bytes, 3)?;
    Ok(flat.chunks_exact(3).map(Vec3::from_slice).collect())
}

/// The values of an (N, `cols`) float32 or float64 `.npy` array, C order, as `f32`.
fn read_npy_rows(path: &Path, bytes: &[u8], cols: u64) -> Result<Vec<f32>, RaysError> {
    let npy =
        npyz::NpyFile::new(bytes).map_err(|e| format_err(path, format!("bad .npy header: {e}")))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || shape[1] != cols {
        return Err(format_err(
            path,
            format!("expected an array of shape (N, {cols}), found {shape:?}"),
        ));
    }
    if npy.order() != npyz::Order::C {
        return Err(format_err(
            path,
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray",
        ));
    }
    let dtype = npy.dtype();
    let n = shape[0] as usize;
    let flat: Vec<f32> = match &dtype {
        npyz::DType::Plain(ts)
            if ts.type_char() == npyz::TypeChar::Float && ts.size_field() == 4 =>
        {
            npy.into_vec::<f32>()
                .map_err(|e| format_err(path, format!("reading float32 data: {e}")))?
        }
        npyz::DType::Plain(ts)
            if ts.type_char() == npyz::TypeChar::Float && ts.size_field() == 8 =>
        {
            npy.into_vec::<f64>()
                .map_err(|e| format_err(path, format!("reading float64 data: {e}")))?
                .into_iter()
                .map(|x| x as f32)
                .collect()
        }
        other => {
            return Err(format_err(
                path,
                format!(
                    "expected float32 or float64 data, found dtype {}",
                    other.descr()
                ),
            ))
        }
    };
    let want = n * cols as usize;
    if flat.len() != want {
        return Err(format_err(
            path,
            format!(
                "expected {want} values, found {} (truncated file?)",
                flat.len()
            ),
        ));
    }
    Ok(flat)
}

/// One named array of an `.npz` archive.
pub enum NpzArray<'a> {
    /// float32 values.
    F32(&'a [f32]),
    /// int64 values.
    I64(&'a [i64]),
    /// Booleans (numpy `bool`).
    Bool(&'a [bool]),
    /// float32 rows of three (points, normals), written with shape (N, 3).
    F32x3(&'a [f32]),
}

fn npy_bytes<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    values: &[T],
    shape: &[u64],
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut w = npyz::WriteOptions::<T>::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut out)
            .begin_nd()?;
        w.extend(values.iter().copied())?;
        w.finish()?;
    }
    Ok(out)
}

/// Writes a numpy `.npz` archive (uncompressed zip of `.npy` files), one array per name,
/// replacing `path` only once the whole archive is on disk ([`crate::output::write_replacing`]).
pub fn write_npz(path: &Path, arrays: &[(&str, NpzArray<'_>)]) -> Result<(), RaysError> {
    let io = |error| RaysError::Io {
        path: path.display().to_string(),
        error,
    };
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    for (name, array) in arrays {
        let data = match array {
            NpzArray::F32(v) => npy_bytes(v, &[v.len() as u64]),
            NpzArray::I64(v) => npy_bytes(v, &[v.len() as u64]),
            NpzArray::Bool(v) => npy_bytes(v, &[v.len() as u64]),
            NpzArray::F32x3(v) => npy_bytes(v, &[v.len() as u64 / 3, 3]),
        }
        .map_err(io)?;
        zip.start_file(format!("{name}.npy"), opts)
            .map_err(|e| format_err(path, e.to_string()))?;
        zip.write_all(&data).map_err(io)?;
    }
    let buf = zip
        .finish()
        .map_err(|e| format_err(path, e.to_string()))?
        .into_inner();
    crate::output::write_replacing(path, &buf)?;
    Ok(())
}
