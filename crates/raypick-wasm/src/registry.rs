//! The objects Rust keeps for JavaScript, in slabs addressed by `u32` handles.
//!
//! A handle is `tag << 28 | generation << 20 | (slot + 1)`: the tag names the kind (a handle of
//! a scene passed where a buffer is expected is refused with both kinds named), the generation
//! (8 bits, bumped when a slot is freed) makes a freed handle stale instead of naming the next
//! object put in its slot, and `slot + 1` is never 0, so 0 is never a handle. Up to 2²⁰ − 1 live
//! objects of each kind.

use std::cell::RefCell;
use std::sync::Arc;

use raypick::camera::Camera;
use raypick::{Scene, SceneBuilder};

use crate::error::AbiError;

/// Bits of the slot number (plus one).
const SLOT_BITS: u32 = 20;
/// Bits of the generation.
const GEN_BITS: u32 = 8;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
const GEN_MASK: u32 = (1 << GEN_BITS) - 1;

/// The kinds of objects, as the tags in their handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `Vec<f32>`.
    F32 = 1,
    /// `Vec<u32>`.
    U32 = 2,
    /// `Vec<u8>`.
    U8 = 3,
    /// A [`SceneBuilder`].
    Builder = 4,
    /// A built [`Scene`].
    Scene = 5,
    /// A [`Camera`].
    Camera = 6,
}

impl Kind {
    fn from_tag(tag: u32) -> Option<Self> {
        Some(match tag {
            1 => Self::F32,
            2 => Self::U32,
            3 => Self::U8,
            4 => Self::Builder,
            5 => Self::Scene,
            6 => Self::Camera,
            _ => return None,
        })
    }

    /// The kind as the JavaScript API names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32 buffer",
            Self::U32 => "u32 buffer",
            Self::U8 => "byte buffer",
            Self::Builder => "scene builder",
            Self::Scene => "scene",
            Self::Camera => "camera",
        }
    }
}

enum Slot<T> {
    /// Free; the next object here gets this generation.
    Free(u32),
    /// Holds an object.
    Live(u32, T),
    /// Holds an object taken out for the length of one call ([`Slab::lend`]).
    Lent(u32),
}

