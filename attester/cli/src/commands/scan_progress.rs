//! The progress line of `assay scan` and `assay exposure` on stderr: assets done of all, the asset that
//! finished last, the time since the scan began. Drawn only when stderr is a terminal (never on stdout,
//! never into a file or a pipe), rewritten in place with a carriage return, and cleared when the scan
//! ends, so the reports and any error follow on a clean line.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_attest::scan_reports::Progress;
use assay_core::Asset;

/// How often the line is redrawn while no asset finishes, so the elapsed time keeps moving.
const TICK: Duration = Duration::from_millis(200);

/// A scan's progress line; cleared when dropped.
pub(crate) struct ProgressLine {
    /// `None` when nothing is drawn (turned off, or stderr is not a terminal).
    line: Option<Arc<Mutex<Line>>>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

/// What the line shows, and how wide it was last drawn (the characters to blank when it is rewritten).
struct Line {
    started: Instant,
    done: usize,
    total: usize,
    last: Option<String>,
    width: usize,
}

impl ProgressLine {
    /// A progress line when `wanted` (not turned off by `--no-progress`) and stderr is a terminal; else
    /// one that draws nothing.
    pub(crate) fn start(wanted: bool) -> ProgressLine {
        let stop = Arc::new(AtomicBool::new(false));
        if !wanted || !std::io::stderr().is_terminal() {
            return ProgressLine {
                line: None,
                stop,
                ticker: None,
            };
        }
        let line = Arc::new(Mutex::new(Line {
            started: Instant::now(),
            done: 0,
            total: 0,
            last: None,
            width: 0,
        }));
        let ticker = {
            let (line, stop) = (line.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    if let Ok(mut line) = line.lock() {
                        if !stop.load(Ordering::Relaxed) {
                            line.draw();
                        }
                    }
                }
            })
        };
        ProgressLine {
            line: Some(line),
            stop,
            ticker: Some(ticker),
        }
    }

    /// The callback the scan reports its progress to.
    pub(crate) fn progress(&self) -> Progress {
        let line = self.line.clone();
        Arc::new(move |done, total, finished: Option<&Asset>| {
            let Some(line) = &line else { return };
            if let Ok(mut line) = line.lock() {
                line.done = done;
                line.total = total;
                if let Some(asset) = finished {
                    line.last = Some(short_name(asset));
                }
                line.draw();
            }
        })
    }
}

impl Drop for ProgressLine {
    /// Stops the redrawing and blanks the line.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
        if let Some(line) = &self.line {
            if let Ok(mut line) = line.lock() {
                line.clear();
            }
        }
    }
}

impl Line {
    /// The line as it reads now: shown for several assets only.
    fn text(&self) -> Option<String> {
        if self.total < 2 {
            return None;
        }
        let mut text = format!(
            "assay scan: {}/{} assets done, {}",
            self.done,
            self.total,
            elapsed(self.started.elapsed())
        );
        if let Some(last) = &self.last {
            text.push_str(", last ");
            text.push_str(last);
        }
        Some(text)
    }

    /// Rewrites the line in place, blanking what a longer previous line left.
    fn draw(&mut self) {
        let Some(text) = self.text() else { return };
        let width = text.chars().count();
        let blank = self.width.saturating_sub(width);
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r{text}{:blank$}", "");
        let _ = stderr.flush();
        self.width = width;
    }

    /// Blanks the line and returns to its start.
    fn clear(&mut self) {
        if self.width == 0 {
            return;
        }
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r{:width$}\r", "", width = self.width);
        let _ = stderr.flush();
        self.width = 0;
    }
}

/// `3.4 s` under a minute, `2 min 05 s` above.
fn elapsed(time: Duration) -> String {
    let seconds = time.as_secs_f64();
    if seconds < 60.0 {
        format!("{seconds:.1} s")
    } else {
        let whole = time.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// `CODE-ISSU…UER4`: the code and the issuer's first and last four characters, so the line fits a
/// terminal.
fn short_name(asset: &Asset) -> String {
    let issuer = &asset.issuer;
    if issuer.len() > 12 && issuer.is_ascii() {
        format!(
            "{}-{}…{}",
            asset.code,
            &issuer[..4],
            &issuer[issuer.len() - 4..]
        )
    } else {
        asset.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_count_the_time_and_the_last_asset_in_short() {
        let asset = Asset::new(
            "USDC",
            "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
        )
        .unwrap();
        assert_eq!(short_name(&asset), "USDC-GA5Z…KZVN");
        let mut line = Line {
            started: Instant::now(),
            done: 12,
            total: 50,
            last: Some(short_name(&asset)),
            width: 0,
        };
        let text = line.text().unwrap();
        assert!(
            text.starts_with("assay scan: 12/50 assets done, ")
                && text.ends_with(", last USDC-GA5Z…KZVN"),
            "{text}"
        );
        // One asset: no line.
        line.total = 1;
        assert_eq!(line.text(), None);
        assert_eq!(elapsed(Duration::from_millis(3_400)), "3.4 s");
        assert_eq!(elapsed(Duration::from_secs(125)), "2 min 05 s");
    }
}
