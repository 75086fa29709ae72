//! A tiny cross-encoder, written here as ONNX protobuf bytes, with its
//! tokenizer and a `"kind": "reranker"` manifest: what the tests of the
//! reranker mechanism load instead of a real model, which no registry ships.
//!
//! The model scores a (question, passage) pair by summing the weights of the
//! passage's words (token type 1; the question's words count for nothing):
//! "duck" weighs 1, "goose" 0.5, any other word 0. So a test knows every
//! score it should see, and that the question and passage were paired.

use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::workspace_root;

/// The reranker's id (its manifest is `<dir>/<ID>.json`).
pub const ID: &str = "tiny-reranker";

/// The words the tokenizer knows, after its special tokens, and their weights.
const WORDS: [(&str, f32); 12] = [
    ("duck", 1.0),
    ("goose", 0.5),
    ("swan", 0.0),
    ("pond", 0.0),
    ("ponds", 0.0),
    ("water", 0.0),
    ("birds", 0.0),
    ("the", 0.0),
    ("a", 0.0),
    ("on", 0.0),
    ("of", 0.0),
    ("and", 0.0),
];
const SPECIAL: [&str; 4] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"];

/// Writes a models folder holding the tiny reranker (`<dir>/tiny-reranker.json`
/// and `<dir>/cache/tiny-reranker/`) and the project's ONNX Runtime (its
/// manifest copied, its fetched files linked); returns the manifest's path.
/// The runtime must have been fetched (`models/fetch`).
pub fn write_models_dir(dir: &Path) -> PathBuf {
    let project = workspace_root().join("models");
    let runtime = project.join("cache").join("onnxruntime");
    assert!(
        runtime.is_dir(),
        "{} is missing: run models/fetch first",
        runtime.display()
    );
    std::fs::create_dir_all(dir.join("cache").join(ID)).unwrap();
    std::fs::copy(
        project.join("onnxruntime.json"),
        dir.join("onnxruntime.json"),
    )
    .unwrap();
    let link = dir.join("cache").join("onnxruntime");
    if !link.exists() {
        std::os::unix::fs::symlink(runtime.canonicalize().unwrap(), link).unwrap();
    }
    let model = model_bytes();
    let tokenizer = serde_json::to_vec_pretty(&tokenizer_json()).unwrap();
    std::fs::write(dir.join("cache").join(ID).join("model.onnx"), &model).unwrap();
    std::fs::write(
        dir.join("cache").join(ID).join("tokenizer.json"),
        &tokenizer,
    )
    .unwrap();
    let file = |name: &str, bytes: &[u8]| {
        json!({
            "name": name, "package": "kts-tests", "version": "0", "path": name,
            "sha256": format!("{:x}", Sha256::digest(bytes)),
        })
    };
    let manifest = json!({
        "id": ID,
        "kind": "reranker",
        "description": "a test's cross-encoder: the sum of the passage's word weights",
        "max_tokens": 64,
        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                   "token_type_ids": "token_type_ids"},
        "output": "logits",
        "model": "model.onnx",
        "tokenizer": "tokenizer.json",
        "files": [file("model.onnx", &model), file("tokenizer.json", &tokenizer)],
    });
    let path = dir.join(format!("{ID}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    path
}

/// The score the model gives a passage (what a test expects).
pub fn expected_score(passage: &str) -> f32 {
    passage
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|word| {
            let word = word.to_lowercase();
            WORDS.iter().find(|(w, _)| *w == word).map(|(_, s)| *s)
        })
        .sum()
}

/// A WordLevel tokenizer (lowercased, split on whitespace and punctuation)
/// that pairs texts as BERT does: `[CLS] A [SEP] B [SEP]`, B with type id 1.
fn tokenizer_json() -> serde_json::Value {
    let mut vocab = serde_json::Map::new();
    let words = SPECIAL.iter().copied().chain(WORDS.iter().map(|(w, _)| *w));
    for (id, word) in words.enumerate() {
        vocab.insert(word.to_string(), json!(id));
    }
    let special = |id: usize| {
        json!({"id": id, "content": SPECIAL[id], "single_word": false, "lstrip": false,
               "rstrip": false, "normalized": false, "special": true})
    };
    let token =
        |name: &str, type_id: u32| json!({"SpecialToken": {"id": name, "type_id": type_id}});
    let sequence = |name: &str, type_id: u32| json!({"Sequence": {"id": name, "type_id": type_id}});
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": (0..SPECIAL.len()).map(special).collect::<Vec<_>>(),
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [token("[CLS]", 0), sequence("A", 0), token("[SEP]", 0)],
            "pair": [token("[CLS]", 0), sequence("A", 0), token("[SEP]", 0),
                     sequence("B", 1), token("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]},
            },
        },
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
    })
}

