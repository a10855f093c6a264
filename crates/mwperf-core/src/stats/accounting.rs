//! Sequence accounting: which sequence numbers arrived, how often, in which order. Never fatal:
//! duplicates and reordering are counted (performance_test aborts on them).
//!
//! - duplicated: an arrival of a sequence number that already arrived (intact or corrupted).
//! - reordered: a first arrival whose seq is below the highest seq seen before it.
//! - lost: sent − distinct sequence numbers that arrived, computed at the end.
//!
//! Memory: one bit per sequence number (10^7 messages = 1.25 MB), at least [`MIN_WORDS`] words
//! from the first arrival on, so the steady state allocates nothing (`--count-allocs`): the
//! bitmap grows (doubling) only past 65 536 messages, or never when [`SeqTracker::reserve`] was
//! told the count in advance.

/// The bitmap's first size: 1024 words = 8 KiB = 65 536 sequence numbers (65 s at 1 kHz).
pub const MIN_WORDS: usize = 1024;

use crate::result::Accounting;

#[derive(Default)]
pub struct SeqTracker {
    seen: Vec<u64>,
    distinct: u64,
    highest: Option<u64>,
    pub received: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub corrupted: u64,
    pub foreign: u64,
    pub malformed: u64,
    pub warmup_received: u64,
}

/// Write every page of `words` now (zeros, as they are). A zeroed allocation may come from the
/// kernel untouched (calloc), and its pages were then faulted in one by one as the sequence
/// numbers advanced: the resident set crept up by 8 KiB a minute at 1 kHz (issue 29's soak runs)
/// although nothing was allocated. Volatile, so the compiler cannot drop writes of a zero.
fn touch(words: &mut [u64]) {
    const WORDS_PER_PAGE: usize = 4096 / 8;
    for i in (0..words.len()).step_by(WORDS_PER_PAGE) {
        // SAFETY: `i` is in bounds; a plain store of the value already there
        unsafe { std::ptr::write_volatile(&mut words[i], 0) };
    }
}

/// What one arrival was, as far as sequencing goes.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Arrival {
    First { reordered: bool },
    Duplicate,
}

impl SeqTracker {
    /// Note the arrival of `seq`; `intact` = payload pattern matched. Returns what it was.
    pub fn arrive(&mut self, seq: u64, intact: bool) -> Arrival {
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if word >= self.seen.len() {
            let old = self.seen.len();
            self.seen
                .resize((word + 1).next_power_of_two().max(MIN_WORDS), 0);
            touch(&mut self.seen[old..]);
        }
        if self.seen[word] & (1 << bit) != 0 {
            self.duplicated += 1;
            return Arrival::Duplicate;
        }
        self.seen[word] |= 1 << bit;
        self.distinct += 1;
        let reordered = self.highest.is_some_and(|h| seq < h);
        if reordered {
            self.reordered += 1;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        if intact {
            self.received += 1;
        } else {
            self.corrupted += 1;
        }
        Arrival::First { reordered }
    }

    /// Make room for sequence numbers 0..`seqs` now (a sender that knows its count), so no
    /// arrival allocates.
    pub fn reserve(&mut self, seqs: u64) {
        let words = (seqs.div_ceil(64) as usize).max(MIN_WORDS);
        if words > self.seen.len() {
            let old = self.seen.len();
            self.seen.resize(words.next_power_of_two(), 0);
            touch(&mut self.seen[old..]);
        }
    }

    /// Distinct sequence numbers that arrived (intact or corrupted).
    pub fn distinct(&self) -> u64 {
        self.distinct
    }

    /// Highest sequence number seen, if any.
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// Final accounting for `sent` messages.
    pub fn accounting(&self, sent: u64, warmup_sent: u64) -> Accounting {
        Accounting {
            sent,
            received: self.received,
            lost: sent.saturating_sub(self.distinct),
            duplicated: self.duplicated,
            reordered: self.reordered,
            corrupted: self.corrupted,
            foreign: self.foreign,
            malformed: self.malformed,
            warmup_sent,
            warmup_received: self.warmup_received,
            undelivered: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_no_loss() {
        let mut t = SeqTracker::default();
        for s in 0..1000 {
            assert_eq!(t.arrive(s, true), Arrival::First { reordered: false });
        }
        let a = t.accounting(1000, 0);
        assert_eq!(
            (a.received, a.lost, a.duplicated, a.reordered),
            (1000, 0, 0, 0)
        );
    }

    #[test]
    fn loss_duplicates_reordering_corruption() {
        let mut t = SeqTracker::default();
        // sent 0..10; 3 and 7 lost; 5 duplicated; 2 arrives after 4; 9 corrupted
        for (s, ok) in [
            (0, true),
            (1, true),
            (4, true),
            (2, true),
            (5, true),
            (5, true),
            (6, true),
            (8, true),
            (9, false),
        ] {
            t.arrive(s, ok);
        }
        let a = t.accounting(10, 0);
        assert_eq!(a.received, 7);
        assert_eq!(a.corrupted, 1);
        assert_eq!(a.lost, 2);
        assert_eq!(a.duplicated, 1);
        assert_eq!(a.reordered, 1);
    }

    #[test]
    fn late_tail_and_sparse_high_seq() {
        let mut t = SeqTracker::default();
        t.arrive(1_000_000, true);
        t.arrive(0, true);
        let a = t.accounting(1_000_001, 0);
        assert_eq!((a.received, a.lost, a.reordered), (2, 999_999, 1));
    }

    #[test]
    fn more_arrivals_than_sent_never_underflows() {
        let mut t = SeqTracker::default();
        for s in 0..5 {
            t.arrive(s, true);
        }
        assert_eq!(t.accounting(3, 0).lost, 0);
    }
}
