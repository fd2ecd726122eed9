//! A quantity measured on both sides of a comparison.

/// One quantity in BASE and in HEAD: a class's count or size, a retained size, a
/// function's time, a total. Its delta is always head − base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Change {
    /// The value in BASE.
    pub base: u64,
    /// The value in HEAD.
    pub head: u64,
}

impl Change {
    /// A quantity that is `base` in BASE and `head` in HEAD.
    pub const fn new(base: u64, head: u64) -> Change {
        Change { base, head }
    }

    /// head − base, saturating far beyond any real heap or profile.
    pub fn delta(self) -> i64 {
        delta(self.base, self.head)
    }

    /// Whether the two sides are equal.
    pub fn is_unchanged(self) -> bool {
        self.base == self.head
    }
}

impl std::ops::AddAssign for Change {
    fn add_assign(&mut self, other: Change) {
        self.base += other.base;
        self.head += other.head;
    }
}

/// head − base as a signed number, saturating far beyond any real heap or profile.
pub fn delta(base: u64, head: u64) -> i64 {
    let d = i128::from(head) - i128::from(base);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_are_signed_and_saturate() {
        assert_eq!(Change::new(10, 4).delta(), -6);
        assert_eq!(Change::new(4, 10).delta(), 6);
        assert_eq!(Change::new(0, u64::MAX).delta(), i64::MAX);
        assert_eq!(Change::new(u64::MAX, 0).delta(), i64::MIN);
        let mut c = Change::new(1, 2);
        c += Change::new(10, 20);
        assert_eq!(c, Change::new(11, 22));
    }
}
