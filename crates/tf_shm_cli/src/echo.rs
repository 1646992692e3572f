//! `tf_shm echo` (tf2_echo: repeat a lookup at a rate, keep trying on failure) and
//! `tf_shm lookup` (one lookup, exit status 1 on failure).

use std::time::{Duration, Instant};

use serde::Serialize;
use tf_shm::{Buffer, TransformError, TransformStamped};

use crate::cli::{EchoArgs, Global, LookupArgs};
use crate::connect;
use crate::out::{print_json, Painter, Style};
use crate::report::TransformReport;

/// One line of `--json` output of `echo` and `lookup`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// The lookup succeeded.
    Ok {
        /// Always `true`.
        ok: bool,
        /// The transform.
        #[serde(flatten)]
        report: TransformReport,
    },
    /// The lookup failed.
    Failed {
        /// Always `false`.
        ok: bool,
        /// Target frame asked for.
        target: String,
        /// Source frame asked for.
        source: String,
        /// tf2's exception class, e.g. `"LookupException"`.
        error_class: String,
        /// tf2's exception text.
        error: String,
    },
}

impl Outcome {
    fn of(target: &str, source: &str, r: &Result<TransformStamped<'_>, TransformError>) -> Outcome {
        match r {
            Ok(t) => Outcome::Ok {
                ok: true,
                report: TransformReport::new(t),
            },
            Err(e) => Outcome::Failed {
                ok: false,
                target: target.to_owned(),
                source: source.to_owned(),
                error_class: e.class_name().to_owned(),
                error: e.to_string(),
            },
        }
    }
}

/// A time given in seconds on the command line, as ns.
pub fn time_arg(what: &str, secs: f64) -> Result<i64, u8> {
    tf_shm::time::secs_to_ns(secs).ok_or_else(|| {
        eprintln!("tf_shm: {what} {secs} s is not a representable time");
        2
    })
}

/// `tf_shm echo`.
pub fn run_echo(g: &Global, a: &EchoArgs) -> u8 {
    let time = match time_arg("--time", a.time) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let limit = if a.once { Some(1) } else { a.count };
    let period = Duration::from_secs_f64(1.0 / a.rate);
    let err_paint = Painter::stderr();
    let mut next = Instant::now();
    let mut printed = 0u64;
    let mut buffer: Option<Buffer> = None;
    loop {
        if buffer.is_none() {
            match connect::open(g) {
                Ok(b) => buffer = Some(b),
                Err(e) if e.is_retryable() && limit.is_none() => {
                    eprintln!(
                        "{} {e}",
                        err_paint.paint(Style::Yellow, "Waiting for the bridge:")
                    );
                }
                Err(e) => return connect::report_open_error(&e),
            }
        }
        let mut failed = false;
        if let Some(b) = &buffer {
            let r = b.lookup_transform(&a.target, &a.source, time);
            failed = r.is_err();
            print_outcome(g, a.precision, &a.target, &a.source, &r, &err_paint, true);
            printed += 1;
        }
        if limit.is_some_and(|n| printed >= n) {
            return if failed { crate::EXIT_FAILED } else { 0 };
        }
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

/// Prints one lookup outcome: the report on stdout, or the error (text: on stderr; JSON: on
/// stdout). `waiting` words the error as tf2_echo does while it keeps trying.
fn print_outcome(
    g: &Global,
    digits: usize,
    target: &str,
    source: &str,
    r: &Result<TransformStamped<'_>, TransformError>,
    err_paint: &Painter,
    waiting: bool,
) {
    if g.json {
        print_json(&Outcome::of(target, source, r));
        return;
    }
    match r {
        Ok(t) => crate::out::emit(&format!("{}\n", TransformReport::new(t).to_text(digits))),
        Err(e) => eprintln!("{}", error_text(target, source, e, waiting, err_paint)),
    }
}

/// A failed lookup as `echo` (`waiting`: it keeps trying, worded as tf2_echo) or `lookup`
/// prints it: a label, then tf2's error text.
pub fn error_text(
    target: &str,
    source: &str,
    e: &TransformError,
    waiting: bool,
    p: &Painter,
) -> String {
    if waiting {
        format!(
            "{} {e}",
            p.paint(
                Style::Yellow,
                &format!("Waiting for transform {target} -> {source}:")
            )
        )
    } else {
        format!(
            "{} {e}",
            p.paint(Style::Red, &format!("{}:", e.class_name()))
        )
    }
}

/// `tf_shm lookup`.
pub fn run_lookup(g: &Global, a: &LookupArgs) -> u8 {
    let times = match (a.target_time, a.source_time) {
        (Some(tt), Some(st)) => {
            time_arg("--target-time", tt).and_then(|tt| Ok((tt, time_arg("--source-time", st)?)))
        }
        _ => time_arg("--time", a.time).map(|t| (t, t)),
    };
    let (target_time, source_time) = match times {
        Ok(t) => t,
        Err(c) => return c,
    };
    let buffer = match connect::open(g) {
        Ok(b) => b,
        Err(e) => return connect::report_open_error(&e),
    };
    let r = match &a.fixed {
        Some(fixed) => {
            buffer.lookup_transform_full(&a.target, target_time, &a.source, source_time, fixed)
        }
        None => buffer.lookup_transform(&a.target, &a.source, target_time),
    };
    print_outcome(
        g,
        a.precision,
        &a.target,
        &a.source,
        &r,
        &Painter::stderr(),
        false,
    );
    if r.is_ok() {
        0
    } else {
        crate::EXIT_FAILED
    }
}
