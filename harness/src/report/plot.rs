//! What every chart shares: the compiled-in font, the colours, a chart's file names and the
//! place the report shows it, the log axes. The charts' modules (`charts`, `scatter`, `sizes`,
//! `spectrum`, `timeline`) draw on this, and none of them on another's.

use std::io::BufWriter;
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use ipcbench_api::RecvMode;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::families::Family;

/// DejaVu Sans, compiled in: PNGs need a font, and the machine's own are not looked up.
static FONT: &[u8] = include_bytes!("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
pub const SANS: &str = "sans-serif";

/// Registers the compiled-in font, once per process.
pub fn font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The font is a fixed file: a failure here is a build defect, and text would be missing.
        if plotters::style::register_font(SANS, FontStyle::Normal, FONT).is_err() {
            eprintln!("ipcbench report: the compiled-in font was refused; PNG charts will have no text");
        }
    });
}

/// A chart written as `<name>.svg` and `<name>.png`.
#[derive(Clone, Debug)]
pub struct Chart {
    pub name: String,
    pub title: String,
    pub place: Place,
}

/// Where a report shows a chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Where every library stands, at the top.
    Placing,
    /// A family's chart, above its table.
    Family(Family),
    /// Under the table of the receive modes.
    Modes,
    /// Under the table of what each figure cost.
    Cost,
    /// A timed case's percentile spectrum (`spectrum`), under its family's table.
    Spectrum(Family),
    /// A family's figures against a count (`scaling`), under its table.
    Scaling(Family),
    /// Figures against message size (`sizes`).
    Sizes,
    /// The host's probes across a run (`timeline`), under the machines table.
    Host,
    /// An A/B run's ratios (`ab`), in its section.
    Ab,
}

impl Place {
    /// The title of the report's section this chart stands in.
    pub fn title(self) -> &'static str {
        match self {
            Place::Placing => "Where each library stands",
            Place::Family(f) | Place::Spectrum(f) | Place::Scaling(f) => f.title(),
            Place::Modes => "Waiting against polling",
            Place::Cost => "What each figure costs",
            Place::Sizes => "Across message sizes",
            Place::Host => "Machines",
            Place::Ab => super::ab::TITLE,
        }
    }
}

/// The modes chart's two series.
const WAITING: RGBColor = RGBColor(230, 159, 0);
const POLLING: RGBColor = RGBColor(0, 114, 178);

pub const COLORS: [RGBColor; 16] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(57, 59, 121),
    RGBColor(173, 73, 74),
    RGBColor(99, 121, 57),
    RGBColor(30, 30, 30),
    RGBColor(140, 162, 82),
    RGBColor(107, 110, 207),
];

/// A receive mode's colour, the same in the modes chart and the floors' lines.
pub fn mode_color(mode: RecvMode) -> RGBColor {
    match mode {
        RecvMode::Waiting => WAITING,
        RecvMode::Polling => POLLING,
    }
}

pub type DrawResult<E> = std::result::Result<(), DrawingAreaErrorKind<E>>;

/// A log axis's range around `values`: `margin` times below the least and above the greatest.
pub fn log_span(values: impl Iterator<Item = f64> + Clone, margin: f64) -> std::ops::Range<f64> {
    let lo = values.clone().fold(f64::MAX, f64::min);
    let hi = values.fold(f64::MIN_POSITIVE, f64::max);
    (lo / margin)..(hi * margin)
}

/// Draws a chart into a PNG file, compressed as tightly as PNG allows: committed reports carry
/// every chart, and the encoder's default makes files twice the size for the same pixels.
pub fn png(
    path: &Path,
    (w, h): (u32, u32),
    draw: impl for<'b> FnOnce(
        DrawingArea<BitMapBackend<'b>, Shift>,
    ) -> DrawResult<<BitMapBackend<'b> as DrawingBackend>::ErrorType>,
) -> Result<()> {
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        draw(root.clone()).map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
        root.present().map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    }
    let file = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header().with_context(|| format!("writing {}", path.display()))?;
    writer.write_image_data(&pixels).with_context(|| format!("writing {}", path.display()))?;
    writer.finish().with_context(|| format!("writing {}", path.display()))
}
