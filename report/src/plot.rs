//! PNG charts with plotters: line panels (value against rank count) and bar
//! panels (grouped or stacked). Each figure of the report is a grid of these
//! panels; `figures.rs` decides what goes into them.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub type PlotResult = Result<(), Box<dyn Error>>;
pub type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

const FONT: &str = "sans-serif";

/// Fonts are read at run time (no font is vendored): DejaVu Sans from the
/// Debian package `fonts-dejavu-core`, or the file named by `UAT_REPORT_FONT`.
pub fn register_fonts() -> Result<(), String> {
    let candidates: Vec<String> = std::env::var("UAT_REPORT_FONT")
        .into_iter()
        .chain(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            ]
            .map(String::from),
        )
        .collect();
    for path in &candidates {
        if let Ok(bytes) = std::fs::read(path) {
            // The registry wants 'static bytes; one font lives as long as the
            // process anyway.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            return plotters::style::register_font(FONT, FontStyle::Normal, bytes)
                .map_err(|_| format!("{path}: not a usable TrueType font"));
        }
    }
    Err(format!(
        "no font for the plots (looked for {}): install fonts-dejavu-core (apt-get install fonts-dejavu-core; \
         scripts/setup.sh does) or set UAT_REPORT_FONT=/path/to/font.ttf",
        candidates.join(", ")
    ))
}

/// A figure: a white canvas with a title, split into `rows` × `cols` panels.
pub fn figure<'a>(path: &'a Path, title: &str, rows: usize, cols: usize) -> Result<Vec<Area<'a>>, Box<dyn Error>> {
    figure_sized(path, title, rows, cols, 900)
}

/// A figure at least `min_width` pixels wide (bar charts with many bars).
pub fn figure_sized<'a>(
    path: &'a Path,
    title: &str,
    rows: usize,
    cols: usize,
    min_width: u32,
) -> Result<Vec<Area<'a>>, Box<dyn Error>> {
    let w = (440 * cols as u32 + 40).max(min_width);
    let h = (340 * rows as u32 + 60).max(w * 2 / 5);
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE)?;
    let body = root.titled(title, (FONT, 24))?;
    Ok(body.split_evenly((rows, cols)))
}

pub fn finish(areas: Vec<Area<'_>>) -> PlotResult {
    if let Some(first) = areas.first() {
        first.present()?;
    }
    Ok(())
}

/// One line of a line panel: points (x, y, hollow). Hollow points are
/// labelled (oversubscribed) measurements.
#[derive(Clone)]
pub struct Line {
    pub name: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64, bool)>,
}

pub struct LinePanel<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    /// The x values to mark (rank counts); the axis is logarithmic.
    pub x_ticks: Vec<f64>,
    /// Fixed y range, or None for 0 .. max × 1.15.
    pub y_range: Option<(f64, f64)>,
    pub y_percent: bool,
    pub legend: bool,
    pub lines: Vec<Line>,
}

pub fn line_panel(area: &Area<'_>, p: &LinePanel<'_>) -> PlotResult {
    let (xmin, xmax) = p
        .x_ticks
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (xmin, xmax) = if xmin > xmax {
        (1.0, 2.0)
    } else {
        (xmin / 1.3, xmax * 1.3)
    };
    let ymax_data = p
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|q| q.1))
        .fold(0.0f64, f64::max);
    let (ymin, ymax) = p
        .y_range
        .unwrap_or((0.0, if ymax_data > 0.0 { ymax_data * 1.15 } else { 1.0 }));
    let mut chart = ChartBuilder::on(area)
        .caption(p.title, (FONT, 17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d((xmin..xmax).log_scale().with_key_points(p.x_ticks.clone()), ymin..ymax)?;
    let y_fmt = |y: &f64| {
        if p.y_percent {
            format!("{:.0}%", y * 100.0)
        } else {
            short(*y)
        }
    };
    chart
        .configure_mesh()
        .x_desc(p.x_desc)
        .y_desc(p.y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for line in &p.lines {
        let color = line.color;
        let style = ShapeStyle::from(&color).stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.points.iter().map(|q| (q.0, q.1)), style))?
            .label(line.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(2)));
        chart.draw_series(line.points.iter().map(|&(x, y, hollow)| {
            let s = if hollow { color.stroke_width(2) } else { color.filled() };
            Circle::new((x, y), 4, s)
        }))?;
    }
    if p.legend && !p.lines.is_empty() {
        chart
            .configure_series_labels()
            .label_font((FONT, 12))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    Ok(())
}

/// A bar panel: groups along x, one bar per series in each group (or one
/// stacked bar per group).
pub struct BarPanel<'a> {
    pub title: &'a str,
    pub y_desc: &'a str,
    pub groups: Vec<String>,
    /// (series name, colour, one value per group).
    pub series: Vec<(String, RGBColor, Vec<Option<f64>>)>,
    pub stacked: bool,
    pub log_y: bool,
    /// A horizontal reference line (value, legend label).
    pub reference: Option<(f64, String)>,
    /// Print each bar's value above it.
    pub value_labels: bool,
    pub y_percent: bool,
}

