//! `ipcbench doctor --calibrate`: can this machine tell a change? The control's round trip
//! (`stream-rtt/16B`, polling) is paired against itself as `run --against` pairs two builds,
//! first as it is, then with a calibration weight on one side: a busy wait of 5 % and then 10 %
//! of its round trip before each message its pinger sends (`role::handicap`). What the pairing
//! detects of each weight, against what was put in, and the rounds it took, is the machine's
//! own proof of what an A/B run here can tell. It pairs the round trips' rate, their mean, which
//! counts every nanosecond of the weight, where the p50 moves in the clock's steps (about 10 ns
//! here, the size of the 5 % weight).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::RecvMode;

use crate::ab::{self, order};
use crate::format::{nanos, whole_percent};
use crate::options::{Options, Watch};
use crate::report::model::{Cell, Table};
use crate::report::terminal;
use crate::results::ab::{AbFigure, AbSettings, AbVerdict, Side};
use crate::results::{DEFAULT_CONNECTS, DEFAULT_SLOW_WORK, Figure, Order, RunConfig, Verify};
use crate::run::ab::Plan;
use crate::run::trial::Launch;
use crate::{console, matrix, registry, run};

/// The case weighed: the control's round trip, whose pinger's wait adds to each round trip whole.
const CASE: &str = "stream-rtt/16B";
/// The most time one pairing's rounds may take: 30 rounds of three trials take about 90 s.
const PAIRING_BUDGET_S: f64 = 300.0;

/// The weights, as shares of the round trip measured with none.
const WEIGHTS: [f64; 3] = [0.0, 0.05, 0.10];

