//! The kinds a case is made of: its roles (the processes), its pattern (how results and tables
//! group cases) and the columns of the capability table (what a library must have).

use ipcbench_api::{Capabilities, Support};
use serde::{Deserialize, Serialize};

/// One process kind of a case (written as its lower-case name in reports and command lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Sender,
    Receiver,
    Pinger,
    Echo,
    Publisher,
    Subscriber,
    Producer,
    Consumer,
    Client,
    Server,
    /// A duplex case's: it sends to the other peer and receives from it at once.
    Peer,
}

impl Role {
    pub const ALL: [Role; 11] = [
        Role::Sender,
        Role::Receiver,
        Role::Pinger,
        Role::Echo,
        Role::Publisher,
        Role::Subscriber,
        Role::Producer,
        Role::Consumer,
        Role::Client,
        Role::Server,
        Role::Peer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Sender => "sender",
            Role::Receiver => "receiver",
            Role::Pinger => "pinger",
            Role::Echo => "echo",
            Role::Publisher => "publisher",
            Role::Subscriber => "subscriber",
            Role::Producer => "producer",
            Role::Consumer => "consumer",
            Role::Client => "client",
            Role::Server => "server",
            Role::Peer => "peer",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// "producer 2": how reasons and failures name a role's process.
    pub fn label(self, index: usize) -> String {
        format!("{} {index}", self.as_str())
    }

    /// The roles that drive a case: the driver says "drain" once all of them are done.
    pub fn is_driving(self) -> bool {
        matches!(
            self,
            Role::Sender | Role::Pinger | Role::Publisher | Role::Producer | Role::Client | Role::Peer
        )
    }
}

/// A case's family, as the results and tables group cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pattern {
    #[serde(rename = "stream")]
    Stream,
    #[serde(rename = "stream-rtt")]
    StreamRtt,
    #[serde(rename = "broadcast")]
    Broadcast,
    #[serde(rename = "queue")]
    Queue,
    #[serde(rename = "service")]
    Service,
    /// One-way latency at a fixed rate: a stream whose sender keeps a schedule.
    #[serde(rename = "latency")]
    Latency,
    /// Connection set-up: a fresh sender's open and first message.
    #[serde(rename = "connect")]
    Connect,
    /// A broadcast whose last subscribers spend a fixed time on each message.
    #[serde(rename = "broadcast-slow")]
    SlowSubscriber,
    /// Independent streams or round trips of one library side by side.
    #[serde(rename = "pairs")]
    Pairs,
    /// Two peers each sending a stream to the other at once.
    #[serde(rename = "duplex")]
    Duplex,
    /// A lossless broadcast at a fixed rate: every subscriber's one-way latency.
    #[serde(rename = "fanout-latency")]
    FanoutLatency,
}

impl Pattern {
    pub const ALL: [Pattern; 11] = [
        Pattern::Stream,
        Pattern::StreamRtt,
        Pattern::Broadcast,
        Pattern::Queue,
        Pattern::Service,
        Pattern::Latency,
        Pattern::Connect,
        Pattern::SlowSubscriber,
        Pattern::Pairs,
        Pattern::Duplex,
        Pattern::FanoutLatency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Stream => "stream",
            Pattern::StreamRtt => "stream-rtt",
            Pattern::Broadcast => "broadcast",
            Pattern::Queue => "queue",
            Pattern::Service => "service",
            Pattern::Latency => "latency",
            Pattern::Connect => "connect",
            Pattern::SlowSubscriber => "broadcast-slow",
            Pattern::Pairs => "pairs",
            Pattern::Duplex => "duplex",
            Pattern::FanoutLatency => "fanout-latency",
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pattern (or the batch calls) a library may have: a column of the capability table and a
/// key of the results' `capabilities`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Stream,
    RoundTrip,
    BroadcastLossless,
    BroadcastLossy,
    Queue,
    Service,
    Batch,
    /// The loan mode's in-place calls.
    Loan,
}

impl Column {
    pub const ALL: [Column; 8] = [
        Column::Stream,
        Column::RoundTrip,
        Column::BroadcastLossless,
        Column::BroadcastLossy,
        Column::Queue,
        Column::Service,
        Column::Batch,
        Column::Loan,
    ];

    /// Its key in a library's `capabilities`.
    pub fn key(self) -> &'static str {
        match self {
            Column::Stream => "stream",
            Column::RoundTrip => "stream-rtt",
            Column::BroadcastLossless => "broadcast/lossless",
            Column::BroadcastLossy => "broadcast/lossy",
            Column::Queue => "queue",
            Column::Service => "service",
            Column::Batch => "batch",
            Column::Loan => "loan",
        }
    }

    /// Its title in a table.
    pub fn title(self) -> &'static str {
        match self {
            Column::Stream => "stream",
            Column::RoundTrip => "round trip",
            Column::BroadcastLossless => "broadcast lossless",
            Column::BroadcastLossy => "broadcast lossy",
            Column::Queue => "work queue",
            Column::Service => "service",
            Column::Batch => "batch calls",
            Column::Loan => "loan (in place)",
        }
    }

    /// Whether, and how, a library has it.
    pub fn of(self, c: &Capabilities) -> Support {
        match self {
            Column::Stream => c.stream,
            Column::RoundTrip => c.round_trip,
            Column::BroadcastLossless => c.broadcast_lossless,
            Column::BroadcastLossy => c.broadcast_lossy,
            Column::Queue => c.queue,
            Column::Service => c.service,
            Column::Batch => c.batch,
            Column::Loan => c.loan,
        }
    }
}
