//! A service client's outstanding calls: what it must remember of each call until its reply
//! comes or it is given up, found by the middleware's call id. At most `--in-flight` entries
//! (≤ 1024), held in one vector allocated up front: a linear search over a handful of entries
//! beats a map, and nothing is allocated per call.

use mwperf_transports::CallId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub id: CallId,
    /// The request's seq (measured calls from 0; warm-up calls their own range).
    pub seq: u64,
    pub intended_ns: u64,
    pub sent_ns: u64,
    pub warmup: bool,
}

pub struct Outstanding {
    calls: Vec<Call>,
    limit: usize,
    /// The most calls outstanding at once.
    pub max_seen: usize,
}

impl Outstanding {
    pub fn new(limit: usize) -> Self {
        Outstanding {
            calls: Vec::with_capacity(limit),
            limit,
            max_seen: 0,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Whether another call may go out.
    pub fn has_room(&self) -> bool {
        self.calls.len() < self.limit
    }

    /// Remember a call just sent. An id the transport gave twice replaces the older call (its
    /// reply can no longer be told apart); the older one is returned to be counted lost.
    pub fn add(&mut self, call: Call) -> Option<Call> {
        let replaced = self.take(call.id);
        self.calls.push(call);
        self.max_seen = self.max_seen.max(self.calls.len());
        replaced
    }

    /// The call `id` answered: removed and returned; None = no such call outstanding.
    pub fn take(&mut self, id: CallId) -> Option<Call> {
        let i = self.calls.iter().position(|c| c.id == id)?;
        Some(self.calls.swap_remove(i))
    }

    /// The first call sent at or before `sent_before_ns`, removed (a timeout).
    pub fn expire(&mut self, sent_before_ns: u64) -> Option<Call> {
        let i = self
            .calls
            .iter()
            .position(|c| c.sent_ns <= sent_before_ns)?;
        Some(self.calls.swap_remove(i))
    }

    /// When the oldest outstanding call was sent.
    pub fn oldest_sent_ns(&self) -> Option<u64> {
        self.calls.iter().map(|c| c.sent_ns).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u64, sent_ns: u64) -> Call {
        Call {
            id,
            seq: id,
            intended_ns: sent_ns,
            sent_ns,
            warmup: false,
        }
    }

    #[test]
    fn replies_find_their_call_once() {
        let mut o = Outstanding::new(4);
        o.add(call(7, 10));
        o.add(call(9, 20));
        assert_eq!(o.take(9).map(|c| c.sent_ns), Some(20));
        assert_eq!(o.take(9), None, "a second reply matches nothing");
        assert_eq!((o.len(), o.max_seen), (1, 2));
    }

    #[test]
    fn room_is_the_in_flight_limit() {
        let mut o = Outstanding::new(2);
        o.add(call(1, 1));
        assert!(o.has_room());
        o.add(call(2, 2));
        assert!(!o.has_room());
    }

    #[test]
    fn expiry_takes_calls_sent_before_the_cut_oldest_first_known() {
        let mut o = Outstanding::new(3);
        o.add(call(1, 100));
        o.add(call(2, 50));
        o.add(call(3, 300));
        assert_eq!(o.oldest_sent_ns(), Some(50));
        let mut gone: Vec<u64> = std::iter::from_fn(|| o.expire(100)).map(|c| c.id).collect();
        gone.sort();
        assert_eq!(gone, vec![1, 2]);
        assert_eq!(o.oldest_sent_ns(), Some(300));
    }

    #[test]
    fn an_id_given_twice_replaces_the_older_call() {
        let mut o = Outstanding::new(3);
        o.add(call(1, 100));
        assert_eq!(o.add(call(1, 200)).map(|c| c.sent_ns), Some(100));
        assert_eq!(o.len(), 1);
    }
}
