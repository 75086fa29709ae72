//! Several data sets side by side: each mode's nDCG@10 per set and their
//! mean, and with --steps each step's effect per set, judged by the rule a
//! default step must pass: it lowers no set by more than
//! [`MAX_LOSS`] and raises the sets' mean.

use serde_json::{Value, json};

use crate::metrics::NDCG_AT;
use crate::report::Report;

/// The most a step that is on by default may lower any one set's nDCG@10.
pub const MAX_LOSS: f64 = 0.002;

/// Whether a step with these per-set effects (nDCG@10 on minus off) earns
/// its place in the default pipeline.
pub fn earns_default(deltas: &[f64]) -> bool {
    !deltas.is_empty() && deltas.iter().all(|d| *d >= -MAX_LOSS) && mean(deltas) > 0.0
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Each mode's nDCG@10 per set, for the modes every set measured.
fn mode_rows(reports: &[Report]) -> Vec<(&'static str, Vec<f64>)> {
    let Some(first) = reports.first() else {
        return Vec::new();
    };
    first
        .modes
        .iter()
        .filter_map(|m| {
            let name = m.mode.name();
            let per_set: Option<Vec<f64>> = reports
                .iter()
                .map(|r| {
                    r.modes
                        .iter()
                        .find(|o| o.mode.name() == name)
                        .map(|o| o.scores.ndcg)
                })
                .collect();
            per_set.map(|scores| (name, scores))
        })
        .collect()
}

/// Each step's effect (on minus off) per set, when every set measured steps.
fn step_rows(reports: &[Report]) -> Option<Vec<(&'static str, bool, Vec<f64>)>> {
    let ablations: Option<Vec<_>> = reports.iter().map(|r| r.ablation.as_ref()).collect();
    let ablations = ablations?;
    let first = ablations.first()?;
    Some(
        first
            .steps
            .iter()
            .map(|step| {
                let deltas = ablations
                    .iter()
                    .filter_map(|a| a.steps.iter().find(|s| s.step == step.step))
                    .map(|s| s.on - s.off)
                    .collect();
                (step.step.name(), step.on_by_default, deltas)
            })
            .collect(),
    )
}

/// The table printed on stderr after the sets' own tables.
pub fn side_by_side(reports: &[Report]) -> String {
    let names: Vec<String> = reports
        .iter()
        .map(|r| format!("{}:{}", r.dataset, r.split))
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0).max(9);
    let header = |first: &str| {
        let mut line = format!("{first:<16}");
        for name in &names {
            line.push_str(&format!(" {name:>width$}"));
        }
        line.push_str(&format!(" {:>9}", "mean"));
        line
    };
    let row = |first: String, values: &[f64], signed: bool| {
        let mut line = format!("{first:<16}");
        for v in values {
            if signed {
                line.push_str(&format!(" {v:>+width$.4}"));
            } else {
                line.push_str(&format!(" {v:>width$.4}"));
            }
        }
        if signed {
            line.push_str(&format!(" {:>+9.4}", mean(values)));
        } else {
            line.push_str(&format!(" {:>9.4}", mean(values)));
        }
        line
    };
    let mut out = format!(
        "kts-eval: {} sets side by side, nDCG@{NDCG_AT}\n{}\n",
        reports.len(),
        header("mode")
    );
    for (mode, scores) in mode_rows(reports) {
        out.push_str(&row(mode.to_string(), &scores, false));
        out.push('\n');
    }
    if let Some(steps) = step_rows(reports) {
        let mode = reports[0].ablation.as_ref().map_or("", |a| a.mode.name());
        out.push_str(&format!(
            "steps ({mode}): on minus off; a default step lowers no set by more than {MAX_LOSS} and raises the mean\n{}  verdict\n",
            header("step (default)")
        ));
        let plain: Vec<f64> = reports
            .iter()
            .filter_map(|r| r.ablation.as_ref().map(|a| a.default - a.plain))
            .collect();
        out.push_str(&row("default vs plain".into(), &plain, true));
        out.push('\n');
        for (name, on_by_default, deltas) in steps {
            let earns = earns_default(&deltas);
            let verdict = match (on_by_default, earns) {
                (true, true) => "keep on",
                (true, false) => "turn off",
                (false, true) => "turn on",
                (false, false) => "keep off",
            };
            let label = format!("{name} ({})", if on_by_default { "on" } else { "off" });
            out.push_str(&format!("{}  {verdict}\n", row(label, &deltas, true)));
        }
    }
    out
}

/// The JSON report of several sets: each set's report, and the side-by-side
/// figures.
pub fn sets_json(reports: &[Report]) -> Value {
    let modes: serde_json::Map<String, Value> = mode_rows(reports)
        .into_iter()
        .map(|(mode, scores)| {
            (
                mode.to_string(),
                json!({
                    format!("ndcg@{NDCG_AT}"): scores.iter().copied().map(round).collect::<Vec<_>>(),
                    "mean": round(mean(&scores)),
                }),
            )
        })
        .collect();
    let steps = step_rows(reports).map(|steps| {
        steps
            .into_iter()
            .map(|(name, on_by_default, deltas)| {
                json!({
                    "step": name,
                    "default": if on_by_default { "on" } else { "off" },
                    "delta": deltas.iter().copied().map(round).collect::<Vec<_>>(),
                    "mean_delta": round(mean(&deltas)),
                    "earns_default": earns_default(&deltas),
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "sets": reports.iter().map(Report::to_json).collect::<Vec<_>>(),
        "side_by_side": {
            "sets": reports.iter().map(|r| format!("{}:{}", r.dataset, r.split)).collect::<Vec<_>>(),
            "modes": modes,
            "steps": steps,
            "max_loss": MAX_LOSS,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_step_loses_on_no_set_and_gains_on_average() {
        assert!(earns_default(&[0.004, -0.001, 0.0]));
        assert!(
            !earns_default(&[0.010, -0.003]),
            "loses too much on one set"
        );
        assert!(!earns_default(&[0.001, -0.002]), "no gain on average");
        assert!(!earns_default(&[0.0, 0.0]), "changes nothing");
        assert!(!earns_default(&[]));
    }
}