/// The ONNX model (IR 6, opset 11):
/// `logits = ReduceSum(Gather(weights, input_ids) × type_ids × mask, axis 1)`.
fn model_bytes() -> Vec<u8> {
    let weights: Vec<u8> = SPECIAL
        .iter()
        .map(|_| 0f32)
        .chain(WORDS.iter().map(|(_, w)| *w))
        .flat_map(f32::to_le_bytes)
        .collect();
    let initializer = Proto::new()
        .int(1, (SPECIAL.len() + WORDS.len()) as u64) // dims
        .int(2, TENSOR_FLOAT) // data_type
        .string(8, "weights") // name
        .bytes(9, &weights); // raw_data
    let graph = Proto::new()
        .message(
            1,
            node("Gather", &["weights", "input_ids"], "token_weights", []),
        )
        .message(
            1,
            node(
                "Cast",
                &["token_type_ids"],
                "in_passage",
                [int_attribute("to", TENSOR_FLOAT)],
            ),
        )
        .message(
            1,
            node(
                "Cast",
                &["attention_mask"],
                "in_pair",
                [int_attribute("to", TENSOR_FLOAT)],
            ),
        )
        .message(
            1,
            node(
                "Mul",
                &["token_weights", "in_passage"],
                "passage_weights",
                [],
            ),
        )
        .message(
            1,
            node("Mul", &["passage_weights", "in_pair"], "counted", []),
        )
        .message(
            1,
            node(
                "ReduceSum",
                &["counted"],
                "logits",
                [ints_attribute("axes", &[1]), int_attribute("keepdims", 1)],
            ),
        )
        .string(2, "tiny-reranker")
        .message(5, initializer)
        .message(
            11,
            value_info("input_ids", TENSOR_INT64, &["batch", "tokens"]),
        )
        .message(
            11,
            value_info("attention_mask", TENSOR_INT64, &["batch", "tokens"]),
        )
        .message(
            11,
            value_info("token_type_ids", TENSOR_INT64, &["batch", "tokens"]),
        )
        .message(12, value_info("logits", TENSOR_FLOAT, &["batch", "1"]));
    let opset = Proto::new().string(1, "").int(2, 11);
    Proto::new()
        .int(1, 6) // ir_version
        .string(2, "kts-tests") // producer_name
        .message(7, graph)
        .message(8, opset)
        .0
}

const TENSOR_FLOAT: u64 = 1;
const TENSOR_INT64: u64 = 7;
const ATTRIBUTE_INT: u64 = 2;
const ATTRIBUTE_INTS: u64 = 7;

fn node<const N: usize>(op: &str, inputs: &[&str], output: &str, attributes: [Proto; N]) -> Proto {
    let mut node = Proto::new();
    for input in inputs {
        node = node.string(1, input);
    }
    node = node.string(2, output).string(3, output).string(4, op);
    for attribute in attributes {
        node = node.message(5, attribute);
    }
    node
}

fn int_attribute(name: &str, value: u64) -> Proto {
    Proto::new()
        .string(1, name)
        .int(3, value)
        .int(20, ATTRIBUTE_INT)
}

fn ints_attribute(name: &str, values: &[u64]) -> Proto {
    let attribute = Proto::new().string(1, name);
    values
        .iter()
        .fold(attribute, |a, &v| a.int(8, v))
        .int(20, ATTRIBUTE_INTS)
}

/// A tensor's name, element type and shape (a number is a fixed dimension,
/// anything else a named one).
fn value_info(name: &str, element: u64, dims: &[&str]) -> Proto {
    let shape = dims.iter().fold(Proto::new(), |shape, dim| {
        let dim = match dim.parse::<u64>() {
            Ok(size) => Proto::new().int(1, size),
            Err(_) => Proto::new().string(2, dim),
        };
        shape.message(1, dim)
    });
    let tensor = Proto::new().int(1, element).message(2, shape);
    Proto::new()
        .string(1, name)
        .message(2, Proto::new().message(1, tensor))
}

/// A protobuf message being written: fields in the order they are added.
struct Proto(Vec<u8>);

impl Proto {
    fn new() -> Proto {
        Proto(Vec::new())
    }

    fn varint(mut self, mut value: u64) -> Proto {
        while value >= 0x80 {
            self.0.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
        self
    }

    fn int(self, field: u64, value: u64) -> Proto {
        self.varint(field << 3).varint(value)
    }

    fn bytes(self, field: u64, bytes: &[u8]) -> Proto {
        let mut proto = self.varint((field << 3) | 2).varint(bytes.len() as u64);
        proto.0.extend_from_slice(bytes);
        proto
    }

    fn string(self, field: u64, text: &str) -> Proto {
        self.bytes(field, text.as_bytes())
    }

    fn message(self, field: u64, message: Proto) -> Proto {
        self.bytes(field, &message.0)
    }
}
