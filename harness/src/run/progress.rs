//! What the terminal shows while a run goes: on a terminal, one status line (the case, library,
//! receive mode and run under way, trials and results done of all, and the time left) drawn as
//! each trial starts and wiped as it ends, so the driver writes nothing while children measure;
//! elsewhere (a file, a pipe, CI) only the plain line of each finished result, with the time left.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::format::about;

/// Time a trial takes beyond its warm-up and window before any has been timed: set-up, drain
/// and the host's probes (here about 0.09 s: the reference run's 3,839 trials of 1.3 s took 89
/// minutes; an A/B run's 2,925 of 0.35 s took 20.5).
const OVERHEAD_GUESS: Duration = Duration::from_millis(150);

pub struct Progress {
    /// Redraw a status line (standard error is a terminal and no verbose lines interleave).
    live: bool,
    started: Instant,
    /// Trials planned and done; results planned and done.
    trials: usize,
    trials_done: usize,
    results: usize,
    results_done: usize,
    /// A trial's time before one has been timed.
    guess: Duration,
}

impl Progress {
    pub fn new(trials: usize, results: usize, window: Duration, verbose: bool) -> Progress {
        Progress {
            live: std::io::stderr().is_terminal() && !verbose,
            started: Instant::now(),
            trials,
            trials_done: 0,
            results,
            results_done: 0,
            guess: window + OVERHEAD_GUESS,
        }
    }

    /// The time the trials left will take, at the pace of those done so far.
    pub fn left(&self) -> Duration {
        let to_do = self.trials.saturating_sub(self.trials_done) as u32;
        let each =
            if self.trials_done == 0 { self.guess } else { self.started.elapsed() / self.trials_done as u32 };
        each * to_do
    }

    /// What the run expects to take before it starts, in words: its trials at their windows and
    /// the guess of their set-up.
    pub fn expected(&self) -> String {
        format!(
            "{} trials of about {:.2} s each: {}",
            self.trials,
            self.guess.as_secs_f64(),
            about(self.guess * self.trials as u32)
        )
    }

    /// A trial starts: `what` is its case, library, mode and run.
    pub fn trial_starts(&mut self, what: &str) {
        if !self.live {
            return;
        }
        let line = format!(
            "▶ {what} │ trial {} of {} │ {} of {} results │ {}",
            self.trials_done + 1,
            self.trials.max(self.trials_done + 1),
            self.results_done,
            self.results,
            left_text(self.left())
        );
        // A status line that wrapped could not be wiped by one carriage return.
        let line: String = line.chars().take(crate::console::width().saturating_sub(1)).collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{line}");
        let _ = err.flush();
    }

    /// A trial ended: its status line goes, before anything else is written.
    pub fn trial_ends(&mut self) {
        self.trials_done += 1;
        if self.live {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }

    /// Trials that `--runs auto` added beyond the plan.
    pub fn trials_added(&mut self, n: usize) {
        self.trials += n;
    }

    /// Result `n` (of all the run's, kept ones included) is done: its line, `[n/total]` first,
    /// the time left last.
    pub fn result(&mut self, n: usize, line: &str) {
        self.results_done = n;
        let left = if self.results_done < self.results && self.trials_done < self.trials {
            format!(" ({})", left_text(self.left()))
        } else {
            String::new()
        };
        crate::console::say(&format!("[{}/{}] {line}{left}", self.results_done, self.results));
    }
}

/// `about 31 min left`, `about 45 s left`, `about 1 h 05 min left`.
pub fn left_text(d: Duration) -> String {
    format!("{} left", about(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_reads_in_its_unit() {
        assert_eq!(left_text(Duration::from_secs(45)), "about 45 s left");
        assert_eq!(left_text(Duration::from_secs(31 * 60 + 10)), "about 31 min left");
        assert_eq!(left_text(Duration::from_secs(3600 + 5 * 60)), "about 1 h 05 min left");
    }

    #[test]
    fn before_any_trial_the_estimate_is_the_windows_and_a_guess() {
        let p = Progress::new(10, 5, Duration::from_millis(1300), false);
        assert_eq!(p.left(), (Duration::from_millis(1300) + OVERHEAD_GUESS) * 10);
        assert_eq!(p.expected(), "10 trials of about 1.45 s each: about 14 s");
        let p = Progress::new(3000, 900, Duration::from_millis(1300), false);
        assert_eq!(p.expected(), "3000 trials of about 1.45 s each: about 1 h 12 min");
    }
}
