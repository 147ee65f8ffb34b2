//! Command-line options shared by the bench binaries (parsed by hand).

use std::path::PathBuf;
use std::time::Duration;

use crate::harness::RunConfig;

/// Usage text.
pub const USAGE: &str = "\
usage: bench [--quick | --full] [--filter SUBSTR] [--cores A[,B]] [--batch N]
             [--measure-ms MS] [--sequential | --slice-ms MS] [--out DIR] [--list]
             [--instructions]

  --quick          warm-up 100 ms + sampling 500 ms per row (default)
  --full           warm-up 1 s + sampling 5 s per row
  --filter SUBSTR  run rows whose \"scenario library\" contains SUBSTR (repeatable: any matches)
  --cores A[,B]    pin the measuring thread to core A (default 0); B is kept
                   for two-thread scenarios (loopback), the loopback peer thread (default: the next core)
  --batch N        operations per timed batch (default 64)
  --measure-ms MS  sampling time per row, overriding --quick/--full
  --slice-ms MS    the rows of a scenario take turns on the measuring core,
                   sampling MS at a time each (default 10), so every row sees
                   the same machine; per-round ratios show how steady they were
  --sequential     run the rows of a scenario one after another instead
  --out DIR        where to write <suite>.json and <suite>.md (default <workspace>/target/bench)
  --list           print the scenario rows and exit
  --instructions   instead of timing, count instructions per operation under
                   valgrind --tool=callgrind (in-memory rows only; stable on a
                   noisy machine); writes <out>/instructions.{md,json}";

/// Sampling per turn when a scenario's rows are interleaved.
pub const DEFAULT_SLICE: Duration = Duration::from_millis(10);

/// Parsed options.
#[derive(Debug, Clone)]
pub struct Args {
    /// Timing settings.
    pub run: RunConfig,
    /// Whether `--full` was given.
    pub full: bool,
    /// Substrings; empty means everything.
    pub filters: Vec<String>,
    /// Cores to pin to; the first is the measuring thread's.
    pub cores: Vec<usize>,
    /// Output directory, if overridden.
    pub out: Option<PathBuf>,
    /// Only list rows.
    pub list: bool,
    /// Count instructions under callgrind instead of timing.
    pub instructions: bool,
    /// Turn length when the rows of a scenario are interleaved; `None` with
    /// `--sequential`.
    pub slice: Option<Duration>,
    /// Internal: this process is the callgrind child of `--instructions`.
    pub callgrind_child: bool,
}

impl Args {
    /// Whether a row named `scenario` / `library` is selected.
    pub fn selects(&self, scenario: &str, library: &str) -> bool {
        let name = format!("{scenario} {library}");
        self.filters.is_empty() || self.filters.iter().any(|f| name.contains(f.as_str()))
    }

    /// Parse `args` (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Args, String> {
        let mut a = Args {
            run: RunConfig::quick(),
            full: false,
            filters: Vec::new(),
            cores: vec![0],
            out: None,
            list: false,
            instructions: false,
            slice: Some(DEFAULT_SLICE),
            callgrind_child: false,
        };
        let mut sequential = false;
        let mut batch = None;
        let mut measure = None;
        let mut it = args.into_iter();
        while let Some(arg) = it.next() {
            let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
            match arg.as_str() {
                "--quick" => a.full = false,
                "--full" => a.full = true,
                "--filter" => a.filters.push(value("--filter")?),
                "--cores" => {
                    a.cores = value("--cores")?
                        .split(',')
                        .map(|c| {
                            c.trim()
                                .parse::<usize>()
                                .map_err(|e| format!("--cores {c}: {e}"))
                        })
                        .collect::<Result<_, _>>()?;
                    if a.cores.is_empty() {
                        return Err("--cores needs at least one core".into());
                    }
                }
                "--batch" => {
                    let n: usize = value("--batch")?
                        .parse()
                        .map_err(|e| format!("--batch: {e}"))?;
                    if n == 0 {
                        return Err("--batch must be at least 1".into());
                    }
                    batch = Some(n);
                }
                "--measure-ms" => {
                    let ms: u64 = value("--measure-ms")?
                        .parse()
                        .map_err(|e| format!("--measure-ms: {e}"))?;
                    measure = Some(Duration::from_millis(ms.max(1)));
                }
                "--sequential" => sequential = true,
                "--slice-ms" => {
                    let ms: u64 = value("--slice-ms")?
                        .parse()
                        .map_err(|e| format!("--slice-ms: {e}"))?;
                    a.slice = Some(Duration::from_millis(ms.max(1)));
                }
                "--out" => a.out = Some(PathBuf::from(value("--out")?)),
                "--list" => a.list = true,
                "--instructions" => a.instructions = true,
                "--callgrind-child" => a.callgrind_child = true,
                "-h" | "--help" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        a.run = if a.full {
            RunConfig::full()
        } else {
            RunConfig::quick()
        };
        if let Some(b) = batch {
            a.run.batch = b;
        }
        if let Some(m) = measure {
            a.run.measure = m;
        }
        if sequential {
            a.slice = None;
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Args, String> {
        Args::parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn options() {
        let a = parse("--full --batch 16 --cores 1,3 --filter mask").unwrap();
        assert!(a.full);
        assert_eq!(a.run.batch, 16);
        assert_eq!(a.cores, [1, 3]);
        assert!(a.selects("apply_mask 128B", "tickwire"));
        assert!(!a.selects("utf8 validate 128B", "tickwire"));
        assert_eq!(parse("").unwrap().run, RunConfig::quick());
        assert!(parse("--batch 0").is_err());
        assert!(parse("--cores x").is_err());
        assert!(parse("--bogus").is_err());
        assert_eq!(a.slice, Some(DEFAULT_SLICE));
        assert_eq!(parse("--sequential").unwrap().slice, None);
        assert_eq!(
            parse("--slice-ms 25").unwrap().slice,
            Some(Duration::from_millis(25))
        );
    }
}
