//! A column of unsigned integers that takes four bytes a value until one needs eight.
//!
//! Object ids and self sizes of a V8 or ArkTS heap snapshot almost always fit 32 bits, and
//! halving those two columns is a third of the memory a parsed snapshot needs.

/// Values in `u32` until one is wider, then all in `u64`.
#[derive(Debug, Clone)]
pub enum Column {
    /// Every value fits `u32`.
    Narrow(Vec<u32>),
    /// At least one value needed `u64`; all are kept so.
    Wide(Vec<u64>),
}

impl Default for Column {
    fn default() -> Self {
        Column::Narrow(Vec::new())
    }
}

impl Column {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::Narrow(v) => v.len(),
            Column::Wide(v) => v.len(),
        }
    }

    /// Whether the column has no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reserves room for `additional` more values in the current width.
    pub fn reserve(&mut self, additional: usize) {
        match self {
            Column::Narrow(v) => v.reserve(additional),
            Column::Wide(v) => v.reserve(additional),
        }
    }

    /// The value at `index`; panics past the end, as slice indexing does.
    #[inline]
    pub fn get(&self, index: usize) -> u64 {
        match self {
            Column::Narrow(v) => u64::from(v[index]),
            Column::Wide(v) => v[index],
        }
    }

    /// Appends a value, widening the column to `u64` when the value does not fit `u32`.
    #[inline]
    pub fn push(&mut self, value: u64) {
        match self {
            Column::Narrow(v) => {
                if let Ok(narrow) = u32::try_from(value) {
                    v.push(narrow);
                } else {
                    self.widen(value);
                }
            }
            Column::Wide(v) => v.push(value),
        }
    }

    /// Makes a narrow column wide, with `value` after its values.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, value: u64) {
        if let Column::Narrow(v) = self {
            let mut wide: Vec<u64> = Vec::with_capacity(v.capacity().max(v.len() + 1));
            wide.extend(v.iter().map(|&x| u64::from(x)));
            wide.push(value);
            *self = Column::Wide(wide);
        }
    }

    /// The values in order, each as `u64`.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The values copied out as `u64`.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }

    /// Whether every value fits 32 bits.
    pub fn is_narrow(&self) -> bool {
        matches!(self, Column::Narrow(_))
    }
}

impl FromIterator<u64> for Column {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        let mut column = Column::default();
        for value in iter {
            column.push(value);
        }
        column
    }
}

impl From<Vec<u64>> for Column {
    fn from(values: Vec<u64>) -> Self {
        values.into_iter().collect()
    }
}

impl PartialEq for Column {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<u64>> for Column {
    fn eq(&self, other: &Vec<u64>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widens_on_the_first_wide_value_and_keeps_every_value() {
        let mut c = Column::default();
        c.push(7);
        c.push(u64::from(u32::MAX));
        assert!(c.is_narrow());
        c.push(1 << 40);
        c.push(3);
        assert!(!c.is_narrow());
        assert_eq!(c, vec![7, u64::from(u32::MAX), 1 << 40, 3]);
        assert_eq!(c.get(2), 1 << 40);
        assert_eq!(c.len(), 4);
    }
}
