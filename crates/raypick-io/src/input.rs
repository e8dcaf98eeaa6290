//! Reading a model a piece at a time: text line by line, binary records one by one, so that a file
//! is rejected at its first bad line or record, or right after its header, and never has to be in
//! memory whole (glTF, which needs its whole JSON document, is the exception; see
//! [`crate::Limits`] for the byte budget that bounds it).

use std::io::{BufRead, Read};

use crate::error::{Err, Location};
use crate::LoadError;

/// The longest line a text format may have: 1 MiB (an OBJ face of 100,000 corners fits). A longer
/// line means the file is not text (a binary file read as OBJ, a file of zeros), and reading it
/// whole could take all the memory there is.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Lines of a text file, with 1-based numbers. A NUL byte or a line longer than [`MAX_LINE`] is an
/// error at that line, found while the line is read.
pub(crate) struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: usize,
    e: Err,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader`, whose errors say `e.format`; `first` is the number of the line before the
    /// first one read (0 at the start of a file).
    pub(crate) fn new(reader: R, e: Err, first: usize) -> Self {
        Self {
            reader,
            line: Vec::new(),
            number: first,
            e,
        }
    }

    /// The number of the last line returned.
    pub(crate) fn number(&self) -> usize {
        self.number
    }

    /// The next line, without its `\n` (a `\r` before it stays: callers trim white space), or
    /// `None` at the end of the file.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &[u8])>, LoadError> {
        self.line.clear();
        let mut ended = false;
        let mut any = false;
        while !ended {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(self.e.io(error)),
            };
            if available.is_empty() {
                break;
            }
            any = true;
            let (chunk, used) = match available.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    ended = true;
                    (&available[..end], end + 1)
                }
                None => (available, available.len()),
            };
            let at = Location::Line(self.number + 1);
            if chunk.contains(&0) {
                return Err(self
                    .e
                    .malformed(at, "a NUL byte: this is binary data, not a text file"));
            }
            if self.line.len() + chunk.len() > MAX_LINE {
                return Err(self.e.malformed(
                    at,
                    format!(
                        "the line is longer than {MAX_LINE} bytes: this is not a text model file"
                    ),
                ));
            }
            self.line.extend_from_slice(chunk);
            self.reader.consume(used);
        }
        if !any {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some((self.number, &self.line)))
    }

    /// The next line that is not blank, trimmed, or `None` at the end of the file.
    pub(crate) fn next_nonblank(&mut self) -> Result<Option<(usize, &[u8])>, LoadError> {
        loop {
            match self.next_line()? {
                None => return Ok(None),
                Some((_, line)) if line.trim_ascii().is_empty() => continue,
                Some(_) => break,
            }
        }
        Ok(Some((self.number, self.line.trim_ascii())))
    }
}

/// A reader that counts the bytes read through it, so a binary record's error can name its offset.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) position: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.position += n as u64;
        Ok(n)
    }
}

/// Reads up to `n` bytes (fewer only at the end of the file).
pub(crate) fn read_up_to(reader: &mut impl Read, n: usize, e: &Err) -> Result<Vec<u8>, LoadError> {
    let mut bytes = Vec::with_capacity(n);
    reader
        .take(n as u64)
        .read_to_end(&mut bytes)
        .map_err(|error| e.io(error))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Format;

    const E: Err = Err {
        format: Format::Obj,
    };

    #[test]
    fn lines_are_numbered_and_bounded() {
        let mut lines = Lines::new(&b"a\r\n\nb"[..], E, 0);
        assert_eq!(lines.next_line().unwrap(), Some((1, &b"a\r"[..])));
        assert_eq!(lines.next_line().unwrap(), Some((2, &b""[..])));
        assert_eq!(lines.next_line().unwrap(), Some((3, &b"b"[..])));
        assert_eq!(lines.next_line().unwrap(), None);

        let mut lines = Lines::new(&b"\n  \n x \n"[..], E, 10);
        assert_eq!(lines.next_nonblank().unwrap(), Some((13, &b"x"[..])));
        assert_eq!(lines.next_nonblank().unwrap(), None);

        let mut lines = Lines::new(&b"ok\nv 0\x00 0\n"[..], E, 0);
        assert!(lines.next_nonblank().is_ok());
        let error = lines.next_line().unwrap_err();
        assert_eq!(error.location(), Some(&Location::Line(2)), "{error}");

        // A line longer than the limit is refused without reading past it.
        let long = vec![b'x'; MAX_LINE + 10];
        let mut reader = std::io::BufReader::with_capacity(4096, &long[..]);
        let error = Lines::new(&mut reader, E, 0).next_line().unwrap_err();
        assert!(error.to_string().contains("longer than"), "{error}");
        assert!(reader.buffer().len() < long.len());
    }
}
