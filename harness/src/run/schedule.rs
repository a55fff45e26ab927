//! The order of a case's work, as a pure function of the order asked for, the runs and which
//! libraries of the case are measured: the driver follows it step by step, skipping a library's
//! runs once it failed and every run once the run is interrupted.

use crate::results::Order;

/// One step of a case, for library `library` (its place in the case's row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run number `run` (from 1) of every receive mode of the library.
    Run { library: usize, run: u32 },
    /// The case's rounds are done: the extra rounds its host states ask for (`Order::Rounds`).
    Extra,
    /// The library's result is done: its medians, its line, and the results file rewritten.
    Finish { library: usize },
}

/// The steps of one case. `measured[i]` says whether library `i` of its row is measured (the
/// others, a dash, a skip or a result kept from before, are only finished), in the row's order.
pub fn case(order: Order, runs: u32, measured: &[bool]) -> Vec<Step> {
    let mut steps = Vec::new();
    match order {
        Order::Sequential => {
            for (library, &m) in measured.iter().enumerate() {
                if m {
                    steps.extend((1..=runs).map(|run| Step::Run { library, run }));
                }
                steps.push(Step::Finish { library });
            }
        }
        Order::Interleaved | Order::Rounds => {
            let libraries: Vec<usize> = (0..measured.len()).filter(|&i| measured[i]).collect();
            for run in 1..=runs {
                // Rounds rotate: round k starts k - 1 places on.
                let turn = if order == Order::Rounds && !libraries.is_empty() {
                    (run as usize - 1) % libraries.len()
                } else {
                    0
                };
                let round = libraries[turn..].iter().chain(&libraries[..turn]);
                steps.extend(round.map(|&library| Step::Run { library, run }));
            }
            if order == Order::Rounds && !libraries.is_empty() {
                steps.push(Step::Extra);
            }
            steps.extend((0..measured.len()).map(|library| Step::Finish { library }));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::Step::{Extra, Finish, Run};
    use super::*;

    #[test]
    fn sequential_runs_each_library_in_turn_and_finishes_it_at_once() {
        assert_eq!(
            case(Order::Sequential, 2, &[true, false, true]),
            [
                Run { library: 0, run: 1 },
                Run { library: 0, run: 2 },
                Finish { library: 0 },
                Finish { library: 1 },
                Run { library: 2, run: 1 },
                Run { library: 2, run: 2 },
                Finish { library: 2 },
            ]
        );
    }

    #[test]
    fn interleaved_runs_rounds_then_finishes_every_library() {
        assert_eq!(
            case(Order::Interleaved, 2, &[true, false, true]),
            [
                Run { library: 0, run: 1 },
                Run { library: 2, run: 1 },
                Run { library: 0, run: 2 },
                Run { library: 2, run: 2 },
                Finish { library: 0 },
                Finish { library: 1 },
                Finish { library: 2 },
            ]
        );
    }

    #[test]
    fn rounds_rotate_their_order_then_take_the_extra_rounds_then_finish() {
        assert_eq!(
            case(Order::Rounds, 3, &[true, true, false, true]),
            [
                Run { library: 0, run: 1 },
                Run { library: 1, run: 1 },
                Run { library: 3, run: 1 },
                Run { library: 1, run: 2 },
                Run { library: 3, run: 2 },
                Run { library: 0, run: 2 },
                Run { library: 3, run: 3 },
                Run { library: 0, run: 3 },
                Run { library: 1, run: 3 },
                Extra,
                Finish { library: 0 },
                Finish { library: 1 },
                Finish { library: 2 },
                Finish { library: 3 },
            ]
        );
    }

    #[test]
    fn a_case_with_nothing_to_measure_only_finishes() {
        for order in [Order::Sequential, Order::Interleaved, Order::Rounds] {
            assert_eq!(case(order, 3, &[false, false]), [Finish { library: 0 }, Finish { library: 1 }]);
            assert!(case(order, 3, &[]).is_empty());
        }
    }
}
