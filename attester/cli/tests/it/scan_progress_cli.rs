//! Issue #39 item 4: `assay scan` of many assets shows its progress (assets done of all, the last one done,
//! the time taken) on stderr when stderr is a terminal, rewritten in place and cleared at the end; stdout
//! never carries it, so `--output json` is the same with a terminal as without. The terminal is a real
//! pseudo-terminal (openpty) on the real binary's stderr, its stdout a pipe, the 50 assets' sources replayed
//! over local HTTPS.
use crate::common;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use assay_scan::testsupport::Reply;
use common::*;
use serde_json::Value;

const ASSETS: usize = 50;

/// 50 assets of one healthy issuer, each with its own Horizon asset record.
fn fifty_assets(h: &Harness) -> Vec<String> {
    USDC.route_all(h);
    (0..ASSETS)
        .map(|i| {
            let code = format!("T{i:02}");
            h.route(
                HORIZON,
                &assets_path(&code, USDC.issuer),
                vec![Reply::json(assets_body(&code, USDC.issuer, USDC.flags))],
            );
            format!("{code}-{}", USDC.issuer)
        })
        .collect()
}

/// What a run with stderr on a terminal gave: the exit code, stdout (a pipe), and everything written to
/// the terminal.
struct TerminalRun {
    code: i32,
    stdout: String,
    screen: String,
}

/// Runs `cmd` with its stderr on a new pseudo-terminal and its stdout on a pipe.
fn on_terminal(mut cmd: Command) -> TerminalRun {
    let (mut controller, mut terminal) = (-1, -1);
    // SAFETY: openpty writes two new descriptors into the integers it is given; the name, settings and
    // window size are optional and passed as null.
    let opened = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (controller, terminal) = unsafe {
        (
            OwnedFd::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(terminal));
    let mut child = cmd.spawn().expect("run assay");
    // The terminal's only descriptors are now the child's: when it exits, reading the controller ends.
    drop(cmd);
    let screen = std::thread::spawn(move || {
        let mut controller = std::fs::File::from(controller);
        let mut screen = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux answers EIO once the terminal side is closed.
        while let Ok(n @ 1..) = controller.read(&mut buf) {
            screen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&screen).into_owned()
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let code = child.wait().expect("wait").code().unwrap_or(-1);
    TerminalRun {
        code,
        stdout,
        screen: screen.join().expect("terminal reader"),
    }
}

/// The reports with what differs between two runs of the same scan (the times things were read and the
/// window they span, and any hash binding them) masked.
fn without_times(stdout: &str) -> Vec<Value> {
    fn mask(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if key.ends_with("_at")
                        || key.starts_with("observation_window")
                        || key.contains("hash")
                    {
                        *value = Value::Null;
                    } else {
                        mask(value);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    stdout
        .lines()
        .map(|l| {
            let mut v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"));
            mask(&mut v);
            v
        })
        .collect()
}

#[test]
fn scan_of_fifty_assets_shows_progress_on_a_terminal_and_never_on_stdout() {
    let h = Harness::new(&[USDC.domain]);
    let assets = fifty_assets(&h);
    let mut args = vec!["scan", "--output", "json", "--no-cache", "--no-history"];
    args.extend(assets.iter().map(String::as_str));
    let command = |extra: &[(&str, &str)]| {
        let mut cmd = h.command(&args, &[], extra);
        if extra.is_empty() {
            cmd.env_remove("ASSAY_NO_PROGRESS");
        }
        cmd
    };

    // stderr a terminal: the count, the last asset done and the time, rewritten in place, then cleared.
    let shown = on_terminal(command(&[]));
    assert_eq!(shown.code, 0, "{}", shown.screen);
    let lines: Vec<&str> = shown
        .screen
        .split('\r')
        .filter(|l| l.starts_with("assay scan: "))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("assay scan: 0/50 assets done, ")),
        "{:?}",
        shown.screen
    );
    let last = lines
        .iter()
        .find(|l| l.starts_with("assay scan: 50/50 assets done, "))
        .unwrap_or_else(|| panic!("no 50/50 line: {:?}", shown.screen));
    let (elapsed, asset) = last["assay scan: 50/50 assets done, ".len()..]
        .split_once(", last ")
        .unwrap_or_else(|| panic!("{last:?}"));
    assert!(
        elapsed.trim_end().ends_with(" s") && elapsed.starts_with(|c: char| c.is_ascii_digit()),
        "{last:?}"
    );
    let asset = asset.trim_end();
    assert!(
        asset.starts_with('T') && asset.ends_with("-GA5Z…KZVN"),
        "{last:?}"
    );
    // Cleared at the end: blanks, then back to the start of the line, and nothing after it.
    assert!(
        shown.screen.trim_end_matches(' ').ends_with('\r')
            && shown.screen.rsplit('\r').next() == Some(""),
        "{:?}",
        shown.screen
    );
    assert!(!shown.screen.contains('\n'), "{:?}", shown.screen);

    // stderr a pipe: nothing on it; stdout the same reports, with nothing of the progress line.
    let piped: Run = command(&[]).output().expect("run assay").into();
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(piped.stderr, "");
    for run in [&shown.stdout, &piped.stdout] {
        assert_eq!(run.lines().count(), ASSETS, "{run}");
        assert!(!run.contains('\r') && !run.contains("assay scan"), "{run}");
    }
    assert_eq!(without_times(&shown.stdout), without_times(&piped.stdout));
    let codes: Vec<Value> = without_times(&piped.stdout)
        .iter()
        .map(|r| r["asset"]["code"].clone())
        .collect();
    assert_eq!(codes[0], "T00");
    assert_eq!(codes[ASSETS - 1], "T49");

    // Turned off: --no-progress, or ASSAY_NO_PROGRESS in the environment.
    for off in [
        on_terminal({
            let mut cmd = command(&[]);
            cmd.arg("--no-progress");
            cmd
        }),
        on_terminal(command(&[("ASSAY_NO_PROGRESS", "1")])),
    ] {
        assert_eq!(off.code, 0, "{}", off.screen);
        assert_eq!(off.screen, "");
        assert_eq!(without_times(&off.stdout), without_times(&piped.stdout));
    }
}

#[test]
fn top_level_help_indents_every_exit_code_alike() {
    let run: Run = Command::new(env!("CARGO_BIN_EXE_assay"))
        .arg("--help")
        .output()
        .expect("run assay")
        .into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let table: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes"))
        .skip(1)
        .collect();
    assert_eq!(table.len(), 9, "{}", run.stdout);
    for line in table {
        assert!(
            line.starts_with("  ") && line[2..].starts_with(|c: char| c.is_ascii_digit()),
            "{line:?} in\n{}",
            run.stdout
        );
    }
}
