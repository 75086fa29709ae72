#!/usr/bin/env python3
"""Make one model file from another with pinned ONNX tools.

    derive.py RECIPE SOURCE TARGET [NAME=VALUE ...]

models/fetch runs this in a venv holding exactly the tools a manifest pins
(its file's "derive": {"tools": [...]}) and checks the result against the
manifest's SHA-256, so the file is the same on every machine.

Recipes:
  bert-int8  (num_heads=N hidden_size=N float_layers=N)
      1. ONNX Runtime's constant folding: weights stored as int8 and
         dequantised by the graph (Cast, Mul) become plain float weights;
      2. ONNX Runtime's transformer optimizer for BERT: LayerNorm and GELU
         fusions (SkipLayerNormalization, BiasGelu);
      3. dynamic int8 quantisation of every MatMul with a constant weight,
         per output channel: the model then multiplies in int8 (MatMulInteger),
         with the activations quantised per run; except in the first
         float_layers layers (six weight products each), which stay float:
         the first layer is where int8 costs the vectors most.
"""

import logging
import os
import sys
import tempfile


PRODUCTS_PER_LAYER = 6  # query, key, value, attention output, two feed-forward


def bert_int8(source, target, num_heads, hidden_size, float_layers="0"):
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    with tempfile.TemporaryDirectory(prefix="kts-derive-") as work:
        folded = os.path.join(work, "folded.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        fused = os.path.join(work, "fused.onnx")
        optimize_model(folded, model_type="bert", num_heads=int(num_heads),
                       hidden_size=int(hidden_size), opt_level=0).save_model_to_file(fused)
        graph = onnx.load(fused).graph
        constants = {tensor.name for tensor in graph.initializer}
        products = [node.name for node in graph.node
                    if node.op_type == "MatMul" and any(i in constants for i in node.input)]
        if len(products) % PRODUCTS_PER_LAYER:
            raise SystemExit(f"derive: {len(products)} weight products: not BERT layers")
        kept_float = products[: PRODUCTS_PER_LAYER * int(float_layers)]
        quantize_dynamic(fused, target, per_channel=True, weight_type=QuantType.QInt8,
                         nodes_to_exclude=kept_float)


RECIPES = {"bert-int8": bert_int8}


def main(argv):
    if len(argv) < 3 or argv[0] not in RECIPES:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    recipe, source, target, *settings = argv
    try:
        options = dict(setting.split("=", 1) for setting in settings)
    except ValueError:
        print(f"derive: settings are NAME=VALUE, got {settings}", file=sys.stderr)
        return 2
    # The quantiser logs advice about calibration data, which dynamic quantisation has no use for.
    logging.getLogger().setLevel(logging.ERROR)
    RECIPES[recipe](source, target, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
