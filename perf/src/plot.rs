//! Latency plots as hand-written SVG: one chart per scenario, the percentile
//! curve of every library on it, like HdrHistogram's plots. The x axis is
//! the percentile on a log scale of 1 / (1 - q) (0%, 90%, 99%, 99.9%, ...,
//! then the max at the right edge); the y axis is per-op time, log scale.

use std::fmt::Write as _;

use crate::report::Row;

const W: f64 = 760.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 120.0;

const COLORS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// A file name for `scenario`: lowercase ASCII letters and digits, dashes between.
pub fn slug(scenario: &str) -> String {
    let mut out = String::new();
    for c in scenario.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// x position of quantile `q` in decades of 1 / (1 - q); the max sits one
/// decade right of `last`.
fn decades(q: f64, last: f64) -> f64 {
    if q >= 1.0 {
        last + 1.0
    } else {
        (1.0 / (1.0 - q)).log10()
    }
}

/// The chart of one scenario's rows, values in `unit`.
pub fn svg(scenario: &str, rows: &[&Row], unit: &str) -> String {
    // Finest finite quantile of any row, in decades.
    let last = rows
        .iter()
        .flat_map(|r| r.curve.iter())
        .filter(|(q, _)| *q < 1.0)
        .map(|(q, _)| decades(*q, 0.0))
        .fold(1.0f64, f64::max);
    // 1 - 10^-5 lands a hair above 5 decades in floating point: round first.
    let last = ((last * 1e6).round() / 1e6).ceil();
    let xmax = last + 1.0;
    let vals = rows
        .iter()
        .flat_map(|r| r.curve.iter().map(|p| p.1))
        .filter(|v| *v > 0.0);
    let (lo, hi) = vals.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if hi <= 0.0 { (1.0, 10.0) } else { (lo, hi) };
    let ylo = lo.log10().floor();
    let yhi = hi.log10().ceil().max(ylo + 1.0);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |d: f64| LEFT + d / xmax * pw;
    let py = |v: f64| TOP + ph - (v.max(1e-9).log10() - ylo) / (yhi - ylo) * ph;

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="13" font-weight="bold">{}</text>"#,
        W / 2.0,
        esc(scenario)
    );
    // Grid and axes.
    for d in 0..=(xmax as i32) {
        let x = px(f64::from(d));
        let label = if f64::from(d) > last {
            "max".to_string()
        } else {
            percentile_label(d)
        };
        let _ = writeln!(
            o,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            TOP + ph,
            TOP + ph + 15.0
        );
    }
    for e in (ylo as i32)..=(yhi as i32) {
        let y = py(10f64.powi(e));
        let _ = writeln!(
            o,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 5.0,
            y + 4.0,
            fmt_pow10(e)
        );
    }
    let _ = writeln!(
        o,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">percentile (log scale of 1/(1-q))</text>"#,
        LEFT + pw / 2.0,
        TOP + ph + 32.0
    );
    let _ = writeln!(
        o,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{} per operation (log scale)</text>"#,
        TOP + ph / 2.0,
        esc(unit)
    );
    // Curves and legend.
    for (i, r) in rows.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<String> = r
            .curve
            .iter()
            .map(|&(q, v)| format!("{:.1},{:.1}", px(decades(q, last)), py(v)))
            .collect();
        let _ = writeln!(
            o,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
            pts.join(" ")
        );
        let ly = TOP + ph + 50.0 + 14.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{} (p50 {:.1}, p99 {:.1})</text>"#,
            ly - 4.0,
            LEFT + 20.0,
            ly - 4.0,
            LEFT + 26.0,
            ly,
            esc(&r.library),
            r.p50,
            r.p99
        );
    }
    o.push_str("</svg>\n");
    o
}

/// 0 -> "0%", 1 -> "90%", 2 -> "99%", 3 -> "99.9%", ...
fn percentile_label(d: i32) -> String {
    match d {
        0 => "0%".into(),
        1 => "90%".into(),
        d => format!("99.{}%", "9".repeat((d - 2) as usize)).replace("99.%", "99%"),
    }
}

fn fmt_pow10(e: i32) -> String {
    if (0..=6).contains(&e) {
        format!("{}", 10u64.pow(e as u32))
    } else {
        format!("1e{e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(lib: &str, curve: Vec<(f64, f64)>) -> Row {
        Row {
            scenario: "s".into(),
            library: lib.into(),
            baseline: false,
            note: String::new(),
            p50: 10.0,
            p90: 11.0,
            p99: 20.0,
            p999: 30.0,
            max: 500.0,
            samples: 1000,
            batch: 1,
            ratio: None,
            rounds: Vec::new(),
            round_ratio: None,
            curve,
        }
    }

    #[test]
    fn labels_and_slugs() {
        assert_eq!(percentile_label(0), "0%");
        assert_eq!(percentile_label(1), "90%");
        assert_eq!(percentile_label(2), "99%");
        assert_eq!(percentile_label(4), "99.99%");
        assert_eq!(
            slug("ws parse text 128B (client role)"),
            "ws-parse-text-128b-client-role"
        );
        assert_eq!(fmt_pow10(3), "1000");
    }

    #[test]
    fn one_polyline_per_library_inside_the_frame() {
        let a = row(
            "tick<wire>",
            vec![(0.0, 10.0), (0.9, 11.0), (0.999, 30.0), (1.0, 500.0)],
        );
        let b = row("peer", vec![(0.0, 40.0), (0.99, 60.0), (1.0, 90.0)]);
        let s = svg("scenario & co", &[&a, &b], "ticks");
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("tick&lt;wire&gt;") && s.contains("scenario &amp; co"));
        assert!(s.contains(">max<") && s.contains(">99.9%<"));
        // The axis ends at the finest quantile plotted, then the max.
        assert!(!s.contains(">99.99%<"));
        let c = row("x", vec![(0.0, 1.0), (0.99999, 2.0), (1.0, 3.0)]);
        let s = svg("s", &[&c], "ticks");
        assert!(s.contains(">99.999%<") && !s.contains(">99.9999%<"), "{s}");
        // Every plotted point lies within the plot area.
        for line in s.lines().filter(|l| l.starts_with("<polyline")) {
            let pts = line
                .split("points=\"")
                .nth(1)
                .unwrap()
                .trim_end_matches("\"/>");
            for p in pts.split(' ') {
                let (x, y) = p.split_once(',').unwrap();
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                assert!((LEFT..=W - RIGHT).contains(&x), "{x}");
                assert!((TOP - 0.01..=H - BOTTOM + 0.01).contains(&y), "{y}");
            }
        }
    }
}
