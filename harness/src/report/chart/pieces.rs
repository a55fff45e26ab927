//! What every chart shares, and nothing above it: the compiled-in font, each library's colour
//! and marker by its place (`style`), a chart's file names and the place the report shows it,
//! the widest a chart may be, the axes' ticks (`ticks`), legends beside the data and labels
//! placed apart (`layout`), lines on log axes and their small multiples (`multiples`). The
//! charts (`chart::*`) draw on these; these read no view, no result and no other chart.

mod layout;
pub mod multiples;
mod style;
mod ticks;

use std::io::BufWriter;
use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use ipcbench_api::RecvMode;
use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;

pub use layout::{
    Bounds, Entry, ROW, Stroke, around, heading, heading_height, legend, legend_width, place_labels, runs,
    text_width,
};
pub use style::{CONTROL, Marker, Style, mark, nth, placed};
use ticks::log_ticks;
pub use ticks::{narrow, number_tick, time_tick};

use crate::pattern::Family;

/// The widest a chart is drawn: a README shows it whole, and its words stay readable. A chart
/// with more to show goes down in rows.
pub const MAX_W: u32 = 1600;

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
            Place::Ab => "A/B: candidate against base",
        }
    }
}

/// The modes chart's two series.
const WAITING: RGBColor = RGBColor(230, 159, 0);
const POLLING: RGBColor = RGBColor(0, 114, 178);

/// A receive mode's colour, the same in the modes chart and the floors' lines.
pub fn mode_color(mode: RecvMode) -> RGBColor {
    match mode {
        RecvMode::Waiting => WAITING,
        RecvMode::Polling => POLLING,
    }
}

pub type DrawResult<E> = std::result::Result<(), DrawingAreaErrorKind<E>>;

/// A log axis's range around `values`: `margin` times below the least and above the greatest.
pub fn log_span(values: impl Iterator<Item = f64> + Clone, margin: f64) -> Range<f64> {
    let lo = values.clone().fold(f64::MAX, f64::min);
    let hi = values.fold(f64::MIN_POSITIVE, f64::max);
    (lo / margin)..(hi * margin)
}

/// A log axis over `range` with ticks that read (`log_ticks`), and a faint line at every digit.
pub fn log_axis(range: Range<f64>) -> WithKeyPoints<LogCoord<f64>> {
    let (lo, hi) = (range.start, range.end);
    let digits: Vec<f64> = (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
        .flat_map(|e| (1..10).map(move |m| m as f64 * 10f64.powi(e)))
        .filter(|v| *v >= lo && *v <= hi)
        .collect();
    range.log_scale().with_key_points(log_ticks(lo, hi)).with_light_points(digits)
}

/// Draws a chart into a PNG file, compressed as tightly as PNG allows: committed reports carry
/// every chart, and the encoder's default makes files twice the size for the same pixels. Its
/// pixels are kept as a palette of at most 256 colours (`indexed`), a third the bytes or less.
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
    let (palette, indices) = indexed(&pixels);
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_palette(palette);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header().with_context(|| format!("writing {}", path.display()))?;
    writer.write_image_data(&indices).with_context(|| format!("writing {}", path.display()))?;
    writer.finish().with_context(|| format!("writing {}", path.display()))
}

/// RGB pixels as a palette of at most 256 colours and an index per pixel: every colour when there
/// are no more, else the 256 most common, each other colour taken to the nearest of them. A
/// chart is a few flat colours and the blends along its edges, so only an edge's shade moves.
fn indexed(rgb: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use std::collections::HashMap;
    let mut counts: HashMap<[u8; 3], u32> = HashMap::new();
    for p in rgb.chunks_exact(3) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    let mut common: Vec<([u8; 3], u32)> = counts.into_iter().collect();
    // Ties by colour, so the same pixels give the same file.
    common.sort_by_key(|&(c, n)| (std::cmp::Reverse(n), c));
    common.truncate(256);
    let palette: Vec<[u8; 3]> = common.iter().map(|(c, _)| *c).collect();
    let distance =
        |a: [u8; 3], b: [u8; 3]| -> u32 { (0..3).map(|i| (a[i] as i32 - b[i] as i32).pow(2) as u32).sum() };
    let nearest = |c: [u8; 3]| -> u8 {
        // At most 256 entries, so the position fits a byte.
        (0..palette.len()).min_by_key(|&i| distance(c, palette[i])).unwrap_or(0) as u8
    };
    let mut index: HashMap<[u8; 3], u8> = palette.iter().enumerate().map(|(i, c)| (*c, i as u8)).collect();
    let indices = rgb
        .chunks_exact(3)
        .map(|p| *index.entry([p[0], p[1], p[2]]).or_insert_with_key(|c| nearest(*c)))
        .collect();
    (palette.concat(), indices)
}

#[cfg(test)]
mod tests {
    use super::indexed;

    /// Few colours are kept exactly; past 256 the most common stay exact and every other pixel
    /// takes its nearest.
    #[test]
    fn a_chart_is_kept_as_at_most_256_colours() {
        let few: Vec<u8> = [[255, 255, 255], [0, 0, 0], [255, 255, 255], [10, 20, 30]].concat();
        let (palette, indices) = indexed(&few);
        let back: Vec<u8> =
            indices.iter().flat_map(|&i| palette[i as usize * 3..i as usize * 3 + 3].to_vec()).collect();
        assert_eq!(back, few);
        assert_eq!(&palette[..3], &[255, 255, 255], "the most common colour first");
        // 256 greys twice each and 255 tinted ones once: the greys are the palette, and each
        // tinted pixel takes the grey a step from it.
        let mut many: Vec<u8> = (0..=255u8).flat_map(|v| [v, v, v, v, v, v]).collect();
        many.extend((0..255u8).flat_map(|v| [v, v, v + 1]));
        let (palette, indices) = indexed(&many);
        assert_eq!((palette.len(), indices.len()), (256 * 3, many.len() / 3));
        for (p, &i) in many.chunks_exact(3).zip(&indices) {
            let q = &palette[i as usize * 3..i as usize * 3 + 3];
            assert!(p.iter().zip(q).all(|(a, b)| a.abs_diff(*b) <= 1), "{p:?} as {q:?}");
        }
    }
}