/// A folder that goes when the calibration ends, whatever ends it.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The calibration's table, and whether it told what it should: the 10 % weight slower, the
/// none not changed.
pub fn calibrate() -> Result<(String, bool)> {
    let case = matrix::find(CASE)?;
    let (_, mut control) = registry::find(registry::CONTROL)?;
    control.modes = &[RecvMode::Polling];
    let scratch = Scratch(std::env::temp_dir().join(format!("ipcbench-calibrate-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).with_context(|| format!("creating {}", scratch.0.display()))?;
    let stop = || run::INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    ctrlc::set_handler(stop).map_err(|e| anyhow!("installing the Ctrl-C handler: {e}"))?;
    let this = ab::binary::this_binary()?;
    let mut round_trip = None;
    let mut rows: Vec<Row> = Vec::new();
    for share in WEIGHTS {
        // The host's placement may change the round trip between pairings (threefold here):
        // a weight that came out far from its share of the pairing's own round trip is weighed
        // again from it, twice at most.
        for attempt in 1..=3 {
            let weight_ns: f64 = match round_trip {
                Some(t) => share * t,
                None if share == 0.0 => 0.0,
                None => bail!("the unweighted pairing gave no round trip to weigh"),
            };
            let (figure, sentinel) = pairing(&case, &control, &scratch.0, &this, weight_ns)?;
            round_trip = Some(mean_ns(figure.base));
            let put_in = weight_ns / mean_ns(figure.base);
            let near = share == 0.0 || (0.8 * share..=1.5 * share).contains(&put_in);
            if near || attempt == 3 {
                rows.push(Row { share, weight_ns, figure, sentinel, near });
                break;
            }
            console::say(&format!(
                "ipcbench doctor: the round trip moved to {} (the host's placement): {} is {} of it, not {}; \
                 weighed again",
                nanos(mean_ns(figure.base)),
                nanos(weight_ns),
                whole_percent(put_in),
                whole_percent(share)
            ));
        }
    }
    // Told: no weight not called a change, and the weights of 10% called slower, each within
    // 0.8 to 1.5 times its share of its own pairing's round trip: one the host kept moving
    // away from it (weighed three times) proves nothing of a 10% change.
    let told = rows.iter().all(|r| {
        let changed = matches!(r.figure.verdict, AbVerdict::Slower | AbVerdict::Faster);
        match r.share {
            0.0 => !changed,
            s if s >= 0.10 => r.near && r.figure.verdict == AbVerdict::Slower,
            _ => true,
        }
    });
    Ok((text(&rows, told), told))
}

/// One weight's pairing.
struct Row {
    share: f64,
    weight_ns: f64,
    figure: AbFigure,
    sentinel: Option<AbFigure>,
    /// Whether the weight came out within 0.8 to 1.5 times its share of the pairing's round trip.
    near: bool,
}

/// The control against itself with `weight_ns` on the candidate's side: its figure, and the
/// sentinel's.
fn pairing(
    case: &matrix::Case,
    control: &ipcbench_api::LibraryInfo,
    out: &std::path::Path,
    this: &crate::results::ab::Binary,
    weight_ns: f64,
) -> Result<(AbFigure, Option<AbFigure>)> {
    let exe = this.path.clone();
    let weight = Duration::from_nanos(weight_ns.round() as u64);
    let settings = AbSettings {
        against: exe.clone(),
        threshold: ab::THRESHOLD,
        resolve: ab::RESOLVE,
        min_rounds: ab::MIN_ROUNDS,
        max_rounds: ab::MAX_ROUNDS,
        // Its rounds go to the cap of 30 where they must: a pairing of one library is short,
        // and 6 times its plain run would stop it at its first 8.
        budget_s: Some(PAIRING_BUDGET_S),
        allow_unresolved: false,
        handicap_ns: Some(weight.as_nanos() as f64),
        figure: Some(Figure::MsgsPerS),
    };
    let opts = Options {
        cases: vec![case.clone()],
        libraries: vec![control.clone()],
        config: config(settings),
        out: out.to_path_buf(),
        watch: Watch { verbose: false, wide: false, grace: Duration::from_secs(10) },
        fault: None,
    };
    let candidate = crate::results::ab::Binary { side: Side::Candidate, ..this.clone() };
    let plan = Plan {
        candidate: Launch { exe, handicap: Some(weight), side: Some(Side::Candidate) },
        binaries: vec![this.clone(), candidate],
        seed: order::seed(),
    };
    console::say(&format!(
        "ipcbench doctor: the control against itself, a weight of {} a message",
        nanos(weight_ns)
    ));
    let ended = run::ab::run(&opts, plan)?;
    if ended.interrupted {
        bail!("interrupted");
    }
    let side = |s: Side| ended.record.figures.iter().find(|f| f.side == s).cloned();
    let Some(figure) = side(Side::Candidate) else {
        bail!("the control's {CASE} gave no paired figure: {}", ended.why.join("; "))
    };
    Ok((figure, side(Side::Sentinel)))
}

/// The settings of every pairing of the calibration: short windows (the round trip is short),
/// the A/B's own rounds and rules.
fn config(settings: AbSettings) -> RunConfig {
    RunConfig {
        runs: 3,
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(200),
        setup_timeout: Duration::from_secs(10),
        skip_oversubscribed: false,
        order: Order::Rounds,
        buffer: None,
        connects: DEFAULT_CONNECTS,
        runs_auto: None,
        pin: None,
        slow_work: DEFAULT_SLOW_WORK,
        verify: Verify::Sample,
        ab: Some(settings),
    }
}

/// The mean round trip of a rate of round trips per second, in nanoseconds.
fn mean_ns(rate: f64) -> f64 {
    1e9 / rate
}

fn text(rows: &[Row], told: bool) -> String {
    let header = [
        "weight",
        "busy wait",
        "round trip",
        "put in",
        "detected",
        "added",
        "95% interval",
        "verdict",
        "rounds",
        "sentinel",
    ];
    // The pairing's ratio is of rates (other over base); a round trip's is its inverse.
    let table = Table {
        header: header.map(String::from).to_vec(),
        rows: rows
            .iter()
            .map(|Row { share, weight_ns, figure: f, sentinel, near }| {
                let base = mean_ns(f.base);
                [
                    whole_percent(*share),
                    nanos(*weight_ns),
                    nanos(base),
                    format!("x{:.3}{}", 1.0 + weight_ns / base, if *near { "" } else { " (moved)" }),
                    format!("x{:.3}", 1.0 / f.ratio),
                    format!("{:+.1} ns", base * (1.0 / f.ratio - 1.0)),
                    format!("{:.3} to {:.3}", 1.0 / f.high, 1.0 / f.low),
                    f.verdict.as_str().into(),
                    f.rounds.to_string(),
                    sentinel
                        .as_ref()
                        .map_or("-".into(), |s| format!("x{:.3} {}", 1.0 / s.ratio, s.verdict.as_str())),
                ]
                .map(Cell::Text)
                .to_vec()
            })
            .collect(),
        notes: Vec::new(),
    };
    let verdict = if told {
        "This machine told the weights apart: the unweighted pairing was not called a change, and the 10% weight was called slower."
    } else {
        "This machine did NOT tell the weights apart as it should (the unweighted pairing called changed, \
         or the 10% weight not called slower, or the host moved its round trip away from every weighing of it: \
         \"(moved)\"): an A/B run here may miss a change of that size or call one that is not there."
    };
    format!(
        "ipcbench doctor --calibrate: the control's {CASE} (polling) against itself, one side weighed by a busy \
         wait before each message its pinger sends; \"round trip\" is the unweighted side's mean, \"put in\" the \
         round trip the weight should make of it, \"detected\" and \"added\" what the pairing measured of the \
         mean round trip (its ratio's interval, the verdict and the sentinel's ratio likewise).\n\n{}\n\n{verdict}",
        terminal::render(&table)
    )
}
