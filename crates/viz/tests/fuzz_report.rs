//! Mutation fuzzing of the HTML report on damaged run directories: every run that `read_run`
//! accepts must render (`report_html`, the gallery picks, the edit lists) without a panic.
//! Budget: `INDUCE_FUZZ_ITERS` / `INDUCE_FUZZ_SECONDS` (docs/RELIABILITY.md).

#[path = "../../graph/tests/fuzz_support/mod.rs"]
mod fuzz_support;
#[path = "../../graph/tests/fuzz_support/json.rs"]
mod json_mutations;
#[path = "../../explain/tests/run_dir_mutations/mod.rs"]
mod run_dir_mutations;

use induce_explain::ExplainError;
use induce_explain::pipeline::read_run;
use induce_viz::report::{ReportRun, edit_list, gallery_picks, report_html, short_edit_list};
use rand::Rng;

use fuzz_support::Campaign;
use run_dir_mutations::{copy_dir, mutate_run, write};

#[test]
fn fuzz_report_of_damaged_runs() {
    let tmp = std::env::temp_dir().join(format!("induce-viz-fuzz-{}", std::process::id()));
    let seed = tmp.join("seed/run_whole");
    let targets: Vec<u32> = (0..30).map(|k| k * 7 % 800).collect();
    write(&seed, &targets, None);
    let mut c = Campaign::new("report", 1000);
    while let Some((case, mut rng)) = c.next_case() {
        let dir = tmp.join("work/run_whole");
        copy_dir(&seed, &dir);
        let mut d = Vec::new();
        for _ in 0..rng.random_range(1..=2) {
            d.push(mutate_run(&mut rng, &dir));
        }
        c.run(
            case,
            &d.join("; "),
            move || {
                let data = read_run(&dir)?;
                for run in &data.runs {
                    for (_, r) in gallery_picks(run) {
                        let _ = edit_list(&r.explanation);
                        let _ = short_edit_list(&r.explanation, 3);
                    }
                }
                let html = report_html(&[ReportRun {
                    name: "run_whole".into(),
                    data: &data,
                    gallery: Vec::new(),
                    notes: Vec::new(),
                }]);
                assert!(html.contains("</html>"));
                Ok::<_, ExplainError>(())
            },
            |_| None,
        );
    }
    c.finish();
    let _ = std::fs::remove_dir_all(&tmp);
}
