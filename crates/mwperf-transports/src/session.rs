//! One middleware session per process and settings, shared by every endpoint that asks for it
//! ([`crate::Spec::shared_session`], set by the graph node role): as a ROS node's publishers and
//! subscriptions share its DDS participant, a graph node's endpoints share one participant /
//! iceoryx2 node / zenoh session instead of opening one each.
//!
//! A middleware module keeps one [`SessionCache`] keyed on what must be equal for two endpoints
//! to share (the domain, the session-level options; never the QoS, which each reader and writer
//! keeps for itself). The cache holds its sessions weakly: each endpoint holds a [`SessionRef`],
//! and the session is closed when the last endpoint using it is dropped, in that endpoint's
//! thread. An endpoint without the flag gets a session of its own ([`SessionRef::own`]), exactly
//! as before: the single-stream roles keep one session per endpoint.

use std::ops::Deref;
use std::sync::{Arc, Mutex, Weak};

/// Shared sessions alive in this process, per transport name (for [`live`]).
static LIVE: Mutex<Vec<(&'static str, usize)>> = Mutex::new(Vec::new());

fn count(transport: &'static str, delta: isize) {
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    match live.iter_mut().find(|(t, _)| *t == transport) {
        Some((_, n)) => *n = n.saturating_add_signed(delta),
        None => live.push((transport, delta.max(0) as usize)),
    }
}

/// How many shared sessions of `transport` this process has open now (own sessions are not
/// counted): a graph node's endpoints on one middleware make 1.
pub fn live(transport: &str) -> usize {
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    live.iter()
        .find(|(t, _)| *t == transport)
        .map_or(0, |(_, n)| *n)
}

/// A session and, when shared, the transport whose live count it is part of.
pub struct Entry<S> {
    /// Always Some until the entry is dropped (the session is closed before the count drops).
    session: Option<S>,
    shared: Option<&'static str>,
}

impl<S> Drop for Entry<S> {
    fn drop(&mut self) {
        drop(self.session.take());
        if let Some(transport) = self.shared {
            count(transport, -1);
        }
    }
}

/// An endpoint's hold on its session: the session closes when the last hold is dropped.
pub struct SessionRef<S>(Arc<Entry<S>>);

impl<S> SessionRef<S> {
    /// A session of this endpoint's own (not shared, not counted).
    pub fn own(session: S) -> Self {
        SessionRef(Arc::new(Entry {
            session: Some(session),
            shared: None,
        }))
    }

    /// Whether another endpoint holds this session too.
    pub fn is_shared_now(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }
}

impl<S> Clone for SessionRef<S> {
    fn clone(&self) -> Self {
        SessionRef(Arc::clone(&self.0))
    }
}

impl<S> Deref for SessionRef<S> {
    type Target = S;
    fn deref(&self) -> &S {
        self.0
            .session
            .as_ref()
            .expect("a session lives as long as its entry")
    }
}

/// The shared sessions of one middleware, by key.
pub struct SessionCache<K, S> {
    transport: &'static str,
    entries: Mutex<Vec<(K, Weak<Entry<S>>)>>,
}

impl<K: PartialEq, S> SessionCache<K, S> {
    pub const fn new(transport: &'static str) -> Self {
        SessionCache {
            transport,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The live session of `key`, or a new one from `open` (called with the cache locked, so two
    /// endpoints opening at once do not create two).
    pub fn get_or_open<E>(
        &self,
        key: K,
        open: impl FnOnce() -> Result<S, E>,
    ) -> Result<SessionRef<S>, E> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|(_, weak)| weak.strong_count() > 0);
        if let Some(found) = entries
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, weak)| weak.upgrade())
        {
            return Ok(SessionRef(found));
        }
        let entry = Arc::new(Entry {
            session: Some(open()?),
            shared: Some(self.transport),
        });
        count(self.transport, 1);
        entries.push((key, Arc::downgrade(&entry)));
        Ok(SessionRef(entry))
    }

    /// A live shared session for which `pred(key, session)` holds, if any.
    pub fn find(&self, pred: impl Fn(&K, &S) -> bool) -> Option<SessionRef<S>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.iter().find_map(|(k, weak)| {
            let entry = weak.upgrade()?;
            let session = entry.session.as_ref()?;
            pred(k, session).then(|| SessionRef(Arc::clone(&entry)))
        })
    }

    /// `key`'s shared session when `shared`, else one of the endpoint's own.
    pub fn session<E>(
        &self,
        shared: bool,
        key: K,
        open: impl FnOnce() -> Result<S, E>,
    ) -> Result<SessionRef<S>, E> {
        if shared {
            self.get_or_open(key, open)
        } else {
            open().map(SessionRef::own)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CLOSED: AtomicUsize = AtomicUsize::new(0);

    struct Fake(u32);
    impl Drop for Fake {
        fn drop(&mut self) {
            CLOSED.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn equal_keys_share_other_keys_and_own_sessions_do_not_and_the_last_drop_closes() {
        static CACHE: SessionCache<u32, Fake> = SessionCache::new("session-test");
        let open = |n| move || Ok::<_, ()>(Fake(n));
        let a = CACHE.session(true, 7, open(1)).unwrap();
        let b = CACHE.session(true, 7, open(2)).unwrap();
        assert_eq!(
            ((*a).0, (*b).0),
            (1, 1),
            "the second endpoint got the first's session"
        );
        assert!(a.is_shared_now());
        let other = CACHE.session(true, 8, open(3)).unwrap();
        let own = CACHE.session(false, 7, open(4)).unwrap();
        assert_eq!(((*other).0, (*own).0), (3, 4));
        assert_eq!(live("session-test"), 2, "own sessions are not counted");
        let closed = CLOSED.load(Ordering::SeqCst);
        drop((other, own));
        assert_eq!(CLOSED.load(Ordering::SeqCst), closed + 2);
        drop(a);
        assert_eq!(live("session-test"), 1);
        assert_eq!(
            CLOSED.load(Ordering::SeqCst),
            closed + 2,
            "b still holds it"
        );
        drop(b);
        assert_eq!(live("session-test"), 0);
        assert_eq!(CLOSED.load(Ordering::SeqCst), closed + 3);
        let again = CACHE.session(true, 7, open(5)).unwrap();
        assert_eq!((*again).0, 5, "a closed session is not handed out again");
        assert_eq!(CACHE.entries.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_failed_open_caches_nothing() {
        static CACHE: SessionCache<u32, Fake> = SessionCache::new("session-test-fail");
        assert!(CACHE.session(true, 1, || Err::<Fake, _>("no")).is_err());
        assert_eq!(live("session-test-fail"), 0);
        assert!(CACHE.entries.lock().unwrap().is_empty());
    }
}