pub fn bar_panel(area: &Area<'_>, p: &BarPanel<'_>) -> PlotResult {
    let n = p.groups.len().max(1);
    let values = |i: usize| p.series.iter().filter_map(move |s| s.2.get(i).copied().flatten());
    let top = if p.stacked {
        (0..n).map(|i| values(i).sum::<f64>()).fold(0.0, f64::max)
    } else {
        (0..n).flat_map(values).fold(0.0, f64::max)
    };
    let top = top.max(p.reference.as_ref().map_or(0.0, |r| r.0));
    // Group i is centred on x = i: with one label per unit the axis puts
    // its key points exactly there.
    let groups = p.groups.clone();
    let x_fmt = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            groups.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    // Stacked shares keep headroom above 100% for the legend, unlabelled.
    let y_fmt = |y: &f64| match (p.y_percent, p.stacked) {
        (true, true) if *y > 100.0 + 1e-9 => String::new(),
        (true, _) => format!("{:.0}%", y),
        _ => short(*y),
    };
    let label_size = if p.series.len() > 3 { 10 } else { 11 };
    let label_style = TextStyle::from((FONT, label_size).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    let value_label = |v: f64| if p.y_percent { format!("{v:.1}%") } else { short(v) };
    let bar_geometry = |group: usize, s: usize| {
        let width = 0.8 / if p.stacked { 1.0 } else { p.series.len().max(1) as f64 };
        let x0 = group as f64 - 0.4 + if p.stacked { 0.0 } else { s as f64 * width };
        (x0, x0 + width)
    };
    macro_rules! draw {
        ($chart:ident, $base:expr) => {{
            $chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(n + 1)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .y_desc(p.y_desc)
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            for (s, (name, color, vals)) in p.series.iter().enumerate() {
                let color = *color;
                let mut rects = Vec::new();
                let mut labels = Vec::new();
                for (g, v) in vals.iter().enumerate() {
                    let Some(v) = *v else { continue };
                    let (x0, x1) = bar_geometry(g, s);
                    let below: f64 = if p.stacked {
                        p.series[..s].iter().filter_map(|t| t.2.get(g).copied().flatten()).sum()
                    } else {
                        0.0
                    };
                    let (y0, y1) = if p.stacked { (below, below + v) } else { ($base, v) };
                    rects.push(Rectangle::new([(x0, y0), (x1, y1)], color.filled()));
                    if p.value_labels && !p.stacked {
                        labels.push(Text::new(value_label(v), ((x0 + x1) / 2.0, v), label_style.clone()));
                    }
                }
                $chart
                    .draw_series(rects)?
                    .label(name.clone())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
                $chart.draw_series(labels)?;
            }
            if let Some((v, name)) = &p.reference {
                $chart
                    .draw_series(LineSeries::new(
                        vec![(-0.5, *v), (n as f64 - 0.5, *v)],
                        BLACK.stroke_width(1),
                    ))?
                    .label(name.clone())
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], BLACK.stroke_width(1)));
            }
            $chart
                .configure_series_labels()
                .label_font((FONT, 12))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .position(SeriesLabelPosition::UpperRight)
                .draw()?;
        }};
    }
    let builder = |area| {
        let mut b = ChartBuilder::on(area);
        b.caption(p.title, (FONT, 17))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64);
        b
    };
    let x_range = -0.5..n as f64 - 0.5;
    if p.log_y {
        let bottom = (0..n)
            .flat_map(values)
            .filter(|v| *v > 0.0)
            .fold(f64::MAX, f64::min)
            .min(top)
            / 3.0;
        let bottom = if bottom.is_finite() && bottom > 0.0 {
            bottom
        } else {
            1e-3
        };
        // Headroom above the tallest bar for the legend: a tenth of the
        // data's decades per legend row.
        let decades = (top.max(bottom) / bottom).log10().max(1.0);
        let headroom = 10f64.powf(decades * 0.1 * (p.series.len() as f64 + 1.0));
        let mut chart =
            builder(area).build_cartesian_2d(x_range, (bottom..(top.max(bottom) * headroom)).log_scale())?;
        draw!(chart, bottom);
    } else {
        let headroom = if p.stacked {
            1.6
        } else {
            1.25 + 0.1 * p.series.len() as f64
        };
        let mut chart =
            builder(area).build_cartesian_2d(x_range, 0.0..(if top > 0.0 { top * headroom } else { 1.0 }))?;
        draw!(chart, 0.0);
    }
    Ok(())
}

/// A short tick or bar label: 0.012, 1.5, 250, 12k, 3.4M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// One colour per configuration, the same in every figure.
pub fn config_color(config: &str) -> RGBColor {
    match config {
        "native" => RGBColor(70, 70, 70),
        "am" | "am, EC on" => RGBColor(214, 39, 40),
        "am, EC off" => RGBColor(255, 127, 14),
        "rdma-emulated" | "rdma-emulated, EC on" => RGBColor(31, 119, 180),
        "rdma-emulated, EC off" => RGBColor(23, 190, 207),
        "paper" => RGBColor(44, 160, 44),
        c if c.starts_with("rayon") => RGBColor(140, 86, 75),
        "frame model" => RGBColor(127, 127, 127),
        "call model" => RGBColor(188, 189, 34),
        _ => RGBColor(148, 103, 189),
    }
}

/// Colours for series that are not configurations (phases, rank counts).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels_stay_short() {
        assert_eq!(short(0.0123), "0.012");
        assert_eq!(short(1.5), "1.50");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(12_345.0), "12k");
        assert_eq!(short(3.4e6), "3.4M");
    }
}
