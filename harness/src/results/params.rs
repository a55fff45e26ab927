//! What a case is, written beside its name in each result (`params`): its shape and counts, its
//! pace, its pairs and slow subscribers. A report reads a case from here, so that a file's cases
//! never depend on the matrix of the binary that reads it; a file written before has none, and
//! its cases are read by their names (`report::View`).

use ipcbench_api::{Shape, Transfer};
use serde::{Deserialize, Serialize};

use crate::matrix::{Case, Pace};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseParams {
    pub shape: ShapeName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lossy: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribers: Option<usize>,
    /// A work queue's producers and consumers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producers: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumers: Option<usize>,
    /// A service's clients and servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<usize>,
    /// A fixed-rate case's messages a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// A connect case: a fresh sender per message.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub connect: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// A slow-subscriber case's slow subscribers (the last ones).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slow: usize,
    /// A duplex case: two peers each streaming to the other.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub duplex: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A case's shape, as the file names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeName {
    Stream,
    RoundTrip,
    Broadcast,
    Queue,
    Service,
}

impl CaseParams {
    pub fn of(case: &Case) -> CaseParams {
        let mut p = CaseParams {
            shape: ShapeName::Stream,
            lossy: None,
            subscribers: None,
            producers: None,
            consumers: None,
            clients: None,
            servers: None,
            rate: None,
            connect: case.pace == Pace::Connect,
            pairs: case.pairs,
            slow: case.slow,
            duplex: case.duplex,
        };
        p.shape = match case.shape {
            Shape::Stream => ShapeName::Stream,
            Shape::RoundTrip => ShapeName::RoundTrip,
            Shape::Broadcast { lossy, subscribers } => {
                (p.lossy, p.subscribers) = (Some(lossy), Some(subscribers));
                ShapeName::Broadcast
            }
            Shape::Queue { producers, consumers } => {
                (p.producers, p.consumers) = (Some(producers), Some(consumers));
                ShapeName::Queue
            }
            Shape::Service { clients, servers } => {
                (p.clients, p.servers) = (Some(clients), Some(servers));
                ShapeName::Service
            }
        };
        if let Pace::Rate(rate) = case.pace {
            p.rate = Some(rate);
        }
        p
    }

    /// The case these say, of a result's name, size, batch and transfer; an error names the
    /// count a shape needs and the params lack.
    pub fn case(
        &self,
        name: &str,
        size: usize,
        batch: Option<usize>,
        transfer: Transfer,
    ) -> Result<Case, String> {
        let need =
            |what: &str, v: Option<usize>| v.ok_or_else(|| format!("{name}: its params have no {what}"));
        let shape = match self.shape {
            ShapeName::Stream => Shape::Stream,
            ShapeName::RoundTrip => Shape::RoundTrip,
            ShapeName::Broadcast => Shape::Broadcast {
                lossy: self.lossy.ok_or_else(|| format!("{name}: its params have no lossy"))?,
                subscribers: need("subscribers", self.subscribers)?,
            },
            ShapeName::Queue => Shape::Queue {
                producers: need("producers", self.producers)?,
                consumers: need("consumers", self.consumers)?,
            },
            ShapeName::Service => Shape::Service {
                clients: need("clients", self.clients)?,
                servers: need("servers", self.servers)?,
            },
        };
        let pace = match (self.rate, self.connect) {
            (Some(rate), false) => Pace::Rate(rate),
            (None, true) => Pace::Connect,
            (None, false) => Pace::Free,
            (Some(_), true) => return Err(format!("{name}: its params have both a rate and connect")),
        };
        Ok(Case {
            name: name.to_string(),
            shape,
            size,
            batch: batch.unwrap_or(1),
            pace,
            pairs: self.pairs,
            slow: self.slow,
            duplex: self.duplex,
            transfer,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case of the matrix, and the open families' at other counts, reads back from its
    /// params as itself.
    #[test]
    fn a_case_reads_back_from_its_params() {
        let open =
            ["broadcast/lossy/64sub/4KiB", "pairs/3/stream-rtt/16B", "latency/300k/1KiB", "duplex/4KiB"];
        let cases = crate::matrix::matrix().into_iter().chain(open.map(|n| crate::matrix::named(n).unwrap()));
        for case in cases.flat_map(|c| [c.loaned(), Some(c)]).flatten() {
            let p = CaseParams::of(&case);
            let json: CaseParams = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            let batch = (case.batch > 1).then_some(case.batch);
            assert_eq!(
                json.case(&case.name, case.size, batch, case.transfer),
                Ok(case.clone()),
                "{}",
                case.name
            );
        }
        let slow = CaseParams::of(&crate::matrix::find("broadcast/lossy/4sub-1slow/16B").unwrap());
        assert_eq!(
            serde_json::to_string(&slow).unwrap(),
            r#"{"shape":"broadcast","lossy":true,"subscribers":4,"slow":1}"#
        );
    }

    /// Params a shape cannot be made of are named with their case; a field no ipcbench wrote is
    /// refused.
    #[test]
    fn params_that_make_no_case_are_refused() {
        let no_count: CaseParams = serde_json::from_str(r#"{"shape":"queue","producers":4}"#).unwrap();
        let err = no_count.case("queue/4x4/16B", 16, None, Transfer::Copy).unwrap_err();
        assert_eq!(err, "queue/4x4/16B: its params have no consumers");
        let both: CaseParams =
            serde_json::from_str(r#"{"shape":"stream","rate":1000,"connect":true}"#).unwrap();
        assert!(both.case("x", 16, None, Transfer::Copy).unwrap_err().contains("both a rate and connect"));
        assert!(serde_json::from_str::<CaseParams>(r#"{"shape":"stream","colour":"red"}"#).is_err());
    }
}
