//! Reading a rawheap file in order through a buffer, and at two places at once.

use std::io::{Read, Seek, SeekFrom};

use super::{RawheapError, err};

/// How much of the file is read at a time.
const CHUNK: usize = 1 << 20;

/// Bytes `[from, to)` of a file in order, read a buffer at a time.
pub(super) struct Bytes<'f, R> {
    file: &'f mut R,
    /// Bytes of the range not read yet.
    left: usize,
    buf: Vec<u8>,
    pos: usize,
    /// The file offset of `buf[0]`.
    base: usize,
}

impl<'f, R: Read + Seek> Bytes<'f, R> {
    pub(super) fn new(file: &'f mut R, from: usize, to: usize) -> Result<Self, RawheapError> {
        file.seek(SeekFrom::Start(from as u64))
            .map_err(|e| io_error(from, &e))?;
        Ok(Bytes {
            file,
            left: to.saturating_sub(from),
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            base: from,
        })
    }

    /// At least `n` bytes from the current position, fewer only where the range ends;
    /// and whether the range ends with them.
    #[inline]
    pub(super) fn have(&mut self, n: usize) -> Result<(&[u8], bool), RawheapError> {
        if self.buf.len() - self.pos < n && self.left > 0 {
            self.refill(n)?;
        }
        Ok((&self.buf[self.pos..], self.left == 0))
    }

    #[cold]
    fn refill(&mut self, n: usize) -> Result<(), RawheapError> {
        self.buf.drain(..self.pos);
        self.base += self.pos;
        self.pos = 0;
        while self.buf.len() < n && self.left > 0 {
            let want = CHUNK.max(n - self.buf.len()).min(self.left);
            let at = self.base + self.buf.len();
            let got = (&mut *self.file)
                .take(want as u64)
                .read_to_end(&mut self.buf)
                .map_err(|e| io_error(at, &e))?;
            if got == 0 {
                return err("file", at, "the file ended while it was read");
            }
            self.left -= got;
        }
        Ok(())
    }

    /// The file offset of the current position.
    pub(super) fn at(&self) -> usize {
        self.base + self.pos
    }

    /// Moves forward to the file offset `to` (at or past the current position, inside
    /// the range).
    #[inline]
    pub(super) fn forward(&mut self, to: usize) -> Result<(), RawheapError> {
        let ahead = to - self.at();
        if ahead <= self.buf.len() - self.pos {
            self.pos += ahead;
            return Ok(());
        }
        let read_to = self.base + self.buf.len();
        self.left -= to - read_to;
        self.buf.clear();
        self.pos = 0;
        self.base = to;
        self.file
            .seek(SeekFrom::Start(to as u64))
            .map(|_| ())
            .map_err(|e| io_error(to, &e))
    }

    /// The `n` bytes at file offset `at`, read aside (the position is kept); None where
    /// the file has fewer.
    pub(super) fn aside(&mut self, at: usize, n: usize) -> Result<Option<Vec<u8>>, RawheapError> {
        let back = self.base + self.buf.len();
        let mut bytes = Vec::with_capacity(n);
        let read = self
            .file
            .seek(SeekFrom::Start(at as u64))
            .and_then(|_| (&mut *self.file).take(n as u64).read_to_end(&mut bytes));
        self.file
            .seek(SeekFrom::Start(back as u64))
            .map_err(|e| io_error(back, &e))?;
        read.map_err(|e| io_error(at, &e))?;
        Ok((bytes.len() == n).then_some(bytes))
    }

    pub(super) fn skip(&mut self, n: usize) {
        self.pos += n;
    }

    /// Hands the next `count` items of `item` bytes to `each`, in order, with each one's
    /// index and file offset; as many at a time as the buffer holds.
    pub(super) fn items(
        &mut self,
        count: usize,
        item: usize,
        mut each: impl FnMut(usize, usize, &[u8]) -> Result<(), RawheapError>,
    ) -> Result<(), RawheapError> {
        let mut done = 0;
        while done < count {
            let at = self.at();
            let (b, _) = self.have(item)?;
            let n = (b.len() / item).min(count - done);
            for (k, b) in b.chunks_exact(item).take(n).enumerate() {
                each(done + k, at + k * item, b)?;
            }
            self.skip(n * item);
            done += n;
        }
        Ok(())
    }
}

/// A file that is read at two places at once, or by a second thread: [`Twin::twin`]
/// gives a reader of the same bytes at a position of its own.
pub trait Twin: Read + Seek + Send + Sized {
    /// A reader of the same file at a position of its own.
    #[must_use]
    fn twin(&self) -> Self;
}

impl Twin for std::io::Cursor<&[u8]> {
    fn twin(&self) -> Self {
        std::io::Cursor::new(*self.get_ref())
    }
}

impl Twin for crate::input::PosReader<'_> {
    fn twin(&self) -> Self {
        self.clone()
    }
}

/// Reads `[from, to)` of the file into the same place of `data`.
pub(super) fn fill<R: Read + Seek>(
    file: &mut R,
    data: &mut [u8],
    from: usize,
    to: usize,
) -> Result<(), RawheapError> {
    if from >= to {
        return Ok(());
    }
    file.seek(SeekFrom::Start(from as u64))
        .and_then(|_| file.read_exact(&mut data[from..to]))
        .map_err(|e| io_error(from, &e))
}

/// The whole file, its two halves read at once on two threads where `two` and the file
/// is large (the kernel's work of giving the buffer its memory is then shared too).
pub(super) fn read_whole<R: Twin>(
    file: &mut R,
    len: usize,
    two: bool,
) -> Result<Vec<u8>, RawheapError> {
    const LARGE: usize = 8 << 20;
    if !two || len < LARGE {
        return read_at(file, 0, len);
    }
    let mut data = vec![0; len];
    let half = len / 2;
    let (first, second) = data.split_at_mut(half);
    let mut twin = file.twin();
    let read_into = |file: &mut R, at: usize, into: &mut [u8]| {
        file.seek(SeekFrom::Start(at as u64))
            .and_then(|_| file.read_exact(into))
            .map_err(|e| io_error(at, &e))
    };
    std::thread::scope(|s| {
        let later = s.spawn(|| read_into(&mut twin, half, second));
        let earlier = read_into(file, 0, first);
        let later = later.join().unwrap_or_else(|_| {
            Err(io_error(
                half,
                &std::io::Error::other("the reading thread failed"),
            ))
        });
        earlier.and(later)
    })?;
    Ok(data)
}

/// The error of a failed read at `at`.
pub(super) fn io_error(at: usize, e: &std::io::Error) -> RawheapError {
    RawheapError {
        section: "file",
        offset: at as u64,
        message: format!("cannot read: {e}"),
    }
}

/// `n` bytes of a file from `at`.
pub(super) fn read_at<R: Read + Seek>(
    file: &mut R,
    at: usize,
    n: usize,
) -> Result<Vec<u8>, RawheapError> {
    let mut bytes = vec![0; n];
    file.seek(SeekFrom::Start(at as u64))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| io_error(at, &e))?;
    Ok(bytes)
}

#[inline]
pub(super) fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
