//! Pseudo-relevance feedback on the dense side (Rocchio): the question's
//! vector moved toward the mean of its best fused chunks' vectors finds the
//! chunks that read like the answers found so far, which the question's own
//! wording may miss. The fused list is the judge, so BM25's finds steer the
//! vector search too.

/// How many of the best fused chunks the question's vector moves toward.
pub const FEEDBACK_CHUNKS: usize = 3;

/// `question` + `weight` × the mean of `chunks`, scaled to unit length
/// (`None` without chunks).
pub fn moved_toward(question: &[f32], chunks: &[Vec<f32>], weight: f64) -> Option<Vec<f32>> {
    if chunks.is_empty() {
        return None;
    }
    let share = weight as f32 / chunks.len() as f32;
    let mut moved = question.to_vec();
    for chunk in chunks {
        for (x, c) in moved.iter_mut().zip(chunk) {
            *x += share * c;
        }
    }
    let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0).then(|| moved.into_iter().map(|x| x / norm).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_moves_toward_the_chunks_mean_and_stays_a_unit_vector() {
        let question = [1.0, 0.0, 0.0];
        let chunks = vec![vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]];
        let moved = moved_toward(&question, &chunks, 0.5).unwrap();
        // 1 + 0.5 × (0, 0.5, 0.5) = (1, 0.25, 0.25), scaled.
        let norm = (1.0f32 + 0.0625 + 0.0625).sqrt();
        for (got, want) in moved.iter().zip([1.0 / norm, 0.25 / norm, 0.25 / norm]) {
            assert!((got - want).abs() < 1e-6, "{moved:?}");
        }
        assert_eq!(moved_toward(&question, &[], 0.5), None);
        assert_eq!(moved_toward(&question, &chunks, 0.0).unwrap(), question);
    }
}
