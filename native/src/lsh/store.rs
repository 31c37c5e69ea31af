//! The storage of `BandIndex`: rows in fixed-size chunks and the band-key table with its
//! entries apart from its slots, so that growing never moves a row or an entry.
//!
//! The layout is `core`'s (slots of `(key, head)`, entries of `(row, previous entry)`, the same
//! probing and the same growth plan), split in two: [`Table::to_tab`] and [`Table::from_tab`]
//! convert to and from the one-array form the numpy twin keeps. A row or an entry array that
//! doubles in one piece is copied at each doubling and faults in fresh pages each time; chunks
//! of about 64 KiB are allocated once, from the allocator's reused memory, and stay put.

use super::core;

/// Bytes per chunk (the allocator serves these from its heap and reuses freed ones).
const CHUNK_BYTES: usize = 64 << 10;

/// Rows of `width` values each, appended in chunks of `1 << shift` rows.
pub struct Chunks<T> {
    data: Vec<Box<[T]>>,
    width: usize,
    shift: u32,
    len: usize,
}

impl<T: Copy + Default> Chunks<T> {
    pub fn new(width: usize) -> Self {
        let per = (CHUNK_BYTES / (width.max(1) * std::mem::size_of::<T>())).max(1);
        Chunks {
            data: Vec::new(),
            width,
            shift: usize::BITS - 1 - per.leading_zeros(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Row `r` (`r < len`).
    #[inline(always)]
    pub fn row(&self, r: usize) -> &[T] {
        let at = (r & ((1 << self.shift) - 1)) * self.width;
        &self.data[r >> self.shift][at..at + self.width]
    }

    #[inline(always)]
    pub fn row_mut(&mut self, r: usize) -> &mut [T] {
        let at = (r & ((1 << self.shift) - 1)) * self.width;
        &mut self.data[r >> self.shift][at..at + self.width]
    }

    /// Append a row (default values) and return it to be filled.
    #[inline]
    pub fn push(&mut self) -> &mut [T] {
        let r = self.len;
        if r >> self.shift == self.data.len() {
            let size = (1usize << self.shift) * self.width;
            self.data.push(vec![T::default(); size].into_boxed_slice());
        }
        self.len = r + 1;
        self.row_mut(r)
    }

    /// Drop the last row (its chunk stays).
    pub fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// Every row in order, as one vector.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len * self.width);
        for r in 0..self.len {
            out.extend_from_slice(self.row(r));
        }
        out
    }
}

/// The band-key table: open addressing over `2 * slots` words of `(key, head)` pairs, and the
/// entries `(row, previous entry of the same key)` in chunks, each a pair of `u32` (the previous
/// entry `u32::MAX` for none): an index holds fewer than `2**32` rows and band entries.
pub struct Table {
    slots: Vec<i64>,
    mask: i64,
    used: i64,
    entries: Chunks<u32>,
    /// The entries planned for (the growth plan's figure; the chunks hold `entries.len()`).
    capacity: i64,
    pub stamp: i64,
    pub bands: usize,
    pub rows: usize,
}

impl Table {
    pub fn new(slots: i64, capacity: i64, bands: usize, rows: usize) -> Self {
        let mut words = vec![0i64; 2 * slots as usize];
        for s in 0..slots as usize {
            words[2 * s + 1] = -1;
        }
        Table {
            slots: words,
            mask: slots - 1,
            used: 0,
            entries: Chunks::new(2),
            capacity,
            stamp: 0,
            bands,
            rows,
        }
    }

    pub fn slot_count(&self) -> i64 {
        self.mask + 1
    }

    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    pub fn capacity(&self) -> i64 {
        self.capacity
    }

    /// Index in `slots` of `key`'s slot: where it is, or the empty slot where it would go.
    #[inline(always)]
    fn slot(&self, key: i64) -> usize {
        let mut s = key & self.mask;
        loop {
            let at = 2 * s as usize;
            if self.slots[at + 1] < 0 || self.slots[at] == key {
                return at;
            }
            s = (s + 1) & self.mask;
        }
    }

    #[inline(always)]
    fn prefetch(&self, key: i64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = 2 * (key & self.mask) as usize;
            // SAFETY: a prefetch never faults; the address is inside `slots`
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().wrapping_add(at) as *const i8)
            };
        }
    }

    /// Ask for the home slots of `keys` (a hint).
    pub fn prefetch_all(&self, keys: &[i64]) {
        for &k in keys {
            self.prefetch(k);
        }
    }

    /// File `row` under each key of `keys` (one per band); each key becomes the previous head
    /// of its chain. Returns the first of the row's entries (they are consecutive).
    pub fn file(&mut self, keys: &mut [i64], row: i64) -> usize {
        let first = self.entries.len();
        for &k in keys.iter() {
            self.prefetch(k);
        }
        for (j, h) in keys.iter_mut().enumerate() {
            let at = self.slot(*h);
            let head = self.slots[at + 1];
            if head < 0 {
                self.slots[at] = *h;
                self.used += 1;
            }
            self.slots[at + 1] = (first + j) as i64;
            *h = head;
        }
        for &head in keys.iter() {
            let entry = self.entries.push();
            entry[0] = row as u32;
            entry[1] = head as u32; // (-1 becomes u32::MAX)
        }
        first
    }

    /// Replace each key of `keys` by the head of its chain (-1: the key is not filed).
    pub fn heads(&self, keys: &mut [i64]) {
        for &k in keys.iter() {
            self.prefetch(k);
        }
        for h in keys.iter_mut() {
            *h = self.slots[self.slot(*h) + 1];
        }
    }

    /// `(row, previous entry)` of entry `e`.
    #[inline(always)]
    pub fn entry(&self, e: i64) -> (usize, i64) {
        let w = self.entries.row(e as usize);
        (
            w[0] as usize,
            if w[1] == u32::MAX { -1 } else { w[1] as i64 },
        )
    }

    /// Whether `more` entries fit as the table is (the plan would not grow it).
    #[inline]
    pub fn fits(&self, more: i64) -> bool {
        self.entries.len() as i64 + more <= self.capacity
            && 4 * (self.used + more) <= 3 * self.slot_count()
    }

    /// Room for `more` entries, the slots at most 3/4 full (`core::plan_growth`; new slots
    /// mean a rehash of the slots, never a move of the entries).
    pub fn reserve(&mut self, more: i64) {
        let slots = self.slot_count();
        let (new_slots, new_cap) = core::plan_growth(
            self.used,
            self.entries.len() as i64,
            slots,
            self.capacity,
            more,
        );
        self.capacity = new_cap;
        if new_slots != slots {
            let mut words = vec![0i64; 2 * new_slots as usize];
            for s in 0..new_slots as usize {
                words[2 * s + 1] = -1;
            }
            let old = std::mem::replace(&mut self.slots, words);
            self.mask = new_slots - 1;
            for pair in old.chunks_exact(2) {
                if pair[1] >= 0 {
                    let at = self.slot(pair[0]);
                    self.slots[at] = pair[0];
                    self.slots[at + 1] = pair[1];
                }
            }
        }
    }

    /// The one-array form (`core`'s layout at full length, the stamp at 0).
    pub fn to_tab(&self) -> Vec<i64> {
        let slots = self.slot_count() as usize;
        let base = core::HEADER;
        let mut tab = vec![0i64; core::table_len(slots, self.capacity as usize, base)];
        tab[..8].copy_from_slice(&[
            self.used,
            self.entries.len() as i64,
            0,
            slots as i64,
            self.capacity,
            self.bands as i64,
            self.rows as i64,
            base as i64,
        ]);
        tab[base..base + 2 * slots].copy_from_slice(&self.slots);
        let ents = base + 2 * slots;
        for e in 0..self.entries.len() {
            let (row, prev) = self.entry(e as i64);
            tab[ents + 2 * e] = row as i64;
            tab[ents + 2 * e + 1] = prev;
        }
        tab
    }

    /// A table from the one-array form; None when it is malformed.
    pub fn from_tab(tab: &[i64]) -> Option<Table> {
        if tab.len() < core::HEADER {
            return None;
        }
        let (used, entries, slots, capacity, base) = core::sizes(tab);
        let (bands, rows) = (tab[core::BANDS], tab[core::ROWS]);
        let ok = slots >= 1
            && slots & (slots - 1) == 0
            && base as usize == core::HEADER
            && 0 <= entries
            && entries <= capacity
            && bands >= 1
            && rows >= 1
            && tab.len() == core::table_len(slots as usize, capacity as usize, base as usize);
        if !ok {
            return None;
        }
        let base = base as usize;
        let mut table = Table::new(slots, capacity, bands as usize, rows as usize);
        table
            .slots
            .copy_from_slice(&tab[base..base + 2 * slots as usize]);
        table.used = used;
        table.stamp = tab[core::STAMP];
        let ents = base + 2 * slots as usize;
        for e in 0..entries as usize {
            let (row, prev) = (tab[ents + 2 * e], tab[ents + 2 * e + 1]);
            if !(0..u32::MAX as i64).contains(&row) || prev < -1 || prev >= e as i64 {
                return None;
            }
            let entry = table.entries.push();
            entry[0] = row as u32;
            entry[1] = prev as u32;
        }
        Some(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_rows_in_place() {
        let mut c: Chunks<u32> = Chunks::new(3000);
        for r in 0..50u32 {
            c.push().fill(r);
        }
        assert_eq!(c.len(), 50);
        assert!(c.row(37).iter().all(|&v| v == 37));
        assert_eq!(c.to_vec().len(), 150_000);
    }

    #[test]
    fn the_table_matches_the_one_array_form() {
        let mut t = Table::new(8, 4, 2, 1);
        for r in 0..20 {
            t.reserve(2);
            t.file(&mut [r % 5, 100 + r % 3], r);
        }
        let tab = t.to_tab();
        let back = Table::from_tab(&tab).expect("well formed");
        assert_eq!(back.to_tab(), tab);
        let mut one = vec![0i64; core::table_len(8, 4, 8)];
        core::init_table(&mut one, 8, 4, 2, 1, 8);
        for r in 0..20 {
            let (used, entries, slots, cap, _) = core::sizes(&one);
            let (s, c) = core::plan_growth(used, entries, slots, cap, 2);
            let mut big = vec![0i64; core::table_len(s as usize, c as usize, 8)];
            core::grow_into(&one, &mut big, s, c);
            one = big;
            core::file(&mut one, r % 5, r);
            core::file(&mut one, 100 + r % 3, r);
        }
        assert_eq!(one, tab);
    }
}
