//! A table of strings, written as Markdown (the report, the summary on
//! stdout) or CSV (the machine-readable copy).

use std::fmt::Write as _;

#[derive(Clone, Debug, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.as_ref().to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len(), "row width");
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// A GitHub-flavoured Markdown table; numeric-looking columns are
    /// right-aligned.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let cell = |c: &str| c.replace('|', "\\|");
        let _ = writeln!(
            s,
            "| {} |",
            self.headers.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | ")
        );
        let align: Vec<&str> = (0..self.headers.len())
            .map(|i| {
                let numeric = self.rows.iter().all(|r| {
                    let c = r[i].trim_end_matches(['%', '×', 's', ' ']);
                    c.is_empty()
                        || c == "–"
                        || c.replace([',', '.', '(', ')'], "")
                            .chars()
                            .all(|ch| ch.is_ascii_digit())
                });
                if numeric && i > 0 {
                    "---:"
                } else {
                    "---"
                }
            })
            .collect();
        let _ = writeln!(s, "|{}|", align.join("|"));
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
        }
        s
    }

    /// RFC 4180 CSV (quotes only where needed).
    pub fn csv(&self) -> String {
        let field = |f: &str| {
            if f.contains([',', '"', '\n']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.to_string()
            }
        };
        let mut s = String::new();
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            let _ = writeln!(s, "{}", r.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
        }
        s
    }
}

/// A number for a table: `–` when absent, else `digits` decimals.
/// The lower median of the finite values (None when there are none).
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (!xs.is_empty()).then(|| xs[(xs.len() - 1) / 2])
}

/// `lo–hi` of the values (3 decimals), `–` when there are none.
pub fn spread(xs: &[f64]) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if xs.is_empty() {
        "–".into()
    } else {
        format!("{lo:.3}–{hi:.3}")
    }
}

pub fn fmt(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "–".into(),
    }
}

/// A number for a CSV: empty when absent, full precision otherwise.
pub fn raw(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map(|v| v.to_string()).unwrap_or_default()
}

/// A duration for a table: "12.3 ms" below a tenth of a second, else "1.23 s".
pub fn secs(t: Option<f64>) -> String {
    match t {
        Some(t) if t.is_finite() && t < 0.1 => format!("{:.1} ms", t * 1e3),
        Some(t) if t.is_finite() => format!("{t:.2} s"),
        _ => "–".into(),
    }
}

/// 12,345,678
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// 1.23e8 → "123 M", for throughputs.
pub fn si(x: Option<f64>) -> String {
    match x {
        Some(v) if v >= 1e9 => format!("{:.2} G", v / 1e9),
        Some(v) if v >= 1e6 => format!("{:.1} M", v / 1e6),
        Some(v) if v >= 1e3 => format!("{:.1} k", v / 1e3),
        Some(v) => format!("{v:.0}"),
        None => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut t = Table::new(&["a", "b"]);
        t.push(vec!["x,y".into(), "plain".into()]);
        t.push(vec!["say \"hi\"".into(), "".into()]);
        assert_eq!(t.csv(), "a,b\n\"x,y\",plain\n\"say \"\"hi\"\"\",\n");
    }

    #[test]
    fn markdown_right_aligns_numbers_and_escapes_bars() {
        let mut t = Table::new(&["name", "time"]);
        t.push(vec!["a|b".into(), "1.50 s".into()]);
        let md = t.markdown();
        assert!(md.contains("|---|---:|"), "{md}");
        assert!(md.contains("a\\|b"), "{md}");
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(fmt(None, 2), "–");
        assert_eq!(fmt(Some(1.234), 1), "1.2");
        assert_eq!(si(Some(2.5e8)), "250.0 M");
        assert_eq!(secs(Some(0.0123)), "12.3 ms");
        assert_eq!(secs(Some(2.0)), "2.00 s");
    }
}
