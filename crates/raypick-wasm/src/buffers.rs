//! Typed buffers (`Vec<f32>`, `Vec<u32>`, `Vec<u8>`) that JavaScript fills and reads through
//! views on the module's memory, and the readers that turn them into engine types with errors
//! that name the argument and the element.

use glam::{Mat4, Vec3};

use crate::error::{status, AbiError};
use crate::registry::{with_state, zeroed, Slab, State};

/// An element type of buffers.
pub trait Elem: Copy + Default + 'static {
    /// The slab of buffers of this element.
    fn slab(state: &mut State) -> &mut Slab<Vec<Self>>;
}

impl Elem for f32 {
    fn slab(state: &mut State) -> &mut Slab<Vec<Self>> {
        &mut state.f32
    }
}

impl Elem for u32 {
    fn slab(state: &mut State) -> &mut Slab<Vec<Self>> {
        &mut state.u32
    }
}

impl Elem for u8 {
    fn slab(state: &mut State) -> &mut Slab<Vec<Self>> {
        &mut state.u8
    }
}

/// `rp_*_alloc`: a buffer of `n` zeros. Its address never changes until it is freed.
pub fn alloc<T: Elem>(n: u32) -> u32 {
    crate::error::handle(|| {
        let v = zeroed::<T>(n as usize, "length")?;
        with_state(|s| T::slab(s).insert(v))
    })
}

/// `rp_*_ptr`: the buffer's address in linear memory (null for a bad handle).
pub fn ptr<T: Elem>(h: u32) -> *mut T {
    with_state(|s| match T::slab(s).get_mut(h, "buffer") {
        Ok(v) => v.as_mut_ptr(),
        Err(e) => {
            crate::error::record(&e);
            std::ptr::null_mut()
        }
    })
}

/// `rp_*_len`: the buffer's length in elements (-1 for a bad handle).
pub fn len<T: Elem>(h: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let n = T::slab(s).get(h, "buffer")?.len();
            crate::error::count(n, "buffer")
        })
    })
}

/// `rp_*_free`: 0, or -1 when `h` names no buffer of this kind.
pub fn free<T: Elem>(h: u32) -> i32 {
    status(|| with_state(|s| T::slab(s).remove(h, "buffer").map(|_| 0)))
}

/// The name in UTF-8 buffer `h` (`None` for handle 0).
pub fn read_name(state: &State, h: u32, field: &'static str) -> Result<Option<String>, AbiError> {
    if h == 0 {
        return Ok(None);
    }
    let bytes = state.u8.get(h, field)?;
    String::from_utf8(bytes.clone())
        .map(Some)
        .map_err(|e| AbiError::argument(field, format!("not UTF-8: {e}")))
}

/// Points from a flat `x, y, z, x, y, z, …` buffer, every coordinate finite.
pub fn read_points(data: &[f32], field: &'static str) -> Result<Vec<Vec3>, AbiError> {
    if !data.len().is_multiple_of(3) {
        return Err(AbiError::argument(
            field,
            format!(
                "length {} is not a multiple of 3 (x, y, z per point)",
                data.len()
            ),
        ));
    }
    if let Some(i) = data.iter().position(|x| !x.is_finite()) {
        return Err(AbiError::argument(
            field,
            format!(
                "point {} has a non-finite {} ({})",
                i / 3,
                ["x", "y", "z"][i % 3],
                data[i]
            ),
        ));
    }
    Ok(data
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0], c[1], c[2]))
        .collect())
}

/// A 4×4 matrix from 16 values in column-major order (glam's, OpenGL's and three.js's
/// `Matrix4.elements` order), every one finite.
pub fn read_mat4(data: &[f32], field: &'static str) -> Result<Mat4, AbiError> {
    let m: &[f32; 16] = data.try_into().map_err(|_| {
        AbiError::argument(
            field,
            format!(
                "{} values given for a 4x4 matrix (16, column-major)",
                data.len()
            ),
        )
    })?;
    if let Some(i) = m.iter().position(|x| !x.is_finite()) {
        return Err(AbiError::argument(
            field,
            format!("element {i} (column {}, row {}) is {}", i / 4, i % 4, m[i]),
        ));
    }
    Ok(Mat4::from_cols_array(m))
}

/// Checks that an output buffer holds at least `n` elements.
pub fn check_out_len<T>(out: &[T], n: usize, field: &'static str) -> Result<(), AbiError> {
    if out.len() < n {
        return Err(AbiError::argument(
            field,
            format!("length {} is too short: {n} values are written", out.len()),
        ));
    }
    Ok(())
}

/// A new buffer holding `v`; its handle.
pub fn keep<T: Elem>(state: &mut State, v: Vec<T>) -> Result<u32, AbiError> {
    T::slab(state).insert(v)
}

/// Makes a zeroed buffer of `n` then fills it by `f` (so a failed allocation is an error).
pub fn filled<T: Elem>(
    n: usize,
    field: &'static str,
    f: impl FnOnce(&mut [T]),
) -> Result<Vec<T>, AbiError> {
    let mut v = zeroed::<T>(n, field)?;
    f(&mut v);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_round_trip_and_free() {
        let h = alloc::<f32>(6);
        assert_ne!(h, 0);
        assert_eq!(len::<f32>(h), 6);
        assert!(!ptr::<f32>(h).is_null());
        // A u32 accessor refuses an f32 handle.
        assert_eq!(len::<u32>(h), -1);
        assert_eq!(free::<f32>(h), 0);
        assert_eq!(free::<f32>(h), -1);
        assert!(ptr::<f32>(h).is_null());
    }

    #[test]
    fn points_name_the_bad_coordinate() {
        let e = read_points(&[0.0, 1.0, 2.0, 3.0, f32::NAN, 5.0], "positions").unwrap_err();
        assert_eq!(e.to_string(), "positions: point 1 has a non-finite y (NaN)");
        let e = read_points(&[0.0; 4], "positions").unwrap_err();
        assert!(e.to_string().contains("not a multiple of 3"), "{e}");
    }
}
