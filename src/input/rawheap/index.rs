//! Objects by address: the one search every read uses, whatever order the object table
//! and the string section give the addresses in (a writer lists both in marking order,
//! and version 2's synthetic addresses are not ascending in it).
//!
//! An address becomes a key, the keys are numbered in key order (their rank), and each
//! rank names its object. The keys are kept as a bitmap in chunks of 4096 keys, only the
//! chunks that hold some, each 64-key word with the rank of its first key: a lookup is a
//! chunk number, a word and a population count, then the object of that rank. Heap
//! addresses come in regions and pack densely this way (about 4 bytes an object for the
//! bitmap, 4 for the objects). Version-2 synthetic addresses hold the region number in
//! their low half and the word in the region in their high half: their halves are swapped
//! where that packs them better. Addresses too sparse for a bitmap (more than one word of
//! it an object) go to an open-addressing table instead: 12 to 24 bytes an object, and a
//! lookup anywhere in it.

use hashbrown::HashMap;

/// No object, or no name.
pub(super) const NO_NAME: u32 = u32::MAX;

/// Keys a bitmap chunk holds, as a power of two.
const CHUNK_BITS: u32 = 12;
/// 64-key words a chunk holds.
const CHUNK_WORDS: usize = 1 << (CHUNK_BITS - 6);
/// No chunk.
const NO_CHUNK: u32 = u32::MAX;
/// An empty slot of the hashed table.
const EMPTY_SLOT: u64 = u64::MAX;

/// Objects by address; a repeated address names its last object.
#[derive(Default)]
pub(super) enum AddrIndex {
    #[default]
    Empty,
    /// The bitmap of the keys.
    Ranked(Ranked),
    /// Open addressing: each slot an offset from `base` (the high half) and its object.
    Hashed {
        base: u64,
        slots: Vec<u64>,
        shift: u32,
    },
    /// Addresses spread wider than 4 GiB (or more objects than 32 bits number).
    Wide(HashMap<u64, u32>),
}

/// The bitmap: each key is the address (its 16-bit halves swapped where `swap`) less
/// `base`, shifted right by the alignment all keys share; the chunk of each 4096 keys
/// (through `chunks`), each chunk's words as (bits, rank of the first) pairs in `words`,
/// each rank's object in `objects`.
pub(super) struct Ranked {
    swap: bool,
    base: u64,
    shift: u32,
    chunks: Chunks,
    words: Vec<u64>,
    objects: Vec<u32>,
}

impl Ranked {
    /// The object at an address.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // words and ranks index the index's lists
    fn get(&self, addr: u64) -> Option<u32> {
        let key = if self.swap { swapped(addr) } else { addr };
        let off = key.checked_sub(self.base)?;
        if off & ((1 << self.shift) - 1) != 0 {
            return None;
        }
        let k = off >> self.shift;
        let c = self.chunks.get(k >> CHUNK_BITS)? as usize;
        let w = c * CHUNK_WORDS + ((k >> 6) as usize & (CHUNK_WORDS - 1));
        let bits = self.words[2 * w];
        let bit = 1u64 << (k & 63);
        if bits & bit == 0 {
            return None;
        }
        let r = self.words[2 * w + 1] + u64::from((bits & (bit - 1)).count_ones());
        Some(self.objects[r as usize])
    }
}

/// A chunk's number by the chunk of keys it holds: a list where the keys span few
/// chunks, else a map.
pub(super) enum Chunks {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl Chunks {
    #[inline]
    fn get(&self, c: u64) -> Option<u32> {
        match self {
            Chunks::Dense(list) => usize::try_from(c)
                .ok()
                .and_then(|c| list.get(c))
                .copied()
                .filter(|&k| k != NO_CHUNK),
            Chunks::Sparse(map) => map.get(&c).copied(),
        }
    }
}

/// An address with its 16-bit halves swapped (the 32 bits of a version-2 address).
#[inline]
fn swapped(addr: u64) -> u64 {
    if addr >> 32 == 0 {
        (addr >> 16) | (addr & 0xFFFF) << 16
    } else {
        addr
    }
}

impl AddrIndex {
    /// The index of `len` objects, the `i`th at `addr(i)`; `halves` where the addresses
    /// may be version 2's (32 bits, a region number in the low half).
    pub(super) fn new(len: usize, addr: impl Fn(usize) -> u64 + Copy, halves: bool) -> Self {
        if len == 0 {
            return AddrIndex::Empty;
        }
        let layouts = if halves { &[false, true][..] } else { &[false] };
        // The layout whose keys fill the fewest chunks.
        let best = layouts
            .iter()
            .filter_map(|&swap| {
                let (base, shift) = Self::frame(len, addr, swap);
                let (chunks, used) = Self::chunks(len, addr, swap, base, shift)?;
                Some((swap, base, shift, chunks, used))
            })
            .min_by_key(|l| l.4);
        match best {
            Some((swap, base, shift, chunks, used)) if used * CHUNK_WORDS <= len + 1024 => {
                let key = |i: usize| Self::key_of(addr(i), swap, base, shift);
                let (words, objects) = Self::ranked(len, key, &chunks, used);
                AddrIndex::Ranked(Ranked {
                    swap,
                    base,
                    shift,
                    chunks,
                    words,
                    objects,
                })
            }
            _ => Self::hashed(len, addr),
        }
    }

    #[inline]
    fn key_of(addr: u64, swap: bool, base: u64, shift: u32) -> u64 {
        let key = if swap { swapped(addr) } else { addr };
        key.wrapping_sub(base) >> shift
    }

