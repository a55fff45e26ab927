//! The order of an A/B run's trials: in each round the libraries go in an order drawn afresh,
//! and each library's sides run back to back in one of their orders, the orders taken in turn
//! from a list shuffled once per case, so that over the rounds each side runs first equally
//! often (base before candidate in half the rounds). The draws come from one seed, recorded.

use crate::noise::SplitMix;
use crate::results::ab::Side;

/// The draws of the orders (`noise::SplitMix`), from a seed the results file records.
pub struct Draw(SplitMix);

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw(SplitMix(seed))
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.0.below(i + 1));
        }
    }
}

/// A seed from the clock and the process: each run draws its own orders.
pub fn seed() -> u64 {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    (nanos as u64) ^ (u64::from(std::process::id()) << 32)
}

/// One trial of a round: the library (its place in the case's row) and the side it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub library: usize,
    pub side: Side,
}

/// A case's orders: for each library, every order of its sides, shuffled.
pub struct CaseOrder {
    orders: Vec<Vec<Vec<Side>>>,
}

/// Every order of `sides`.
fn permutations(sides: &[Side]) -> Vec<Vec<Side>> {
    if sides.len() <= 1 {
        return vec![sides.to_vec()];
    }
    let mut out = Vec::new();
    for (i, &first) in sides.iter().enumerate() {
        let rest: Vec<Side> = sides.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, &s)| s).collect();
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

impl CaseOrder {
    /// `sides[i]`: the sides library `i` of the case runs.
    pub fn new(draw: &mut Draw, sides: &[Vec<Side>]) -> CaseOrder {
        let orders = sides
            .iter()
            .map(|s| {
                let mut all = permutations(s);
                draw.shuffle(&mut all);
                all
            })
            .collect();
        CaseOrder { orders }
    }

    /// Round `round` (from 1) of the libraries `active`: the libraries in a fresh order, each
    /// library's sides back to back in its turn's order.
    pub fn round(&self, draw: &mut Draw, round: u32, active: &[usize]) -> Vec<Slot> {
        let mut libraries = active.to_vec();
        draw.shuffle(&mut libraries);
        libraries
            .into_iter()
            .flat_map(|library| {
                let orders = &self.orders[library];
                let order = &orders[(round as usize - 1) % orders.len()];
                order.iter().map(move |&side| Slot { library, side })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Side::*;

    /// Each round runs every active library's sides back to back; over the rounds base runs
    /// before candidate in half of them (and, with a sentinel, each of the six orders of three
    /// comes once in six rounds); the libraries' order varies; one seed draws the same orders.
    #[test]
    fn rounds_are_balanced_and_drawn_from_the_seed() {
        let sides = vec![vec![Base, Candidate], vec![Base, Candidate, Sentinel], vec![Base, Candidate]];
        let plan = |seed| {
            let mut draw = Draw::new(seed);
            let order = CaseOrder::new(&mut draw, &sides);
            (1..=12).map(|k| order.round(&mut draw, k, &[0, 1, 2])).collect::<Vec<_>>()
        };
        let rounds = plan(7);
        assert_eq!(rounds, plan(7));
        assert_ne!(rounds, plan(8));
        let mut firsts = std::collections::HashSet::new();
        for (library, its) in sides.iter().enumerate() {
            let mut base_first = 0;
            let mut orders = std::collections::HashSet::new();
            for round in &rounds {
                let mine: Vec<Side> = round.iter().filter(|s| s.library == library).map(|s| s.side).collect();
                let at = round.iter().position(|s| s.library == library).unwrap();
                // Back to back.
                assert!(round[at..at + mine.len()].iter().all(|s| s.library == library), "{round:?}");
                assert_eq!(mine.len(), its.len());
                let pos = |side| mine.iter().position(|&s| s == side).unwrap();
                base_first += usize::from(pos(Base) < pos(Candidate));
                orders.insert(mine);
            }
            assert_eq!(base_first, 6, "library {library}");
            assert_eq!(orders.len(), if library == 1 { 6 } else { 2 });
        }
        for round in &rounds {
            firsts.insert(round[0].library);
        }
        assert!(firsts.len() > 1, "every round starts with the same library");
        // Only the active libraries run.
        let mut draw = Draw::new(1);
        let order = CaseOrder::new(&mut draw, &sides);
        let round = order.round(&mut draw, 3, &[2]);
        assert!(round.iter().all(|s| s.library == 2) && round.len() == 2);
    }
}
