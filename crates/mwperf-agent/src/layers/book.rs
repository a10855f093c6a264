//! The agent's own stamps of each measured message (`--layers-out`), kept per role while it
//! runs: no lock and, within the capacity reserved up front, no allocation per message.

/// Which way the messages of a role go: what it sends and what it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// sends messages, receives nothing measured
    Pub,
    /// receives messages
    Sub,
    /// sends messages, receives their echoes
    Ping,
    /// receives messages, sends their echoes
    Pong,
}

impl Side {
    /// The echo flag of what this side sends (None: it sends nothing measured).
    pub fn sends_echo(self) -> Option<bool> {
        match self {
            Side::Pub | Side::Ping => Some(false),
            Side::Pong => Some(true),
            Side::Sub => None,
        }
    }
    /// The echo flag of what this side receives (None: it receives nothing measured).
    pub fn receives_echo(self) -> Option<bool> {
        match self {
            Side::Sub | Side::Pong => Some(false),
            Side::Ping => Some(true),
            Side::Pub => None,
        }
    }
}

/// The message a graph node's chain stage received and published on (node/subscription.rs):
/// how the control plane follows one message of a chain through every stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    pub topic: u16,
    pub source: u32,
    pub seq: u64,
}

/// One measured message as this agent handled it; 0 = a moment this agent does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub side: Side,
    pub run_id: u32,
    pub topic: u16,
    pub seq: u64,
    /// A graph node's message: its publishing node's index (the header's `peer_rx_ns`). The
    /// publishers of one topic (a graph's `copies`) each number their messages from 0, so
    /// topic and seq alone do not name a message; None for the point roles.
    pub source: Option<u32>,
    /// A chain stage's message: the one it received and published on.
    pub cause: Option<Cause>,
    /// when the schedule wanted it sent (a sender's)
    pub intended: u64,
    /// the agent called the middleware's write (a pong: for the echo)
    pub write: u64,
    /// the agent's receive returned the sample (a ping: the echo)
    pub take: u64,
    /// the callback started (after waiting for the executor)
    pub callback: u64,
}

/// A role's rows while it runs.
pub struct Book {
    side: Side,
    rows: Vec<Row>,
}

impl Book {
    /// None unless `--layers-out` was given; `capacity` = the messages expected (reserved now).
    pub fn new(side: Side, capacity: u64) -> Option<Book> {
        super::on().then(|| Book {
            side,
            rows: Vec::with_capacity(capacity.min(1 << 24) as usize),
        })
    }

    /// Message `seq` of `topic` with none of its moments yet.
    fn blank(&self, run_id: u32, topic: u16, seq: u64) -> Row {
        Row {
            side: self.side,
            run_id,
            topic,
            seq,
            source: None,
            cause: None,
            intended: 0,
            write: 0,
            take: 0,
            callback: 0,
        }
    }

    /// A pub or ping handed message `seq` to the middleware at `write` (scheduled `intended`).
    pub fn sent(&mut self, run_id: u32, topic: u16, seq: u64, intended: u64, write: u64) {
        let row = Row {
            intended,
            write,
            ..self.blank(run_id, topic, seq)
        };
        self.rows.push(row);
    }

    /// A graph node's publisher (or chain stage: `cause`) handed message `seq` to the
    /// middleware at `write`, meant for `intended` (a timer's due time; a stage's callback
    /// start). Every time on the graph's reference clock (node/clock.rs).
    #[allow(clippy::too_many_arguments)]
    pub fn node_sent(
        &mut self,
        run_id: u32,
        topic: u16,
        source: u32,
        seq: u64,
        intended: u64,
        write: u64,
        cause: Option<Cause>,
    ) {
        let row = Row {
            source: Some(source),
            cause,
            intended,
            write,
            ..self.blank(run_id, topic, seq)
        };
        self.rows.push(row);
    }

    /// A graph node's subscription took message `seq` of publisher `source` at `take`; its
    /// callback started at `callback` (after waiting for the node's executor).
    pub fn node_received(
        &mut self,
        run_id: u32,
        topic: u16,
        source: u32,
        seq: u64,
        take: u64,
        callback: u64,
    ) {
        let row = Row {
            source: Some(source),
            take,
            callback,
            ..self.blank(run_id, topic, seq)
        };
        self.rows.push(row);
    }

    /// A ping got the echo of `seq` at `take` (its callback is the receive itself).
    pub fn echoed(&mut self, seq: u64, take: u64) {
        // rows are in send order (seq increasing): the echo is almost always one of the last
        if let Ok(i) = self.rows.binary_search_by_key(&seq, |r| r.seq) {
            let r = &mut self.rows[i];
            if r.take == 0 {
                r.take = take;
                r.callback = take;
            }
        }
    }

    /// A sub's callback for `seq`: the receive returned at `take`, the callback started at
    /// `callback`.
    pub fn received(&mut self, run_id: u32, topic: u16, seq: u64, take: u64, callback: u64) {
        let row = Row {
            take,
            callback,
            ..self.blank(run_id, topic, seq)
        };
        self.rows.push(row);
    }

    /// A pong's echo of `seq`: received at `take`, callback from `callback`, echo written at
    /// `write`.
    pub fn echo(
        &mut self,
        run_id: u32,
        topic: u16,
        seq: u64,
        take: u64,
        callback: u64,
        write: u64,
    ) {
        let row = Row {
            write,
            take,
            callback,
            ..self.blank(run_id, topic, seq)
        };
        self.rows.push(row);
    }
}

impl Drop for Book {
    /// The role ended: its rows join the process's (written once every role ended).
    fn drop(&mut self) {
        super::hand_over(std::mem::take(&mut self.rows));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_finds_its_message_and_only_the_first_echo_counts() {
        let mut b = Book {
            side: Side::Ping,
            rows: Vec::new(),
        };
        for seq in 3..10 {
            b.sent(7, 0, seq, seq * 100, seq * 100 + 5);
        }
        b.echoed(5, 900);
        b.echoed(5, 950);
        b.echoed(42, 1); // not sent by this book: ignored
        let r = b.rows.iter().find(|r| r.seq == 5).unwrap();
        assert_eq!((r.take, r.callback), (900, 900));
        assert!(b.rows.iter().filter(|r| r.seq != 5).all(|r| r.take == 0));
        b.rows.clear(); // keep the global hand-over empty
    }

    #[test]
    fn each_side_sends_and_receives_the_right_echo_flag() {
        assert_eq!(Side::Ping.sends_echo(), Some(false));
        assert_eq!(Side::Ping.receives_echo(), Some(true));
        assert_eq!(Side::Pong.sends_echo(), Some(true));
        assert_eq!(Side::Pong.receives_echo(), Some(false));
        assert_eq!(Side::Pub.receives_echo(), None);
        assert_eq!(Side::Sub.sends_echo(), None);
    }
}