/// Objects of one kind.
pub struct Slab<T> {
    kind: Kind,
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    const fn new(kind: Kind) -> Self {
        Self {
            kind,
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    fn handle(&self, slot: u32, generation: u32) -> u32 {
        (self.kind as u32) << (SLOT_BITS + GEN_BITS) | generation << SLOT_BITS | (slot + 1)
    }

    /// Keeps `value`; returns its handle.
    pub fn insert(&mut self, value: T) -> Result<u32, AbiError> {
        if let Some(slot) = self.free.pop() {
            let generation = match self.slots[slot as usize] {
                Slot::Free(g) => g,
                _ => 0,
            };
            self.slots[slot as usize] = Slot::Live(generation, value);
            return Ok(self.handle(slot, generation));
        }
        let slot = self.slots.len() as u32;
        if slot >= SLOT_MASK {
            return Err(AbiError::Handle {
                field: "handle",
                why: format!(
                    "more than {} live {}s: free some",
                    SLOT_MASK,
                    self.kind.name()
                ),
            });
        }
        self.slots.push(Slot::Live(0, value));
        Ok(self.handle(slot, 0))
    }

    /// The slot `h` names, checked: the kind, a slot that exists and the generation.
    fn slot(&self, h: u32, field: &'static str) -> Result<usize, AbiError> {
        let bad = |why: String| AbiError::Handle { field, why };
        let tag = h >> (SLOT_BITS + GEN_BITS);
        if h == 0 {
            return Err(bad(format!(
                "0 is no {} (a failed call's answer?)",
                self.kind.name()
            )));
        }
        if tag != self.kind as u32 {
            let other = Kind::from_tag(tag).map_or("nothing", Kind::name);
            return Err(bad(format!(
                "handle {h:#x} is a {other}, not a {}",
                self.kind.name()
            )));
        }
        let slot = ((h & SLOT_MASK) - 1) as usize;
        let generation = (h >> SLOT_BITS) & GEN_MASK;
        match self.slots.get(slot) {
            Some(Slot::Live(g, _)) if *g == generation => Ok(slot),
            Some(Slot::Lent(g)) if *g == generation => Err(bad(format!(
                "{} {h:#x} is already an argument of this call",
                self.kind.name()
            ))),
            Some(_) => Err(bad(format!(
                "{} {h:#x} was freed (disposed)",
                self.kind.name()
            ))),
            None => Err(bad(format!("no {} has handle {h:#x}", self.kind.name()))),
        }
    }

    /// The object `h` names.
    pub fn get(&self, h: u32, field: &'static str) -> Result<&T, AbiError> {
        let slot = self.slot(h, field)?;
        match &self.slots[slot] {
            Slot::Live(_, v) => Ok(v),
            _ => Err(self.vanished(field)),
        }
    }

    /// The object `h` names, to change.
    pub fn get_mut(&mut self, h: u32, field: &'static str) -> Result<&mut T, AbiError> {
        let slot = self.slot(h, field)?;
        let err = self.vanished(field);
        match &mut self.slots[slot] {
            Slot::Live(_, v) => Ok(v),
            _ => Err(err),
        }
    }

    /// Removes the object `h` names; the handle is stale from now on.
    pub fn remove(&mut self, h: u32, field: &'static str) -> Result<T, AbiError> {
        let slot = self.slot(h, field)?;
        let next = ((h >> SLOT_BITS) + 1) & GEN_MASK;
        match std::mem::replace(&mut self.slots[slot], Slot::Free(next)) {
            Slot::Live(_, v) => {
                self.free.push(slot as u32);
                Ok(v)
            }
            other => {
                self.slots[slot] = other;
                Err(self.vanished(field))
            }
        }
    }

    /// Calls `f` with the object `h` names, changeable, and the slab without it: for calls that
    /// read some buffers of a kind and write another of the same kind. The object is back in its
    /// slot when `f` returns; naming it again inside `f` is refused.
    pub fn lend<R>(
        &mut self,
        h: u32,
        field: &'static str,
        f: impl FnOnce(&mut T, &Self) -> R,
    ) -> Result<R, AbiError> {
        let slot = self.slot(h, field)?;
        let generation = (h >> SLOT_BITS) & GEN_MASK;
        let mut value = match std::mem::replace(&mut self.slots[slot], Slot::Lent(generation)) {
            Slot::Live(_, v) => v,
            other => {
                self.slots[slot] = other;
                return Err(self.vanished(field));
            }
        };
        let r = f(&mut value, self);
        self.slots[slot] = Slot::Live(generation, value);
        Ok(r)
    }

    /// Live objects (for tests and leak checks).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// [`Slab::slot`] found a live object that is not there: cannot happen.
    fn vanished(&self, field: &'static str) -> AbiError {
        AbiError::Handle {
            field,
            why: format!("{} slot in an unexpected state", self.kind.name()),
        }
    }
}

/// Everything Rust keeps for JavaScript.
pub struct State {
    /// `Float32Array` storage.
    pub f32: Slab<Vec<f32>>,
    /// `Uint32Array` storage.
    pub u32: Slab<Vec<u32>>,
    /// `Uint8Array` storage (scene files, UTF-8 strings).
    pub u8: Slab<Vec<u8>>,
    /// Scene builders.
    pub builders: Slab<SceneBuilder>,
    /// Built scenes, shared with the instances that place them.
    pub scenes: Slab<Arc<Scene>>,
    /// Cameras.
    pub cameras: Slab<Camera>,
}

impl State {
    /// Live objects of every kind: what JavaScript has not freed yet.
    pub fn live(&self) -> usize {
        self.f32.live()
            + self.u32.live()
            + self.u8.live()
            + self.builders.live()
            + self.scenes.live()
            + self.cameras.live()
    }
}

thread_local! {
    static STATE: RefCell<State> = const {
        RefCell::new(State {
            f32: Slab::new(Kind::F32),
            u32: Slab::new(Kind::U32),
            u8: Slab::new(Kind::U8),
            builders: Slab::new(Kind::Builder),
            scenes: Slab::new(Kind::Scene),
            cameras: Slab::new(Kind::Camera),
        })
    };
}

/// Runs `f` with the registry. Exported functions call it once each; nothing inside calls back
/// out, so the borrow never nests.
pub fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// A vector of `n` zeros, or [`AbiError::OutOfMemory`] instead of an abort.
pub fn zeroed<T: Clone + Default>(n: usize, field: &'static str) -> Result<Vec<T>, AbiError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| AbiError::OutOfMemory {
        field,
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    v.resize(n, T::default());
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_name_one_object_of_one_kind() {
        let mut a: Slab<u32> = Slab::new(Kind::F32);
        let mut b: Slab<u32> = Slab::new(Kind::Scene);
        let h = a.insert(7).unwrap();
        let g = b.insert(8).unwrap();
        assert_ne!(h, 0);
        assert_eq!(*a.get(h, "x").unwrap(), 7);
        let e = a.get(g, "x").unwrap_err().to_string();
        assert!(e.contains("is a scene, not a f32 buffer"), "{e}");
        assert!(a.get(0, "x").is_err());
        assert_eq!(a.remove(h, "x").unwrap(), 7);
        let e = a.get(h, "x").unwrap_err().to_string();
        assert!(e.contains("was freed"), "{e}");
        // The slot is reused with another generation: the stale handle stays stale.
        let h2 = a.insert(9).unwrap();
        assert_ne!(h2, h);
        assert!(a.get(h, "x").is_err());
        assert_eq!(*a.get(h2, "x").unwrap(), 9);
        assert_eq!(a.live(), 1);
    }

    #[test]
    fn a_lent_object_cannot_be_named_twice() {
        let mut a: Slab<Vec<f32>> = Slab::new(Kind::F32);
        let h = a.insert(vec![1.0]).unwrap();
        let other = a.insert(vec![2.0]).unwrap();
        let r = a
            .lend(h, "out", |v, slab| {
                v[0] = slab.get(other, "in").unwrap()[0];
                slab.get(h, "in").map(|_| ()).unwrap_err().to_string()
            })
            .unwrap();
        assert!(r.contains("already an argument"), "{r}");
        assert_eq!(a.get(h, "x").unwrap()[0], 2.0);
    }

    #[test]
    fn generations_wrap_without_making_handle_zero() {
        let mut a: Slab<u8> = Slab::new(Kind::U8);
        for _ in 0..600 {
            let h = a.insert(1).unwrap();
            assert_ne!(h, 0);
            a.remove(h, "x").unwrap();
        }
    }
}
