//! `bench`: the codec suite (WebSocket parse, mask, encode, UTF-8) against
//! peers, timed in rdtsc ticks per operation, pinned to one core.
//!
//! `cargo run --release -p tickwire-perf --bin bench -- [--quick|--full] [--filter S] [--cores A,B] [--batch N] [--sequential]`

use std::process::ExitCode;
use std::time::Instant;

use tickwire_perf::cli::{Args, USAGE};
use tickwire_perf::clock;
use tickwire_perf::harness::{timer_overhead, timer_overhead_raw};
use tickwire_perf::instructions;
use tickwire_perf::machine::{self, Machine};
use tickwire_perf::report::{self, Report, Row};
use tickwire_perf::suites::{self, Case, Setup};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match Args::parse(argv.iter().cloned()) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("bench: {e}");
            }
            eprintln!("{USAGE}");
            return if e.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    let setup = Setup {
        batch: args.run.batch,
        core: args.cores[0],
        peer_core: args.cores.get(1).copied(),
    };
    // Before pinning: the default peer core depends on how many cores this
    // thread may run on, which pinning reduces to one.
    let peer = suites::loopback::peer_core(&setup);
    let all = suites::all(&setup);
    let selected: Vec<(usize, &Case<'_>)> = all
        .iter()
        .enumerate()
        .filter(|(_, c)| args.selects(&c.scenario, &c.library))
        .collect();
    if args.list {
        for c in &all {
            println!(
                "{} | {}{}",
                c.scenario,
                c.library,
                if c.baseline { "  (baseline)" } else { "" }
            );
        }
        return ExitCode::SUCCESS;
    }
    if selected.is_empty() {
        eprintln!("bench: no scenario matches {:?} (try --list)", args.filters);
        return ExitCode::from(2);
    }
    if args.callgrind_child || args.instructions {
        return instructions_mode(&args, &argv, &all, &selected);
    }
    if clock::IS_TSC && !machine::has_rdtscp() {
        eprintln!("bench: this CPU has no rdtscp; the x86_64 clock needs it");
        return ExitCode::FAILURE;
    }

    let m = Machine::probe();
    let core = args.cores[0];
    let pinned = machine::pin(core);
    let cycles_per_tick = machine::core_cycles_per_tick();
    let mut rep = Report::new("bench");
    rep.ticks_per_sec = m.ticks_per_sec;
    rep.context("cpu", m.cpu_model.clone());
    rep.context("logical cpus", m.logical_cpus.to_string());
    if let Some(mhz) = m.cpu_mhz {
        rep.context("cpu MHz (/proc/cpuinfo, current)", format!("{mhz:.0}"));
    }
    if clock::IS_TSC {
        rep.context(
            "TSC",
            format!(
                "{:.3} GHz (measured against the OS clock over 100 ms)",
                m.ticks_per_sec / 1e9
            ),
        );
        rep.context("cpu flags", m.flags.join(" "));
        if let Some(c) = cycles_per_tick {
            rep.context(
                "core clock (start)",
                format!(
                    "{c:.2} core cycles per TSC tick (dependent add chain on the pinned core; \
                     well below the idle value means the core is shared or throttled)"
                ),
            );
        }
    }
    rep.context("date", format!("{} UTC", report::utc_now()));
    let started = Instant::now();
    if let Some(load) = machine::load_average() {
        rep.context("load (start)", load);
    }
    rep.context(
        "unit",
        format!(
            "{} per operation = timed batch / B; nothing subtracted",
            clock::UNIT
        ),
    );
    rep.context(
        "core",
        if pinned {
            format!("{core} (pinned)")
        } else {
            format!("{core} (pinning FAILED: thread may migrate)")
        },
    );
    rep.context(
        "second core",
        format!("{peer} (loopback peer thread, pinned)"),
    );
    let mode = if args.full { "full" } else { "quick" };
    rep.context(
        "mode",
        format!(
            "{mode}: warm-up {} ms, sampling {} ms per row, batch B = {}",
            args.run.warmup.as_millis(),
            args.run.measure.as_millis(),
            args.run.batch
        ),
    );
    rep.context(
        "sampling",
        match args.slice {
            Some(slice) => format!(
                "interleaved: the rows of a scenario run at once, each on its own thread pinned to \
                 core {core}, and take turns of {} ms sampling (the warm-up on a row's first turn, \
                 a {:.1} ms re-warm-up after each wait), so they share the machine's conditions; \
                 scenarios with a busy-polling or streaming peer run their rows one after another \
                 in {} rounds of whole runs (each round starting with the next row, each run on \
                 its own connection with its share of the sampling time and a warm-up of \
                 {} ms), their samples merged",
                slice.as_millis(),
                slice.as_secs_f64() * 100.0,
                suites::WHOLE_RUN_ROUNDS,
                suites::round_config(&args.run, suites::WHOLE_RUN_ROUNDS)
                    .warmup
                    .as_millis()
            ),
            None => "sequential: the rows of a scenario run one after another".into(),
        },
    );
    rep.context(
        "payload",
        "text = ASCII JSON trade ticks, binary = random bytes; sizes in each scenario name",
    );
    if !clock::IS_TSC {
        rep.context(
            "note",
            "not x86_64: times are OS-clock nanoseconds, not TSC ticks",
        );
    }

    for (k, v) in &rep.context {
        println!("{k}: {v}");
    }
    println!();

    // The timer's own cost: never subtracted, reported for the reader.
    let raw = timer_overhead_raw(&args.run);
    let per_op = timer_overhead(&args.run);
    rep.rows.push(Row::new(
        "timer overhead",
        "empty batch, per op",
        false,
        "start/stop around an empty batch, divided by B: already inside every row below",
        &per_op,
    ));
    rep.rows.push(Row::new(
        "timer overhead",
        "empty batch, whole (B = 1)",
        false,
        "one start/stop pair",
        &raw,
    ));

    let rows: Vec<&Case<'_>> = selected.iter().map(|&(_, c)| c).collect();
    for group in suites::by_scenario(&rows) {
        let turns = suites::turn_slice(&group, args.slice).is_some();
        eprintln!(
            "  {} ({} rows, {}) ...",
            group[0].scenario,
            group.len(),
            if turns {
                "interleaved"
            } else if suites::whole_run_rounds(&group, &args.run, args.slice) {
                "in rounds of whole runs"
            } else {
                "one after another"
            }
        );
        let t = Instant::now();
        let ms = suites::run_scenario(&group, &args.run, core, args.slice);
        for (c, meas) in group.iter().zip(&ms) {
            eprintln!(
                "    {}: p50 {:.1} {} ({:.1} ns), {} samples, {} rounds",
                c.library,
                meas.quantile(0.5),
                clock::UNIT,
                m.to_ns(meas.quantile(0.5)),
                meas.samples(),
                meas.rounds.len()
            );
            if turns && meas.rounds.is_empty() {
                eprintln!(
                    "    WARNING: {} took no turns (it measured on a thread without a seat, so its \
                     sampling may have overlapped the others'): compare with --sequential",
                    c.library
                );
            }
            rep.rows
                .push(Row::new(&c.scenario, &c.library, c.baseline, c.note, meas));
        }
        eprintln!("    ({:.1} s)", t.elapsed().as_secs_f64());
    }
    if let Some(load) = machine::load_average() {
        rep.context("load (end)", load);
    }
    rep.context(
        "duration",
        format!("{:.1} min", started.elapsed().as_secs_f64() / 60.0),
    );
    if let Some(c) = machine::core_cycles_per_tick() {
        rep.context(
            "core clock (end)",
            format!("{c:.2} core cycles per TSC tick"),
        );
    }
    rep.finish();

    println!("{}", rep.table());
    println!(
        "per-op = batch time / B (B = {}), histogram per row, values in {}",
        args.run.batch,
        clock::UNIT
    );
    if let Some((_, v)) = rep.context.iter().find(|(k, _)| k == "core clock (end)") {
        println!("core clock (end): {v}");
    }
    println!("{}", report::ROUNDS_NOTE);
    println!("\nWhat each timed region includes:\n{}", rep.notes());
    let dir = args.out.clone().unwrap_or_else(report::default_out_dir);
    match rep.write_files(&dir) {
        Ok([j, md]) => println!("wrote {} and {}", j.display(), md.display()),
        Err(e) => {
            eprintln!("bench: writing results to {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    let command = format!("cargo xtask bench {}", argv.join(" "));
    let readme = dir.join("bench-readme.md");
    if let Err(e) = std::fs::write(&readme, rep.readme(command.trim_end())) {
        eprintln!("bench: writing {}: {e}", readme.display());
        return ExitCode::FAILURE;
    }
    match rep.write_plots(&dir) {
        Ok(p) => println!("wrote one SVG latency plot per scenario to {}", p.display()),
        Err(e) => {
            eprintln!("bench: writing results to {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    // The tail scenario's own table, quietness verdict and per-row plots.
    match suites::tail::verdict::report(&dir, [setup.core, peer]) {
        Ok(Some(text)) => println!("\n{text}\nwrote {}", dir.join("tail.md").display()),
        Ok(None) => {}
        Err(e) => {
            eprintln!("bench: writing the tail report to {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// `--instructions` (the parent, which runs valgrind) and `--callgrind-child`.
fn instructions_mode(
    args: &Args,
    raw: &[String],
    all: &[Case<'_>],
    selected: &[(usize, &Case<'_>)],
) -> ExitCode {
    let counted: Vec<(usize, &Case<'_>)> =
        selected.iter().copied().filter(|(_, c)| c.counts).collect();
    if args.callgrind_child {
        return match instructions::child(&counted, &args.run) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if counted.is_empty() {
        eprintln!(
            "bench: no selected row runs under --instructions (loopback rows do not, but for the blocking receive stream)"
        );
        return ExitCode::from(2);
    }
    let dir = args.out.clone().unwrap_or_else(report::default_out_dir);
    let child_args: Vec<String> = raw
        .iter()
        .filter(|a| *a != "--instructions")
        .cloned()
        .collect();
    eprintln!(
        "running {} rows under valgrind --tool=callgrind ({} batches of each counted)...",
        counted.len(),
        instructions::ROUNDS
    );
    let rows = match instructions::parent(all, &child_args, &dir.join("callgrind")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if rows.len() != counted.len() {
        eprintln!(
            "bench: expected {} callgrind dumps, found {}",
            counted.len(),
            rows.len()
        );
        return ExitCode::FAILURE;
    }
    println!("{}", instructions::table(&rows, false));
    println!(
        "instructions per operation = callgrind Ir collected around {} batches / operations in them",
        instructions::ROUNDS
    );
    let md = format!(
        "# tickwire bench: instructions per operation\n\nCommand: `cargo xtask bench --instructions`; \
         counted by valgrind --tool=callgrind around {} batches of B = {} operations per row \
         (collection off outside them).\n\n{}",
        instructions::ROUNDS,
        args.run.batch,
        instructions::table(&rows, true)
    );
    let files = [
        (dir.join("instructions.md"), md),
        (dir.join("instructions.json"), instructions::json(&rows)),
    ];
    for (path, text) in files {
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("bench: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
