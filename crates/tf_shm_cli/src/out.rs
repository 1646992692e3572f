//! Text for people: aligned columns, units, and colour only on a terminal.

use std::io::IsTerminal;

/// Writes `text` to standard output. When the reader has gone (`tf_shm echo … | head -1`), the
/// process ends with status 0, as ripgrep does: there is no one left to answer; any other
/// write error ends it with [`crate::EXIT_NO_ARENA`] (the I/O error status).
pub fn emit(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("tf_shm: cannot write to standard output: {e}");
        std::process::exit(crate::EXIT_NO_ARENA.into());
    }
}

/// Colours used in the output (ANSI SGR codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Headers.
    Bold,
    /// Passed checks, alive things.
    Green,
    /// Warnings.
    Yellow,
    /// Failures, dead things.
    Red,
    /// Secondary information.
    Dim,
}

/// `NO_COLOR` is set to something (no-color.org).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Paints text when the stream is a terminal and `NO_COLOR` is unset.
#[derive(Clone, Copy, Debug)]
pub struct Painter {
    on: bool,
}

impl Painter {
    /// For standard output.
    pub fn stdout() -> Painter {
        Painter {
            on: std::io::stdout().is_terminal() && !no_color(),
        }
    }

    /// For standard error.
    pub fn stderr() -> Painter {
        Painter {
            on: std::io::stderr().is_terminal() && !no_color(),
        }
    }

    /// Never paints.
    pub fn plain() -> Painter {
        Painter { on: false }
    }

    /// `s` in `style`.
    pub fn paint(&self, style: Style, s: &str) -> String {
        if !self.on {
            return s.to_owned();
        }
        let code = match style {
            Style::Bold => "1",
            Style::Green => "32",
            Style::Yellow => "33",
            Style::Red => "31",
            Style::Dim => "2",
        };
        format!("\x1b[{code}m{s}\x1b[0m")
    }
}

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A table whose columns are padded to their widest cell. Cells may carry a style, applied
/// after padding so escape codes never count as width.
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<(String, Option<Style>)>>,
}

impl Table {
    /// A table with these column headers (units belong in the header, e.g. `"rate (Hz)"`).
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of plain cells.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|c| (c, None)).collect());
    }

    /// Adds a row whose cells may be styled.
    pub fn styled_row(&mut self, cells: Vec<(String, Option<Style>)>) {
        self.rows.push(cells);
    }

    /// Characters in the widest line [`Table::render`] writes (colour codes not counted).
    pub fn width(&self) -> usize {
        self.render(&Painter::plain())
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// The table as lines, headers in bold; trailing spaces trimmed.
    pub fn render(&self, p: &Painter) -> String {
        let n = self.headers.len();
        let mut width: Vec<usize> = self
            .headers
            .iter()
            .map(|(h, _)| h.chars().count())
            .collect();
        for r in &self.rows {
            for (i, (c, _)) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |cells: Vec<(&str, Option<Style>)>| {
            let mut s = String::new();
            for (i, (c, style)) in cells.into_iter().enumerate().take(n) {
                let pad = width[i].saturating_sub(c.chars().count());
                let last = i + 1 == n;
                let padded = match self.headers[i].1 {
                    Align::Left if last => c.to_string(),
                    Align::Left => format!("{c}{}", " ".repeat(pad)),
                    Align::Right => format!("{}{c}", " ".repeat(pad)),
                };
                match style {
                    Some(st) => s.push_str(&p.paint(st, &padded)),
                    None => s.push_str(&padded),
                }
                if !last {
                    s.push_str("  ");
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(
            self.headers
                .iter()
                .map(|(h, _)| (h.as_str(), Some(Style::Bold)))
                .collect(),
        );
        for r in &self.rows {
            out.push_str(&line(r.iter().map(|(c, s)| (c.as_str(), *s)).collect()));
        }
        out
    }
}

/// Columns the text output should fit in: `$COLUMNS` when set to a number, else the width of
/// the terminal standard output writes to; `None` (no limit) when output goes to a file or a
/// pipe.
pub fn terminal_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c);
    }
    let out = std::io::stdout();
    if !out.is_terminal() {
        return None;
    }
    rustix::termios::tcgetwinsize(&out)
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&c| c > 0)
}

/// Seconds with `digits` decimals, e.g. `"1.500 s"`; `"-"` for `None`.
pub fn secs(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.digits$} s"))
}

/// A rate, e.g. `"50.0 Hz"`; `"-"` for `None`.
pub fn hz(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1} Hz"))
}

/// A stamp in ns as seconds with 9 decimals (exact), as tf2_echo prints `sec.nanosec`.
pub fn stamp(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// ns to seconds.
pub fn ns_to_s(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// A number as the JSON output writes it: finite values as JSON numbers; NaN, +∞ and −∞ as
/// the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (the form of protobuf's JSON mapping and
/// of JavaScript's names for them), where serde_json would write `null`, which scripts would
/// take for a missing value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JsonNum(pub f64);

impl serde::Serialize for JsonNum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_finite() {
            s.serialize_f64(v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if v > 0.0 {
            s.serialize_str("Infinity")
        } else {
            s.serialize_str("-Infinity")
        }
    }
}

/// `serialize_with` for a fixed-size array of numbers, each as [`JsonNum`].
pub fn json_nums<S: serde::Serializer, const N: usize>(
    v: &[f64; N],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|&x| JsonNum(x)))
}

/// `serialize_with` for a matrix of numbers, each as [`JsonNum`].
pub fn json_matrix<S: serde::Serializer, const R: usize, const C: usize>(
    m: &[[f64; C]; R],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.iter().map(|r| r.map(JsonNum).to_vec()))
}

/// Prints one JSON document on a line of its own.
pub fn print_json<T: serde::Serialize>(v: &T) {
    match serde_json::to_string(v) {
        Ok(s) => emit(&format!("{s}\n")),
        Err(e) => eprintln!("tf_shm: cannot encode JSON: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_right_align_numbers() {
        let mut t = Table::new(&[
            ("frame", Align::Left),
            ("rate (Hz)", Align::Right),
            ("kind", Align::Left),
        ]);
        t.row(vec!["base_link".into(), "50.0".into(), "dynamic".into()]);
        t.row(vec!["a".into(), "1000.0".into(), "static".into()]);
        let s = t.render(&Painter::plain());
        assert_eq!(
            s,
            "frame      rate (Hz)  kind\nbase_link       50.0  dynamic\na             1000.0  static\n"
        );
    }

    #[test]
    fn non_finite_numbers_are_named_in_json() {
        let v = serde_json::to_string(&[
            JsonNum(1.5),
            JsonNum(f64::NAN),
            JsonNum(f64::INFINITY),
            JsonNum(f64::NEG_INFINITY),
            JsonNum(-0.0),
        ])
        .unwrap();
        assert_eq!(v, r#"[1.5,"NaN","Infinity","-Infinity",-0.0]"#);
    }

    #[test]
    fn stamps_are_exact() {
        assert_eq!(stamp(1_500_000_001), "1.500000001");
        assert_eq!(stamp(-1_500_000_000), "-1.500000000");
        assert_eq!(stamp(0), "0.000000000");
    }
}
