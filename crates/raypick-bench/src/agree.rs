//! Do the engines report the same hits? Ray-by-ray comparison, disputes settled in `f64`.
//!
//! A ray is *disputed* when two engines disagree on it (hit or miss, nearest triangle, any-hit), or
//! when one engine's any-hit answer contradicts its own closest hit. Each disputed ray is cast in `f64`
//! against every triangle (two-sided Möller–Trumbore, the rounding of `f32` inputs to `f64` is exact and
//! the test then has ~29 more bits than the engines), and each engine's answer is judged:
//!
//! - **right**: the same hit or miss as the reference and the same nearest triangle, or a triangle the
//!   reference hits at the same `t` (two triangles meeting where the ray crosses their shared edge);
//! - **grazing**: wrong, but only about a ray that passes within [`GRAZE`] (in barycentric terms) of an
//!   edge of the triangle in question, which `f32` arithmetic cannot decide;
//! - **wrong**: anything else — a real error in that engine (or in this harness).

use glam::DVec3;
use rayon::prelude::*;
use raypick::Ray;

use crate::engines::HitRec;
use crate::mesh::Mesh;

/// Barycentric distance to an edge under which an `f32` engine's verdict cannot be trusted.
///
/// An `f32` edge test (Möller–Trumbore or similar) computes `u = (s·p)/det` with an absolute error of a
/// few ulps of `|s||p|`, i.e. a relative error in `u` of ~`1e-7 · |s|·|d| / (triangle size)`: on the
/// bunny (triangles ~1 mm seen from ~0.3 m) that is ~`3e-5`. `1e-3` leaves a margin of 30 while still
/// calling *wrong* any answer about a ray that passes well inside or well outside a triangle.
pub const GRAZE: f64 = 1e-3;

/// Relative difference under which two `f64` hit distances are the same point (a shared edge or
/// vertex): far above `f64` rounding (~`1e-15`), far below the spacing of distinct surfaces.
pub const SAME_T: f64 = 1e-9;

/// What one engine answered for a list of rays.
#[derive(Clone, Debug)]
pub struct Answers {
    /// The engine's name, for the report.
    pub name: String,
    /// Closest hit of each ray.
    pub closest: Vec<Option<HitRec>>,
    /// Any-hit answer of each ray.
    pub any: Vec<bool>,
}

/// The `f64` intersection of a ray with a triangle's *plane*, as `(t, u, v)` with `u` the weight of
/// `v1` and `v` of `v2`, whether or not the point is inside; `None` when the ray is parallel to the
/// plane or the triangle is degenerate (determinant exactly 0).
pub fn plane_hit_f64(ray: &Ray, [v0, v1, v2]: [DVec3; 3]) -> Option<(f64, f64, f64)> {
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let s = o - v0;
    let q = s.cross(e1);
    Some((e2.dot(q) / det, s.dot(p) / det, d.dot(q) / det))
}

/// How far inside the triangle the barycentrics `(u, v)` are: `min(1 - u - v, u, v)`, negative outside.
#[inline]
fn margin(u: f64, v: f64) -> f64 {
    (1.0 - u - v).min(u).min(v)
}

/// The reference answer for one ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefHit {
    /// Ray parameter, in units of the ray's direction.
    pub t: f64,
    /// Nearest triangle.
    pub prim: u32,
    /// Its [`margin`]: how far inside its triangle the hit lies, in barycentric terms.
    pub margin: f64,
}

/// The nearest hit of `ray` over all of `mesh`'s triangles, in `f64`, edges closed.
pub fn brute_force_f64(mesh: &Mesh, ray: &Ray) -> Option<RefHit> {
    let (t_min, t_max) = (ray.t_min as f64, ray.t_max as f64);
    let mut best: Option<RefHit> = None;
    for prim in 0..mesh.num_triangles() {
        let tri = mesh.triangle(prim).map(|p| p.as_dvec3());
        let Some((t, u, v)) = plane_hit_f64(ray, tri) else {
            continue;
        };
        let m = margin(u, v);
        if m >= 0.0 && t >= t_min && t <= t_max && best.is_none_or(|b| t < b.t) {
            best = Some(RefHit {
                t,
                prim: prim as u32,
                margin: m,
            });
        }
    }
    best
}

