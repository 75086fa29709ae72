//! The steps of the query pipeline, each of which can be switched on or off.

use std::collections::BTreeSet;

use clap::ValueEnum;

/// A step of the query pipeline. Which ones run by default was decided on the
/// evaluation data (`make eval-dev`): a step is on only if it lowers no set's
/// nDCG@10 by more than 0.002 and raises their mean.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// An acronym the question asks about also searches for its expansions;
    /// one the config lists, wherever it occurs.
    Acronyms,
    /// Words of the question also search for their synonyms.
    Synonyms,
    /// Intent words, error codes and systems become metadata filters.
    Filters,
    /// A question with several parts is searched part by part.
    Decompose,
    /// A more general question about the question's main entity joins the search.
    StepBack,
    /// Ranking signals after fusion (error code, intent, title, entities, density).
    Signals,
    /// The knowledge graph's connectivity joins the fusion.
    Graph,
    /// The question's vector moves toward its best fused chunks, and vector
    /// search runs again with it (pseudo-relevance feedback).
    Feedback,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Acronyms => "acronyms",
            Step::Synonyms => "synonyms",
            Step::Filters => "filters",
            Step::Decompose => "decompose",
            Step::StepBack => "step-back",
            Step::Signals => "signals",
            Step::Graph => "graph",
            Step::Feedback => "feedback",
        }
    }

    pub fn on_by_default(self) -> bool {
        match self {
            Step::Acronyms | Step::Signals | Step::Feedback => true,
            Step::Filters | Step::Decompose | Step::Synonyms | Step::StepBack | Step::Graph => {
                false
            }
        }
    }
}

/// The steps a query runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Steps(BTreeSet<Step>);

impl Steps {
    /// The default steps, plus `with`, minus `without`.
    pub fn new(with: &[Step], without: &[Step]) -> Steps {
        let mut on: BTreeSet<Step> = Step::value_variants()
            .iter()
            .copied()
            .filter(|s| s.on_by_default())
            .collect();
        on.extend(with);
        for step in without {
            on.remove(step);
        }
        Steps(on)
    }

    pub fn on(&self, step: Step) -> bool {
        self.0.contains(&step)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|s| s.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_and_without_change_the_defaults() {
        let steps = Steps::new(&[Step::Graph], &[Step::Acronyms]);
        assert!(steps.on(Step::Graph));
        assert!(!steps.on(Step::Acronyms));
        assert_eq!(steps.on(Step::Signals), Step::Signals.on_by_default());
        for step in Step::value_variants() {
            assert_eq!(
                Step::from_str(step.name(), false).unwrap(),
                *step,
                "the flag value is the name"
            );
        }
    }
}
