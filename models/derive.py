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
         fusions (BiasGelu), but not SkipLayerNormalization, whose CPU kernel
         is several times slower than the Add and LayerNormalization it
         replaces;
      3. the NaN guards of torch's attention export go (Where(IsNaN(p), 0, p)
         after each Softmax: a NaN needs a sequence with no token at all,
         and every sequence has [CLS]);
      4. each weight product's input is multiplied by the attention mask, so
         that padded positions are zeros and do not widen the range the
         product's input is quantised over: a text's vector does not depend
         on how much padding its batch adds;
      5. dynamic int8 quantisation of every MatMul with a constant weight,
         per output channel: the model then multiplies in int8 (MatMulInteger),
         with the activations quantised per run; except in the first
         float_layers layers (six weight products each), which stay float:
         the first layer is where int8 costs the vectors most, the more so
         on CPUs without VNNI, whose int8 products saturate.
"""

import logging
import os
import sys
import tempfile


PRODUCTS_PER_LAYER = 6  # query, key, value, attention output, two feed-forward
MASK_INPUT = "attention_mask"


def weight_products(graph):
    constants = {tensor.name for tensor in graph.initializer}
    return [node for node in graph.node
            if node.op_type == "MatMul" and any(i in constants for i in node.input)]


def drop_nan_guards(graph):
    producers = {output: node for node in graph.node for output in node.output}
    renamed = {}
    for node in list(graph.node):
        if node.op_type != "Where":
            continue
        condition = producers.get(node.input[0])
        if condition is not None and condition.op_type == "IsNaN" and condition.input[0] == node.input[2]:
            renamed[node.output[0]] = node.input[2]
            graph.node.remove(node)
            graph.node.remove(condition)
    for node in graph.node:
        for at, name in enumerate(node.input):
            node.input[at] = renamed.get(name, name)
    return len(renamed)


def mask_product_inputs(graph, products):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    if MASK_INPUT not in {i.name for i in graph.input}:
        raise SystemExit(f"derive: the model has no input named {MASK_INPUT}")
    graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), "kts_last_axis"))
    graph.node.extend([
        helper.make_node("Cast", [MASK_INPUT], ["kts_mask_float"], to=TensorProto.FLOAT, name="kts_mask_cast"),
        helper.make_node("Unsqueeze", ["kts_mask_float", "kts_last_axis"], ["kts_mask"], name="kts_mask_unsqueeze"),
    ])
    masked = {}
    for node in products:
        activation = node.input[0]
        if activation not in masked:
            masked[activation] = f"{activation}_kts_masked"
            graph.node.append(helper.make_node("Mul", [activation, "kts_mask"], [masked[activation]],
                                               name=f"{activation}_kts_mask"))
        node.input[0] = masked[activation]


def bert_int8(source, target, num_heads, hidden_size, float_layers="0"):
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    with tempfile.TemporaryDirectory(prefix="kts-derive-") as work:
        folded = os.path.join(work, "folded.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        fusions = FusionOptions("bert")
        fusions.enable_skip_layer_norm = False
        model = optimize_model(folded, model_type="bert", num_heads=int(num_heads),
                               hidden_size=int(hidden_size), opt_level=0,
                               optimization_options=fusions)
        graph = model.model.graph
        if not drop_nan_guards(graph):
            raise SystemExit("derive: no attention NaN guard found: not the expected export")
        products = weight_products(graph)
        if len(products) % PRODUCTS_PER_LAYER:
            raise SystemExit(f"derive: {len(products)} weight products: not BERT layers")
        kept_float = [node.name for node in products[: PRODUCTS_PER_LAYER * int(float_layers)]]
        mask_product_inputs(graph, [node for node in products if node.name not in kept_float])
        model.topological_sort()
        prepared = os.path.join(work, "prepared.onnx")
        model.save_model_to_file(prepared)
        quantize_dynamic(prepared, target, per_channel=True, weight_type=QuantType.QInt8,
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
