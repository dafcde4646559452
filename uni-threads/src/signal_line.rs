//! A line of text built without allocating, for signal handlers (the
//! stack guard's and the migration checker's fault reports).

/// A line built without allocating (for signal handlers).
pub(crate) struct Line {
    buf: [u8; 600],
    len: usize,
}

impl Line {
    pub(crate) fn new() -> Line {
        Line { buf: [0; 600], len: 0 }
    }

    pub(crate) fn text(&mut self, s: &str) -> &mut Line {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        self
    }

    pub(crate) fn dec(&mut self, mut v: u64) -> &mut Line {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // ASCII digits are always UTF-8.
        self.text(std::str::from_utf8(&digits[i..]).unwrap_or("?"))
    }

    pub(crate) fn hex(&mut self, v: u64) -> &mut Line {
        let mut digits = [0u8; 18];
        digits[0] = b'0';
        digits[1] = b'x';
        for (i, d) in digits[2..].iter_mut().enumerate() {
            let nibble = (v >> (60 - 4 * i)) & 0xf;
            *d = b"0123456789abcdef"[nibble as usize];
        }
        self.text(std::str::from_utf8(&digits).unwrap_or("?"))
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_format_numbers_without_allocating() {
        let mut l = Line::new();
        l.text("rank ")
            .dec(12)
            .text(" at ")
            .hex(0x1000_0000_0000)
            .text(" ")
            .dec(0);
        assert_eq!(l.bytes(), b"rank 12 at 0x0000100000000000 0");
    }
}
