//! Objects by address.

use hashbrown::HashMap;

use super::graph::Obj;

/// Objects by address. When the addresses span less than 4 GiB, each packs (less the
/// lowest) with its object into one word of an open-addressing table, so that a lookup
/// costs one memory access; otherwise they go to a hash map. The table's home slot keeps
/// address order where the addresses spread evenly enough (nearby addresses, nearby
/// slots, so that lookups in address order stay in cache) and scatters them otherwise.
/// A repeated address names its last object.
#[derive(Default)]
pub(super) enum AddrIndex {
    #[default]
    Empty,
    Packed {
        slots: Vec<u64>,
        base: u64,
        /// `Some(shift)`: the home slot is the offset shifted right; `None`: scattered.
        linear: Option<u32>,
        shift: u32,
    },
    Wide(HashMap<u64, u32>),
}

pub(super) const EMPTY_SLOT: u64 = u64::MAX;

impl AddrIndex {
    pub(super) fn new(objs: &[Obj]) -> AddrIndex {
        Self::of(objs.len(), |i| objs[i].addr)
    }

    /// The index of `len` objects, the `i`th at `addr(i)`.
    pub(super) fn of(len: usize, addr: impl Fn(usize) -> u64 + Copy) -> AddrIndex {
        Self::of_in(len, addr, Vec::new())
    }

    /// The slots of the table of `len` objects (when their addresses span less than 4 GiB).
    pub(super) fn slots_for(len: usize) -> usize {
        // At least one and a half slots an object: a table a third to two thirds full.
        1 << (len + len / 2).next_power_of_two().trailing_zeros().max(4)
    }

    /// [`AddrIndex::of`], in `slots` if they are the table's, all empty.
    pub(super) fn of_in(
        len: usize,
        addr: impl Fn(usize) -> u64 + Copy,
        slots: Vec<u64>,
    ) -> AddrIndex {
        let base = (0..len).map(addr).min().unwrap_or(0);
        let top = (0..len).map(addr).max().unwrap_or(0);
        let packable = len < (u32::MAX as usize) / 4 && top - base < u64::from(u32::MAX);
        if !packable {
            let mut map = HashMap::with_capacity(len);
            for i in 0..len {
                map.insert(addr(i), u32::try_from(i).unwrap_or(u32::MAX));
            }
            return AddrIndex::Wide(map);
        }
        let bits = Self::slots_for(len).trailing_zeros();
        let shift = 64 - bits;
        // The smallest shift that maps every offset into the table.
        let span_bits = 64 - (top - base).leading_zeros();
        let linear = span_bits.saturating_sub(bits);
        let mut slots = if slots.len() == 1 << bits {
            slots
        } else {
            vec![EMPTY_SLOT; 1 << bits]
        };
        // Addresses that crowd into part of their span make long runs of taken slots;
        // past an average of 4 probes a lookup, the table is made again scattered.
        if Self::fill(&mut slots, (len, addr), base, Some(linear), shift) > len * 4 {
            slots.fill(EMPTY_SLOT);
            Self::fill(&mut slots, (len, addr), base, None, shift);
            return AddrIndex::Packed {
                slots,
                base,
                linear: None,
                shift,
            };
        }
        AddrIndex::Packed {
            slots,
            base,
            linear: Some(linear),
            shift,
        }
    }

