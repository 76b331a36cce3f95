//! `[measure]` series read by a command (`command = ["psql", "-Atc", "select …"]`): run every
//! `every` while the load runs, each output parsed as one number, the readings reduced as the
//! steady state's scrapes are. An output that is not a number stops the series and fails the
//! run, naming the series and what it printed.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use headroom_matrix::ResolvedMeasure;
use headroom_results::{Failure, RunResult, SeriesSample};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::target::Fills;

/// The most of a command's output read: a number is short.
const OUTPUT_LIMIT: usize = 4096;

/// One series' readings, or why it stopped.
pub(crate) type Readings = (String, Result<Vec<SeriesSample>, String>);

/// Starts a task per command series; each runs until `stop` turns true.
pub(crate) fn spawn(
    measure: &ResolvedMeasure,
    fills: &Fills<'_>,
    spec_dir: &std::path::Path,
    start: Instant,
    stop: &watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<Readings>> {
    measure
        .series
        .iter()
        .filter_map(|series| {
            let command = series.command.as_ref()?;
            let argv: Result<Vec<String>, String> =
                command.iter().map(|arg| fills.fill(arg)).collect();
            let every = series
                .every
                .map_or(measure.sample_every, |every| every)
                .as_std();
            let (name, dir, mut stop) = (series.name.clone(), spec_dir.to_path_buf(), stop.clone());
            Some(tokio::spawn(async move {
                let argv = match argv {
                    Ok(argv) => argv,
                    Err(why) => return (name, Err(why)),
                };
                let mut samples = Vec::new();
                loop {
                    let at = Instant::now();
                    match read_once(&argv, &dir, every.max(Duration::from_secs(5))).await {
                        Ok(value) => samples.push(SeriesSample {
                            t_s: (at - start).as_secs_f64(),
                            value,
                        }),
                        Err(why) => return (name, Err(why)),
                    }
                    let next = at + every;
                    tokio::select! {
                        _ = tokio::time::sleep_until(next) => {}
                        _ = stop.changed() => break,
                    }
                    if *stop.borrow() {
                        break;
                    }
                }
                (name, Ok(samples))
            }))
        })
        .collect()
}

/// Runs the command once: the number it printed, or what it did instead.
async fn read_once(
    argv: &[String],
    dir: &std::path::Path,
    timeout: Duration,
) -> Result<f64, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the command is empty".to_owned());
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| format!("`{program}` could not start: {e}"))?;
    let output = match tokio::time::timeout(timeout, bounded_output(&mut child)).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("`{program}`: {e}")),
        Err(_) => {
            return Err(format!(
                "`{program}` gave no answer within {}s",
                timeout.as_secs()
            ));
        }
    };
    let Some((status, stdout, stderr)) = output else {
        return Err(format!(
            "`{program}` printed more than {OUTPUT_LIMIT} bytes: a series command prints one number (it was stopped)"
        ));
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    let (stdout, stderr) = (text(&stdout), text(&stderr));
    if !status.success() {
        let exit = crate::target::exit_of(status);
        return Err(format!(
            "`{program}` failed ({exit}): {}",
            if stderr.is_empty() { &stdout } else { &stderr }
        ));
    }
    parse_number(&stdout)
}

/// The child's exit and its output, each stream read to [`OUTPUT_LIMIT`] bytes at most; `None`
/// (the child killed) when either printed more: a command that floods its output never
/// fills headroom's memory.
async fn bounded_output(
    child: &mut tokio::process::Child,
) -> std::io::Result<Option<(std::process::ExitStatus, Vec<u8>, Vec<u8>)>> {
    use tokio::io::AsyncReadExt;
    let limit = OUTPUT_LIMIT as u64 + 1;
    // Past the limit on one stream the child is killed at once, which ends the other too.
    let pid = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(i32::try_from(id).ok()?));
    let read = |stream: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>| async move {
        let mut bytes = Vec::new();
        if let Some(stream) = stream {
            stream.take(limit).read_to_end(&mut bytes).await?;
        }
        if bytes.len() > OUTPUT_LIMIT
            && let Some(pid) = pid
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        Ok::<_, std::io::Error>(bytes)
    };
    let stdout = child
        .stdout
        .take()
        .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
    let stderr = child
        .stderr
        .take()
        .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
    let (stdout, stderr) = tokio::try_join!(read(stdout), read(stderr))?;
    if stdout.len() > OUTPUT_LIMIT || stderr.len() > OUTPUT_LIMIT {
        let _ = child.kill().await;
        let _ = child.wait().await;
        return Ok(None);
    }
    let status = child.wait().await?;
    Ok(Some((status, stdout, stderr)))
}

/// One number, alone on the output (surrounding white space aside).
fn parse_number(output: &str) -> Result<f64, String> {
    output
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| format!("its output is not a number: `{output}`"))
}

/// The series' readings into `result`: kept whole in `series_samples`, reduced into
/// `metrics.steady`; the first series that stopped, or read nothing, fails the run.
pub(crate) async fn collect(
    tasks: Vec<tokio::task::JoinHandle<Readings>>,
    reduce: headroom_spec::Reducer,
    result: &mut RunResult,
) {
    let mut samples: BTreeMap<String, Vec<SeriesSample>> = BTreeMap::new();
    for task in tasks {
        let (name, readings) = match task.await {
            Ok(readings) => readings,
            Err(e) => ("(series)".to_owned(), Err(format!("its task failed: {e}"))),
        };
        let failed = |message: String| Failure::Series {
            series: name.clone(),
            message,
        };
        match readings {
            Ok(readings) if readings.is_empty() => {
                result
                    .failure
                    .get_or_insert(failed("no reading was taken during the load".to_owned()));
            }
            Ok(readings) => {
                let values: Vec<f64> = readings.iter().map(|r| r.value).collect();
                if let Some(value) = reduce.of(&values) {
                    result.metrics.steady.insert(name.clone(), value);
                }
                samples.insert(name, readings);
            }
            Err(why) => {
                result.failure.get_or_insert(failed(why));
            }
        }
    }
    result.series_samples = samples;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number alone reads; anything else is named with the output.
    #[test]
    fn only_a_number_is_a_reading() {
        assert_eq!(parse_number("11"), Ok(11.0));
        assert_eq!(parse_number("2.5e3"), Ok(2500.0));
        assert_eq!(
            parse_number("ERROR: relation \"x\" does not exist"),
            Err("its output is not a number: `ERROR: relation \"x\" does not exist`".to_owned())
        );
        assert!(parse_number("").is_err());
        assert!(parse_number("NaN").is_err());
        assert!(parse_number("3\n4").is_err());
    }

    /// A command's output is read during the load every `every`; `echo` prints a number.
    #[tokio::test]
    async fn a_command_is_read_until_stopped() {
        let value = read_once(
            &["echo".into(), " 42 ".into()],
            std::path::Path::new("."),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(value, Ok(42.0));
        let failed = read_once(
            &["false".into()],
            std::path::Path::new("."),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(failed, Err("`false` failed (exit status 1): ".to_owned()));
    }

    /// Issue 30: a command that floods its output (`yes 7`, 1.5 GB in 5 s before) is stopped
    /// past 4 KiB and named (not timed out): headroom's memory holds the 4 KiB only.
    #[tokio::test]
    async fn a_command_that_floods_its_output_is_stopped_at_the_limit() {
        let flooded = read_once(
            &["yes".into(), "7".into()],
            std::path::Path::new("."),
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(
            flooded,
            Err("`yes` printed more than 4096 bytes: a series command prints one number (it was stopped)".to_owned())
        );
    }
}
