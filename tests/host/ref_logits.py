"""Dumps reference logits for a llama2.c legacy (v0) checkpoint, computed by the
independent pure-Python model in MODELS_DIR/tools/l2c_ref.py (float64 maths).

Usage: python3 ref_logits.py MODELS_DIR MODEL.bin OUT.f32 TOKEN [TOKEN ...]
Runs the tokens at positions 0, 1, ... and writes vocab_size float32 logits per
position to OUT.f32, back to back."""
import array
import os
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: ref_logits.py MODELS_DIR MODEL.bin OUT.f32 TOKEN [TOKEN ...]")
    models_dir, model_path, out_path = sys.argv[1:4]
    tokens = [int(t) for t in sys.argv[4:]]
    sys.path.insert(0, os.path.join(models_dir, "tools"))
    import l2c_ref

    model = l2c_ref.Model(model_path)
    out = array.array("f")
    for pos, token in enumerate(tokens):
        out.extend(model.forward(token, pos))
    with open(out_path, "wb") as f:
        out.tofile(f)


if __name__ == "__main__":
    main()
