//! A section of the report: Markdown text, the CSV tables behind it, and
//! the plots it draws; `Ctx` is where they go.

use std::path::{Path, PathBuf};

use crate::plot::PlotResult;
use crate::table::Table;

pub struct Section {
    pub title: String,
    pub text: String,
}

/// Where a report is being written, and what went wrong on the way (said in
/// the report and on stderr; never fatal for the rest of the report).
pub struct Ctx {
    pub dir: PathBuf,
    pub fonts: bool,
    pub warnings: Vec<String>,
    pub plots: Vec<String>,
    pub csvs: Vec<String>,
}

impl Ctx {
    pub fn new(dir: &Path, fonts: bool) -> Ctx {
        Ctx {
            dir: dir.to_path_buf(),
            fonts,
            warnings: Vec::new(),
            plots: Vec::new(),
            csvs: Vec::new(),
        }
    }

    /// Draws `plots/<name>.png`; returns the Markdown that shows it (or
    /// says why it is missing).
    pub fn plot(&mut self, name: &str, alt: &str, draw: impl FnOnce(&Path) -> PlotResult) -> String {
        if !self.fonts {
            return format!("*(plot `{name}.png` not drawn: no font, see the warnings)*\n");
        }
        let path = self.dir.join("plots").join(format!("{name}.png"));
        match draw(&path) {
            Ok(()) => {
                self.plots.push(format!("plots/{name}.png"));
                format!("![{alt}](plots/{name}.png)\n")
            }
            Err(e) => {
                self.warnings.push(format!("plot {name}.png failed: {e}"));
                format!("*(plot `{name}.png` failed: {e})*\n")
            }
        }
    }

    /// Writes `<name>.csv`.
    pub fn csv(&mut self, name: &str, table: &Table) {
        let path = self.dir.join(format!("{name}.csv"));
        match std::fs::write(&path, table.csv()) {
            Ok(()) => self.csvs.push(format!("{name}.csv")),
            Err(e) => self.warnings.push(format!("cannot write {}: {e}", path.display())),
        }
    }
}
