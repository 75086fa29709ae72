//! Properties every chunking must have, on generated Markdown.

use kts_chunk::{ChunkSettings, split};
use proptest::prelude::*;

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "the", "policy", "E-5", "naïve", "ToolX", "über", "数据", "a", "x"
        ])
        .prop_map(String::from),
        "[a-z]{1,12}",
        "[A-Za-z0-9]{40,120}", // longer than small chunk sizes: forces word and character cuts
    ]
}

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(word(), 1..25),
        prop::sample::select(vec![".", "!", "?", ";", ""]),
    )
        .prop_map(|(words, end)| format!("{}{end}", words.join(" ")))
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(sentence(), 1..12).prop_map(|s| s.join(" ")),
        1 => (1usize..=6, sentence()).prop_map(|(level, text)| format!("{} {text}", "#".repeat(level))),
        1 => prop::collection::vec(sentence(), 1..6).prop_map(|items| items.iter().map(|i| format!("- {i}")).collect::<Vec<_>>().join("\n")),
        1 => prop::collection::vec((word(), word()), 1..15).prop_map(|rows| {
            let body: Vec<String> = rows.iter().map(|(a, b)| format!("| {a} | {b} |")).collect();
            format!("| k | v |\n| --- | --- |\n{}", body.join("\n"))
        }),
        1 => prop::collection::vec(sentence(), 1..8).prop_map(|lines| format!("```\n{}\n```", lines.join("\n"))),
        1 => (1u32..50).prop_map(|n| format!("<!-- page: {n} -->")),
    ]
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(block(), 0..30),
        prop::sample::select(vec!["\n\n", "\n", "\n\n\n", "\r\n\r\n"]),
    )
        .prop_map(|(blocks, gap)| blocks.join(gap))
}

fn settings() -> impl Strategy<Value = ChunkSettings> {
    (50usize..800).prop_flat_map(|size| {
        (Just(size), 0..=size / 2, 0..=size / 2).prop_map(|(size, overlap, min_size)| {
            ChunkSettings {
                size,
                overlap,
                min_size,
            }
        })
    })
}

fn is_marker_line(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("<!-- page:") && line.ends_with("-->")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn chunks_are_exact_slices_in_order_within_bounds(markdown in document(), settings in settings()) {
        let chars: Vec<char> = markdown.chars().collect();
        let chunks = split(&markdown, &settings);
        for (i, chunk) in chunks.iter().enumerate() {
            let slice: String = chars[chunk.start..chunk.end].iter().collect();
            prop_assert_eq!(&slice, &chunk.text);
            prop_assert!(!chunk.text.trim().is_empty());
            prop_assert_eq!(chunk.text.trim(), chunk.text.as_str());
            let limit = if i + 1 == chunks.len() { settings.size + settings.min_size } else { settings.size };
            prop_assert!(chunk.end - chunk.start <= limit, "chunk {} has {} chars, limit {}", i, chunk.end - chunk.start, limit);
        }
        for pair in chunks.windows(2) {
            prop_assert!(pair[0].start < pair[1].start);
            prop_assert!(pair[0].end < pair[1].end);
        }
    }

    #[test]
    fn chunks_cover_every_visible_character(markdown in document(), settings in settings()) {
        let chunks = split(&markdown, &settings);
        let mut covered = vec![false; markdown.chars().count()];
        for chunk in &chunks {
            covered[chunk.start..chunk.end].iter_mut().for_each(|c| *c = true);
        }
        let mut index = 0;
        for line in markdown.split_inclusive('\n') {
            let width = line.chars().count();
            if !is_marker_line(line) {
                for (offset, ch) in line.chars().enumerate() {
                    prop_assert!(ch.is_whitespace() || covered[index + offset], "character {} ({:?}) is in no chunk", index + offset, ch);
                }
            }
            index += width;
        }
    }

    #[test]
    fn a_chunk_starting_inside_a_table_names_its_header(markdown in document(), settings in settings()) {
        for chunk in split(&markdown, &settings) {
            if chunk.text.starts_with('|') && !chunk.text.starts_with("| k | v |") {
                prop_assert_eq!(chunk.heading_path.last().map(String::as_str), Some("| k | v |"), "{:?}", chunk);
            }
        }
    }

    #[test]
    fn chunking_is_deterministic(markdown in document(), settings in settings()) {
        let ids = |chunks: Vec<kts_chunk::Chunk>| chunks.iter().map(|c| c.id("doc")).collect::<Vec<_>>();
        prop_assert_eq!(ids(split(&markdown, &settings)), ids(split(&markdown, &settings)));
    }
}