    /// Fills the table; returns the probes it took.
    pub(super) fn fill(
        slots: &mut [u64],
        (len, addr): (usize, impl Fn(usize) -> u64),
        base: u64,
        linear: Option<u32>,
        shift: u32,
    ) -> usize {
        let mask = slots.len() - 1;
        let mut probes = 0;
        for i in 0..len {
            let off = addr(i) - base;
            let mut at = Self::home(off, linear, shift, mask);
            loop {
                probes += 1;
                let slot = slots[at];
                if slot == EMPTY_SLOT || slot >> 32 == off {
                    slots[at] = off << 32 | i as u64;
                    break;
                }
                at = (at + 1) & mask;
            }
            if linear.is_some() && probes > len * 4 {
                break;
            }
        }
        probes
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the shift or the mask leaves the table's bits
    pub(super) fn home(off: u64, linear: Option<u32>, shift: u32, mask: usize) -> usize {
        match linear {
            Some(s) => (off >> s) as usize & mask,
            None => (off.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize,
        }
    }

    /// The object at an address.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the low half of a slot is the object
    pub(super) fn get(&self, addr: u64) -> Option<u32> {
        match self {
            AddrIndex::Empty => None,
            AddrIndex::Wide(map) => map.get(&addr).copied(),
            AddrIndex::Packed {
                slots,
                base,
                linear,
                shift,
            } => {
                let off = addr.checked_sub(*base)?;
                if off >= u64::from(u32::MAX) {
                    return None;
                }
                let mask = slots.len() - 1;
                let mut at = Self::home(off, *linear, *shift, mask);
                loop {
                    let slot = slots[at];
                    if slot == EMPTY_SLOT {
                        return None;
                    }
                    if slot >> 32 == off {
                        return Some(slot as u32);
                    }
                    at = (at + 1) & mask;
                }
            }
        }
    }
}

/// Each object's string-table name (`NO_NAME` for none), found without an address index
/// (version 2): the table's addresses (32 bits) with their objects are sorted once, which
/// costs little as writers dump objects mostly in address order; names list their objects
/// in address order too, so each search is a short step forward from the last.
pub(super) fn names_by_address(
    addrs: impl Iterator<Item = u64>,
    count: usize,
    named: impl Iterator<Item = (u64, u32)>,
) -> Vec<u32> {
    let mut sorted: Vec<u64> = Vec::with_capacity(count);
    sorted.extend(addrs.enumerate().map(|(i, a)| a << 32 | i as u64));
    // The stable sort merges the runs already in order, which the unstable one does not.
    #[allow(clippy::stable_sort_primitive)]
    sorted.sort();
    let mut found = vec![NO_NAME; count];
    let mut hint = 0;
    for (addr, name) in named {
        if let Some(i) = find_sorted(&sorted, addr, &mut hint) {
            found[i] = name;
        }
    }
    found
}

/// No string-table name.
pub(super) const NO_NAME: u32 = u32::MAX;

/// The object at a 32-bit address in a sorted list of `address << 32 | object`; of
/// objects that share an address, the last (as the address index has it). The search
/// gallops forward from `hint` (where the last search ended) when the address lies past
/// it, and otherwise searches the whole list.
#[allow(clippy::cast_possible_truncation)] // the low half of an entry is the object
pub(super) fn find_sorted(sorted: &[u64], addr: u64, hint: &mut usize) -> Option<usize> {
    if addr >= 1 << 32 {
        return None;
    }
    let key = addr << 32;
    let (mut lo, mut hi) = (0, sorted.len());
    if sorted.get(*hint).is_some_and(|&e| e < key) {
        lo = *hint;
        let mut step = 1;
        while lo + step < sorted.len() && sorted[lo + step] < key {
            lo += step;
            step *= 2;
        }
        hi = (lo + step + 1).min(sorted.len());
    }
    let mut i = lo + sorted[lo..hi].partition_point(|&e| e < key);
    *hint = i.saturating_sub(1);
    if sorted.get(i).is_none_or(|&e| e >> 32 != addr) {
        return None;
    }
    while sorted.get(i + 1).is_some_and(|&e| e >> 32 == addr) {
        i += 1;
    }
    Some((sorted[i] & 0xFFFF_FFFF) as usize)
}

/// Each object's string-table name, as [`names_by_address`] finds it. Where the addresses
/// are dense, through a table by address; else where they only grow (as writers dump
/// them), they are searched as they are, forward from where the last search ended, without
/// a sorted copy.
pub(super) fn match_names(addrs: &[u32], named: &[u64]) -> Vec<u32> {
    #[allow(clippy::cast_possible_truncation)] // the low half is the name
    let unpack = |&e: &u64| (e >> 32, e as u32);
    if let Some(found) = match_dense(addrs, named) {
        return found;
    }
    if !addrs.windows(2).all(|w| w[0] < w[1]) {
        return names_by_address(
            addrs.iter().map(|&a| u64::from(a)),
            addrs.len(),
            named.iter().map(unpack),
        );
    }
    let mut found = vec![NO_NAME; addrs.len()];
    let mut hint = 0;
    for (addr, name) in named.iter().map(unpack) {
        let Ok(addr) = u32::try_from(addr) else {
            continue;
        };
        let (mut lo, mut hi) = (0, addrs.len());
        if addrs.get(hint).is_some_and(|&a| a < addr) {
            // Gallop forward from the last place.
            lo = hint;
            let mut step = 1;
            while lo + step < addrs.len() && addrs[lo + step] < addr {
                lo += step;
                step *= 2;
            }
            hi = (lo + step + 1).min(addrs.len());
        }
        let i = lo + addrs[lo..hi].partition_point(|&a| a < addr);
        hint = i.saturating_sub(1);
        if addrs.get(i) == Some(&addr) {
            found[i] = name;
        }
    }
    found
}

/// [`match_names`] through a table with a slot per possible address, when the addresses
/// (less the lowest, in steps of their common alignment) need at most two slots an object:
/// version-2 addresses are handed out one after the other.
fn match_dense(addrs: &[u32], named: &[u64]) -> Option<Vec<u32>> {
    let low = *addrs.iter().min()?;
    let high = *addrs.iter().max()?;
    let step = addrs
        .iter()
        .fold(0, |bits, &a| bits | (a - low))
        .trailing_zeros()
        .min(31);
    let slots = ((high - low) >> step) as usize + 1;
    if slots > 2 * addrs.len() + 64 {
        return None;
    }
    let mut table = vec![NO_NAME; slots];
    for (i, &a) in addrs.iter().enumerate() {
        // The last object of an address is the one named.
        table[((a - low) >> step) as usize] = u32::try_from(i).ok()?;
    }
    let mut found = vec![NO_NAME; addrs.len()];
    for &e in named {
        let Some(off) = (e >> 32).checked_sub(u64::from(low)) else {
            continue;
        };
        if off & ((1 << step) - 1) != 0 {
            continue;
        }
        if let Some(&i) = usize::try_from(off >> step).ok().and_then(|k| table.get(k))
            && i != NO_NAME
        {
            #[allow(clippy::cast_possible_truncation)] // the low half is the name
            let name = e as u32;
            found[i as usize] = name;
        }
    }
    Some(found)
}