/// The judgement of one engine's answer on one ray (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Agrees with the `f64` reference.
    Right,
    /// Disagrees, about a ray within [`GRAZE`] of an edge.
    Grazing,
    /// Disagrees: an error.
    Wrong,
}

/// Judges a closest-hit answer against the reference.
pub fn judge_closest(
    mesh: &Mesh,
    ray: &Ray,
    answer: Option<HitRec>,
    reference: Option<RefHit>,
) -> Verdict {
    // How the engine's triangle looks in f64: the hit distance and how far inside it is.
    let engine_tri = |prim: u32| {
        plane_hit_f64(ray, mesh.triangle(prim as usize).map(|p| p.as_dvec3()))
            .map(|(t, u, v)| (t, margin(u, v)))
    };
    match (answer, reference) {
        (None, None) => Verdict::Right,
        (None, Some(r)) => {
            if r.margin < GRAZE {
                Verdict::Grazing
            } else {
                Verdict::Wrong
            }
        }
        (Some(h), None) => match engine_tri(h.prim) {
            Some((_, m)) if m > -GRAZE => Verdict::Grazing,
            _ => Verdict::Wrong,
        },
        (Some(h), Some(r)) => {
            if h.prim == r.prim {
                return Verdict::Right;
            }
            let Some((t, m)) = engine_tri(h.prim) else {
                return Verdict::Wrong;
            };
            let same_t = (t - r.t).abs() <= SAME_T * r.t.abs().max(t.abs());
            if same_t && m >= 0.0 {
                Verdict::Right
            } else if m > -GRAZE && (same_t || r.margin < GRAZE) {
                // A grazed neighbour at the same point, or a farther triangle behind a grazed one.
                Verdict::Grazing
            } else {
                Verdict::Wrong
            }
        }
    }
}

/// Judges an any-hit answer against the reference.
pub fn judge_any(mesh: &Mesh, ray: &Ray, answer: bool, reference: Option<RefHit>) -> Verdict {
    match (answer, reference) {
        (a, r) if a == r.is_some() => Verdict::Right,
        (false, Some(r)) if r.margin < GRAZE => Verdict::Grazing,
        (false, _) => Verdict::Wrong,
        // A hit the reference does not see: grazing if some triangle is within GRAZE of the ray.
        (true, _) => {
            let (t_min, t_max) = (ray.t_min as f64, ray.t_max as f64);
            let grazed = (0..mesh.num_triangles()).any(|prim| {
                plane_hit_f64(ray, mesh.triangle(prim).map(|p| p.as_dvec3()))
                    .is_some_and(|(t, u, v)| margin(u, v) > -GRAZE && t >= t_min && t <= t_max)
            });
            if grazed {
                Verdict::Grazing
            } else {
                Verdict::Wrong
            }
        }
    }
}

/// Verdict counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Answers that agree with the reference.
    pub right: usize,
    /// Wrong answers about rays that graze an edge.
    pub grazing: usize,
    /// Wrong answers.
    pub wrong: usize,
}

impl Tally {
    fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Right => self.right += 1,
            Verdict::Grazing => self.grazing += 1,
            Verdict::Wrong => self.wrong += 1,
        }
    }
}

/// One engine's line of the agreement report.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineAgreement {
    /// The engine's name.
    pub name: String,
    /// Rays with a closest hit.
    pub hits: usize,
    /// Rays whose any-hit answer is `true`.
    pub any_hits: usize,
    /// Rays where hit/miss differs from the first engine's.
    pub hit_miss_vs_first: usize,
    /// Rays both hit, on different triangles than the first engine's.
    pub prim_vs_first: usize,
    /// Rays where this engine's any-hit answer differs from its own closest hit's existence.
    pub any_vs_closest: usize,
    /// Verdicts on this engine's closest hits, over the disputed rays checked.
    pub closest: Tally,
    /// Verdicts on this engine's any-hit answers, over the disputed rays checked.
    pub any: Tally,
}

/// The agreement report over one ray set.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// Rays compared.
    pub rays: usize,
    /// Rays on which the answers were not unanimous.
    pub disputed: usize,
    /// Disputed rays cast with the `f64` brute force (all of them, up to the cap).
    pub checked: usize,
    /// One line per engine, in the order given.
    pub engines: Vec<EngineAgreement>,
}

impl Agreement {
    /// `true` when no engine has a *wrong* verdict.
    pub fn no_errors(&self) -> bool {
        self.engines
            .iter()
            .all(|e| e.closest.wrong == 0 && e.any.wrong == 0)
    }
}