    /// The lowest key and the alignment every key has above it.
    fn frame(len: usize, addr: impl Fn(usize) -> u64, swap: bool) -> (u64, u32) {
        let key = |i| if swap { swapped(addr(i)) } else { addr(i) };
        let base = (0..len).map(key).min().unwrap_or(0);
        let bits = (0..len).fold(0, |bits, i| bits | (key(i) - base));
        (base, bits.trailing_zeros().min(63))
    }

    /// Which chunks hold keys (numbered in key order) and how many do, where the keys
    /// span few enough chunks for a list of them; None otherwise.
    fn chunks(
        len: usize,
        addr: impl Fn(usize) -> u64,
        swap: bool,
        base: u64,
        shift: u32,
    ) -> Option<(Chunks, usize)> {
        if len >= NO_CHUNK as usize {
            return None;
        }
        let top = (0..len)
            .map(|i| Self::key_of(addr(i), swap, base, shift))
            .max()?;
        let span = (top >> CHUNK_BITS) + 1;
        if span > (4 * len as u64).max(1 << 16) {
            // Chunks by a map, numbered in key order.
            let mut used: Vec<u64> = (0..len)
                .map(|i| Self::key_of(addr(i), swap, base, shift) >> CHUNK_BITS)
                .collect();
            used.sort_unstable();
            used.dedup();
            if used.len() * CHUNK_WORDS > len + 1024 {
                return None;
            }
            let n = used.len();
            let map = used
                .into_iter()
                .enumerate()
                .map(|(k, c)| (c, u32::try_from(k).unwrap_or(NO_CHUNK)))
                .collect();
            return Some((Chunks::Sparse(map), n));
        }
        let mut list = vec![NO_CHUNK; usize::try_from(span).ok()?];
        for i in 0..len {
            list[(Self::key_of(addr(i), swap, base, shift) >> CHUNK_BITS) as usize] = 0;
        }
        let mut n = 0u32;
        for c in &mut list {
            if *c != NO_CHUNK {
                *c = n;
                n += 1;
            }
        }
        Some((Chunks::Dense(list), n as usize))
    }

    /// The bitmap of the keys in their chunks, the ranks, and the object of each rank.
    fn ranked(
        len: usize,
        key: impl Fn(usize) -> u64,
        chunks: &Chunks,
        used: usize,
    ) -> (Vec<u64>, Vec<u32>) {
        let mut words = vec![0u64; 2 * used * CHUNK_WORDS];
        let word_of = |chunks: &Chunks, k: u64| {
            let c = chunks.get(k >> CHUNK_BITS).unwrap_or(0) as usize;
            c * CHUNK_WORDS + ((k >> 6) as usize & (CHUNK_WORDS - 1))
        };
        for i in 0..len {
            let k = key(i);
            words[2 * word_of(chunks, k)] |= 1 << (k & 63);
        }
        let mut rank = 0u64;
        for w in words.chunks_exact_mut(2) {
            w[1] = rank;
            rank += u64::from(w[0].count_ones());
        }
        let mut objects = vec![0u32; usize::try_from(rank).unwrap_or(0)];
        for i in 0..len {
            let k = key(i);
            let w = word_of(chunks, k);
            let below = words[2 * w] & ((1 << (k & 63)) - 1);
            let r = words[2 * w + 1] + u64::from(below.count_ones());
            // The last object of an address is the one kept.
            objects[r as usize] = u32::try_from(i).unwrap_or(NO_NAME);
        }
        (words, objects)
    }

    /// An open-addressing table of the addresses (less the lowest), where they span less
    /// than 4 GiB; a map otherwise.
    fn hashed(len: usize, addr: impl Fn(usize) -> u64) -> AddrIndex {
        let base = (0..len).map(&addr).min().unwrap_or(0);
        let top = (0..len).map(&addr).max().unwrap_or(0);
        if len >= (u32::MAX as usize) / 4 || top - base >= u64::from(u32::MAX) {
            let mut map = HashMap::with_capacity(len);
            for i in 0..len {
                map.insert(addr(i), u32::try_from(i).unwrap_or(NO_NAME));
            }
            return AddrIndex::Wide(map);
        }
        // One and a half to three slots an object.
        let bits = (len + len / 2).next_power_of_two().trailing_zeros().max(4);
        let mut slots = vec![EMPTY_SLOT; 1 << bits];
        let mask = slots.len() - 1;
        let shift = 64 - bits;
        for i in 0..len {
            let off = addr(i) - base;
            let mut at = Self::home(off, shift);
            loop {
                let slot = slots[at];
                if slot == EMPTY_SLOT || slot >> 32 == off {
                    slots[at] = off << 32 | i as u64;
                    break;
                }
                at = (at + 1) & mask;
            }
        }
        AddrIndex::Hashed { base, slots, shift }
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the shift leaves the table's bits
    fn home(off: u64, shift: u32) -> usize {
        (off.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    }

    /// The object at an address.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the low half of a slot is the object
    pub(super) fn get(&self, addr: u64) -> Option<u32> {
        match self {
            AddrIndex::Empty => None,
            AddrIndex::Ranked(ranked) => ranked.get(addr),
            AddrIndex::Hashed { base, slots, shift } => {
                let off = addr.checked_sub(*base)?;
                if off >= u64::from(u32::MAX) {
                    return None;
                }
                let mask = slots.len() - 1;
                let mut at = Self::home(off, *shift);
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
            AddrIndex::Wide(map) => map.get(&addr).copied(),
        }
    }

    /// How the index searches, for the tests.
    #[cfg(test)]
    pub(super) fn kind(&self) -> &'static str {
        match self {
            AddrIndex::Empty => "empty",
            AddrIndex::Ranked(Ranked { swap: true, .. }) => "ranked, halves swapped",
            AddrIndex::Ranked(_) => "ranked",
            AddrIndex::Hashed { .. } => "hashed",
            AddrIndex::Wide(_) => "wide",
        }
    }
}
