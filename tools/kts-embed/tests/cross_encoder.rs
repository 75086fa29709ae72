//! The `"kind": "reranker"` manifest path: a cross-encoder loaded through ONNX
//! Runtime scores (question, passage) pairs. The model is the tiny one the
//! tests write (`kts_tests::tiny_reranker`), so every score is known.

use kts_embed::{CrossEncoder, Embedder};
use kts_tests::tiny_reranker;

#[test]
fn a_reranker_manifest_scores_each_passage_against_the_question() {
    let models = tempfile::tempdir().unwrap();
    let manifest = tiny_reranker::write_models_dir(models.path());
    let mut reranker = CrossEncoder::load(models.path(), tiny_reranker::ID, 1).unwrap();
    assert_eq!(reranker.model_id(), tiny_reranker::ID);
    let passages = [
        "A goose on the pond.",
        "Duck, duck, goose!",
        "Nothing here the model knows",
        "",
        "The duck of the pond",
        "swan water birds",
        "Goose and duck and goose and duck and goose",
        "duck",
        "goose goose",
    ];
    // The question's own words count for nothing: they are the first text of the pair.
    let scores = reranker.score("duck duck goose", &passages).unwrap();
    let expected: Vec<f32> = passages
        .iter()
        .map(|p| tiny_reranker::expected_score(p))
        .collect();
    assert_eq!(scores, expected);
    assert_eq!(scores[1], 2.5);
    // Loaded again from the manifest file, with the same answers.
    let mut again = CrossEncoder::load_manifest(&manifest, 2).unwrap();
    assert_eq!(again.score("pond", &passages[..2]).unwrap(), [0.5, 2.5]);
}

#[test]
fn a_long_pair_is_cut_to_the_manifest_s_max_tokens() {
    let models = tempfile::tempdir().unwrap();
    tiny_reranker::write_models_dir(models.path());
    let mut reranker = CrossEncoder::load(models.path(), tiny_reranker::ID, 1).unwrap();
    // 64 tokens at most: the passage keeps fewer than its 200 ducks.
    let long = "duck ".repeat(200);
    let score = reranker.score("a question", &[&long]).unwrap()[0];
    assert!(score > 40.0 && score < 64.0, "{score}");
}

#[test]
fn models_of_one_kind_are_refused_where_the_other_is_needed() {
    let models = tempfile::tempdir().unwrap();
    tiny_reranker::write_models_dir(models.path());
    let error = Embedder::load(models.path(), tiny_reranker::ID, 1)
        .err()
        .expect("a reranker is not an embedding model");
    assert!(
        error
            .to_string()
            .contains("is a reranker, not an embedding model"),
        "{error}"
    );
    let project_models = kts_embed::default_models_dir().expect("the project's models folder");
    let error = CrossEncoder::load(&project_models, kts_embed::DEFAULT_MODEL, 1)
        .err()
        .expect("an embedding model is not a reranker");
    assert!(
        error
            .to_string()
            .contains("is an embedding model, not a reranker"),
        "{error}"
    );
}