/// Compares the engines' answers on `rays` and settles up to `max_checked` disputed rays (evenly
/// spread over them) with the `f64` brute force, on the current rayon pool.
///
/// # Panics
/// When an answer list's length differs from `rays.len()` (a harness bug, not user data).
pub fn compare(mesh: &Mesh, rays: &[Ray], answers: &[Answers], max_checked: usize) -> Agreement {
    for a in answers {
        assert_eq!(a.closest.len(), rays.len(), "{}: closest answers", a.name);
        assert_eq!(a.any.len(), rays.len(), "{}: any answers", a.name);
    }
    let disputed: Vec<usize> = (0..rays.len())
        .filter(|&i| {
            let first = &answers[0];
            answers.iter().any(|a| {
                a.closest[i].is_some() != first.closest[i].is_some()
                    || a.closest[i].map(|h| h.prim) != first.closest[i].map(|h| h.prim)
                    || a.any[i] != first.any[i]
                    || a.any[i] != a.closest[i].is_some()
            })
        })
        .collect();
    let checked: Vec<usize> = if disputed.len() <= max_checked {
        disputed.clone()
    } else {
        (0..max_checked)
            .map(|k| disputed[k * disputed.len() / max_checked])
            .collect()
    };
    let references: Vec<Option<RefHit>> = checked
        .par_iter()
        .map(|&i| brute_force_f64(mesh, &rays[i]))
        .collect();

    let first = &answers[0];
    let engines = answers
        .iter()
        .map(|a| {
            let mut line = EngineAgreement {
                name: a.name.clone(),
                hits: a.closest.iter().filter(|h| h.is_some()).count(),
                any_hits: a.any.iter().filter(|&&h| h).count(),
                hit_miss_vs_first: 0,
                prim_vs_first: 0,
                any_vs_closest: 0,
                closest: Tally::default(),
                any: Tally::default(),
            };
            for i in 0..rays.len() {
                match (a.closest[i], first.closest[i]) {
                    (Some(x), Some(y)) if x.prim != y.prim => line.prim_vs_first += 1,
                    (x, y) if x.is_some() != y.is_some() => line.hit_miss_vs_first += 1,
                    _ => {}
                }
                line.any_vs_closest += usize::from(a.any[i] != a.closest[i].is_some());
            }
            for (&i, &r) in checked.iter().zip(&references) {
                line.closest
                    .add(judge_closest(mesh, &rays[i], a.closest[i], r));
                line.any.add(judge_any(mesh, &rays[i], a.any[i], r));
            }
            line
        })
        .collect();
    Agreement {
        rays: rays.len(),
        disputed: disputed.len(),
        checked: checked.len(),
        engines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// Two triangles forming the unit square in z = 0 (shared edge along the diagonal), and one more
    /// at z = -1 below them.
    fn square() -> Mesh {
        Mesh {
            vertices: vec![
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 0.0, -1.0),
                Vec3::new(1.0, 0.0, -1.0),
                Vec3::new(0.0, 1.0, -1.0),
            ],
            indices: vec![[0, 1, 2], [0, 2, 3], [4, 5, 6]],
        }
    }

    fn down(x: f32, y: f32) -> Ray {
        Ray::new(Vec3::new(x, y, 1.0), Vec3::NEG_Z)
    }

    #[test]
    fn brute_force_finds_the_nearest_triangle() {
        let mesh = square();
        let r = brute_force_f64(&mesh, &down(0.7, 0.2)).unwrap();
        assert_eq!((r.prim, r.t), (0, 1.0));
        assert!((r.margin - 0.2).abs() < 1e-7, "{r:?}");
        assert_eq!(brute_force_f64(&mesh, &down(0.2, 0.7)).unwrap().prim, 1);
        assert_eq!(brute_force_f64(&mesh, &down(2.0, 0.5)), None);
        let up = Ray::new(Vec3::new(0.2, 0.1, -2.0), Vec3::Z);
        assert_eq!(brute_force_f64(&mesh, &up).unwrap().prim, 2);
    }

    #[test]
    fn verdicts() {
        let mesh = square();
        let ray = down(0.7, 0.2);
        let r = brute_force_f64(&mesh, &ray);
        let hit = |prim| Some(HitRec { t: 1.0, prim });
        assert_eq!(judge_closest(&mesh, &ray, hit(0), r), Verdict::Right);
        assert_eq!(judge_closest(&mesh, &ray, hit(1), r), Verdict::Wrong);
        assert_eq!(judge_closest(&mesh, &ray, hit(2), r), Verdict::Wrong);
        assert_eq!(judge_closest(&mesh, &ray, None, r), Verdict::Wrong);
        assert_eq!(judge_any(&mesh, &ray, true, r), Verdict::Right);
        assert_eq!(judge_any(&mesh, &ray, false, r), Verdict::Wrong);

        // On the shared diagonal both triangles are right.
        let diag = down(0.5, 0.5);
        let r = brute_force_f64(&mesh, &diag);
        assert_eq!(judge_closest(&mesh, &diag, hit(0), r), Verdict::Right);
        assert_eq!(judge_closest(&mesh, &diag, hit(1), r), Verdict::Right);

        // Just outside the square's edge x = 1: a hit on it is grazing, a miss is right.
        let outside = down(1.0 + 1e-5, 0.5);
        let r = brute_force_f64(&mesh, &outside);
        assert_eq!(r, None);
        assert_eq!(judge_closest(&mesh, &outside, None, r), Verdict::Right);
        assert_eq!(judge_closest(&mesh, &outside, hit(0), r), Verdict::Grazing);
        assert_eq!(judge_any(&mesh, &outside, true, r), Verdict::Grazing);
        // Well outside, a hit is wrong.
        let far = down(1.5, 0.5);
        assert_eq!(judge_closest(&mesh, &far, hit(0), None), Verdict::Wrong);
        assert_eq!(judge_any(&mesh, &far, true, None), Verdict::Wrong);

        // Just inside the edge: missing is grazing; hitting the triangle below instead is grazing.
        let inside = down(1.0 - 1e-5, 0.5);
        let r = brute_force_f64(&mesh, &inside);
        assert_eq!(r.map(|r| r.prim), Some(0));
        assert_eq!(judge_closest(&mesh, &inside, None, r), Verdict::Grazing);
        let below = Some(HitRec { t: 2.0, prim: 2 });
        assert_eq!(
            judge_closest(&mesh, &inside, below, r),
            Verdict::Wrong,
            "x = 1 is outside prim 2"
        );
        let inside_both = down(1e-5, 0.5);
        let r = brute_force_f64(&mesh, &inside_both);
        assert_eq!(
            judge_closest(&mesh, &inside_both, below, r),
            Verdict::Grazing
        );
    }

    #[test]
    fn compare_counts_disputes_and_blames_the_wrong_engine() {
        let mesh = square();
        let rays: Vec<Ray> = [(0.7, 0.2), (0.2, 0.7), (2.0, 0.5), (0.3, 0.1)]
            .iter()
            .map(|&(x, y)| down(x, y))
            .collect();
        let truth: Vec<Option<HitRec>> = rays
            .iter()
            .map(|r| {
                brute_force_f64(&mesh, r).map(|h| HitRec {
                    t: h.t as f32,
                    prim: h.prim,
                })
            })
            .collect();
        let good = Answers {
            name: "good".into(),
            any: truth.iter().map(Option::is_some).collect(),
            closest: truth.clone(),
        };
        let mut bad = good.clone();
        bad.name = "bad".into();
        bad.closest[1] = Some(HitRec { t: 2.0, prim: 2 }); // behind the nearest
        bad.any[2] = true; // a miss reported as a hit
        let report = compare(&mesh, &rays, &[good.clone(), bad, good.clone()], 100);
        assert_eq!((report.rays, report.disputed, report.checked), (4, 2, 2));
        let [g, b, g2] = &report.engines[..] else {
            panic!("three lines")
        };
        assert_eq!(g, g2);
        assert_eq!(
            (g.hits, g.closest.right, g.closest.wrong, g.any.wrong),
            (3, 2, 0, 0)
        );
        assert_eq!(
            (b.prim_vs_first, b.hit_miss_vs_first, b.any_vs_closest),
            (1, 0, 1)
        );
        assert_eq!((b.closest.wrong, b.any.wrong), (1, 1));
        assert!(!report.no_errors());

        let capped = compare(&mesh, &rays, &[good.clone(), good], 1);
        assert_eq!((capped.disputed, capped.checked), (0, 0));
        assert!(capped.no_errors());
    }
}
