//! A small JSON writer for the scene summaries (no serde: it would double the module's size for
//! two documents).

use std::fmt::Write;

/// A JSON document being written. Callers put the commas; values are written by the methods.
#[derive(Default)]
pub struct Json {
    out: String,
}

impl Json {
    /// Raw punctuation or a key already known to be plain (`"a":`).
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.out.push_str(s);
        self
    }

    /// A number: `f32`'s shortest decimal that reads back as the same `f32` (so
    /// `Math.fround(JSON value)` is the value), `null` for NaN and infinities.
    pub fn num(&mut self, x: f32) -> &mut Self {
        if x.is_finite() {
            let _ = write!(self.out, "{x}");
        } else {
            self.out.push_str("null");
        }
        self
    }

    /// An unsigned integer.
    pub fn int(&mut self, x: u64) -> &mut Self {
        let _ = write!(self.out, "{x}");
        self
    }

    /// A string, escaped; `null` for `None`.
    pub fn string(&mut self, s: Option<&str>) -> &mut Self {
        let Some(s) = s else {
            self.out.push_str("null");
            return self;
        };
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
        self
    }

    /// An array of numbers.
    pub fn nums(&mut self, xs: &[f32]) -> &mut Self {
        self.out.push('[');
        for (i, &x) in xs.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.num(x);
        }
        self.out.push(']');
        self
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_valid_json() {
        let mut j = Json::default();
        j.raw("{\"a\":")
            .nums(&[0.1, f32::NAN, -3.0, 1e-30])
            .raw(",\"s\":")
            .string(Some("q\"\\\u{1}é"))
            .raw(",\"n\":")
            .string(None)
            .raw("}");
        assert_eq!(
            j.finish(),
            "{\"a\":[0.1,null,-3,0.000000000000000000000000000001],\"s\":\"q\\\"\\\\\\u0001é\",\"n\":null}"
        );
    }
}
